"""Tests for skillgym.grading.skills: trace evidence first, then mentions outside a rejection."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillgym.grading.negation import NEGATORS
from skillgym.grading.skills import evidence_skills, mentioned_skills, select_skills, skill_loaded
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
        # Any negation before the name, contractions included.
        "I won't use tui-qa; tmux-tui it is.",
        "I shouldn't load tui-qa. tmux-tui it is.",
        "We can't use tui-qa; tmux-tui it is.",
        "After ruling out tui-qa, I picked tmux-tui.",
        # Any verdict said of the skill right after its name.
        "tui-qa isn't the right tool; tmux-tui is.",
        "tui-qa is not a good fit. tmux-tui is.",
        "tui-qa doesn't apply. tmux-tui it is.",
        "tui-qa wouldn't help here; tmux-tui will.",
        "tui-qa is overkill; tmux-tui.",
        "tui-qa is out of scope; tmux-tui.",
        "tui-qa is no longer needed; tmux-tui is.",
        # A verdict introduced by a colon or a dash is said of the skill.
        "- tui-qa: not needed here.\n- tmux-tui: drives the program.",
        "**tui-qa** \u2014 not the right skill. tmux-tui it is.",
    ],
)
def test_rejected_mentions_do_not_select(text: str) -> None:
    assert mentioned_skills(text, SKILLS) == ("tmux-tui",)


@pytest.mark.parametrize(
    "text",
    [
        # A rejection of something else earlier in the sentence does not reach the name.
        "After ruling out GNU screen, I'll use tmux-tui.",
        "After ruling out GNU screen I'll use tmux-tui.",
        # A flip turns the negation into an instruction.
        "Don't forget to load tmux-tui.",
        "Do not skip tmux-tui here.",
        "I can't avoid tmux-tui for this.",
        # A verdict that is not said of the skill, or is itself negated.
        "The tmux-tui notes say recordings are not needed.",
        "tmux-tui isn't the wrong skill here.",
        "tmux-tui is the right skill, not tui-qa.",
        # A colon ends a negation; a negator before these words negates nothing.
        "There's no question: tmux-tui it is.",
        "There is no better skill than tmux-tui.",
        "No doubt tmux-tui is the one.",
        "tmux-tui is not just helpful, it is required.",
        "It can't hurt to load tmux-tui.",
        "The app did not start: tmux-tui will drive it.",
    ],
)
def test_mentions_that_only_look_rejected_select(text: str) -> None:
    assert mentioned_skills(text, SKILLS) == ("tmux-tui",)


@pytest.mark.parametrize("negator", NEGATORS)
def test_rejections_share_the_negation_vocabulary(negator: str) -> None:
    assert mentioned_skills(f"{negator} tui-qa", SKILLS) == ()
    assert mentioned_skills(f"{negator} forget tui-qa", SKILLS) == ("tui-qa",)


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


def test_skill_loaded_counts_load_evidence_of_the_expected_skill_only() -> None:
    loaded = Trace(skills=(SkillEvidence(skill="tmux-tui", source="read-skill-md", confidence="medium"),))
    listed = Trace(skills=(SkillEvidence(skill="tmux-tui", source="init-listed", confidence="low"),))
    named = Trace(final_text="I will use the tmux-tui skill.")
    assert skill_loaded("tmux-tui", loaded) is True
    assert skill_loaded("tui-qa", loaded) is False  # another skill fired, not the expected one
    assert skill_loaded("tmux-tui", listed) is False  # listed at startup is not loaded
    assert skill_loaded("tmux-tui", named) is False  # naming it is not loading it
    assert skill_loaded(None, loaded) is None  # a case that expects no skill has no activation


_FILLER = st.text(alphabet=st.sampled_from("abcdefg ,"), max_size=30)


@given(before=_FILLER, phrase=st.sampled_from(["instead of", "never use", "avoid", "rather than", "not"]))
def test_a_negated_mention_never_selects(before: str, phrase: str) -> None:
    assert mentioned_skills(f"{before}. {phrase} tui-qa.", SKILLS) == ()
