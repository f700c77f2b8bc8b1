"""Tests for skillgym.grading.skills: trace evidence first, then mentions outside a rejection."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillgym.grading.skills import evidence_skills, mentioned_skills, select_skills
from skillgym.trace import SkillEvidence, Trace

SKILLS = ("tmux-tui", "tui-qa")


def test_plain_mention_selects() -> None:
    assert mentioned_skills("I'll use the tmux-tui skill to drive it.", SKILLS) == ("tmux-tui",)


def test_mentions_are_word_bounded_and_case_insensitive() -> None:
    assert mentioned_skills("Use TMUX-TUI.", SKILLS) == ("tmux-tui",)
    assert mentioned_skills("the tmux-tui-extra skill", SKILLS) == ()
    assert mentioned_skills("see skills/tmux-tui/SKILL.md", SKILLS) == ("tmux-tui",)


@pytest.mark.parametrize(
    "text",
    [
        "Instead of tui-qa, use tmux-tui.",
        "I would not use tui-qa here; tmux-tui does it.",
        "Avoid tui-qa. Use tmux-tui.",
        "We can rule out tui-qa. tmux-tui fits.",
        "tui-qa is not the right skill; tmux-tui is.",
        "`tui-qa` isn't the right skill. tmux-tui is.",
        "tui-qa is the wrong skill, so tmux-tui.",
        "tui-qa would be too specialized; tmux-tui.",
        "The tui-qa skill is not needed. Use tmux-tui.",
        "tui-qa isn't needed. tmux-tui it is.",
        "tui-qa is not relevant. tmux-tui it is.",
    ],
)
def test_rejected_mentions_do_not_select(text: str) -> None:
    assert mentioned_skills(text, SKILLS) == ("tmux-tui",)


def test_any_unrejected_mention_selects_and_order_is_first_mention() -> None:
    text = "tui-qa is not needed at first. Use tmux-tui, then tui-qa for the report."
    assert mentioned_skills(text, SKILLS) == ("tmux-tui", "tui-qa")


def test_nothing_mentioned_selects_nothing() -> None:
    assert (
        select_skills(Trace(final_text="Just rename the function."), "Just rename the function.", SKILLS)
        == ()
    )


def test_trace_evidence_counts_first() -> None:
    trace = Trace(
        final_text="tui-qa would help",
        skills=(
            SkillEvidence(skill="tmux-tui", source="skill-tool", confidence="high"),
            SkillEvidence(skill="tui-qa", source="init-listed", confidence="low"),
        ),
    )
    assert select_skills(trace, trace.final_text, SKILLS) == ("tmux-tui",)


def test_low_confidence_evidence_falls_back_to_text() -> None:
    trace = Trace(skills=(SkillEvidence(skill="tui-qa", source="init-listed", confidence="low"),))
    assert select_skills(trace, "use tmux-tui", SKILLS) == ("tmux-tui",)


def test_evidence_for_skills_outside_the_suite_is_ignored() -> None:
    trace = Trace(skills=(SkillEvidence(skill="pdf", source="skill-tool", confidence="high"),))
    assert evidence_skills(trace, SKILLS) == ()
    assert evidence_skills(trace, ()) == ("pdf",)


_FILLER = st.text(alphabet=st.sampled_from("abcdefg ,"), max_size=30)


@given(before=_FILLER, phrase=st.sampled_from(["instead of", "never use", "avoid", "rather than", "not"]))
def test_a_negated_mention_never_selects(before: str, phrase: str) -> None:
    assert mentioned_skills(f"{before}. {phrase} tui-qa.", SKILLS) == ()
