"""Tests for the prompt lane: routing, expected patterns, steps, anti-patterns, score and the pass rule."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import pytest

from skillgym.grading import GradeContext, grade
from skillgym.grading.prompt import grade_prompt, response_text
from skillgym.model import AntiPatternRule, Budget, Pattern, PromptCase, WorkflowCheck
from skillgym.results import Grade
from skillgym.trace import Message, SkillEvidence, Trace

MakeCtx = Callable[..., GradeContext]

WAIT_FOR_OUTPUT = PromptCase(
    id="wait-for-output",
    category="trigger",
    prompt="I need to wait until my server prints 'Listening on port 3000' before running tests",
    expected_skill="tmux-tui",
    expected_patterns=(Pattern(regex="capture-pane"), Pattern(regex="Listening on port 3000")),
    workflow=(
        WorkflowCheck(
            id="observe-readiness",
            required_patterns=(Pattern(regex="wait"), Pattern(regex="Listening on port 3000")),
            forbidden_patterns=(Pattern(regex=r"\bsleep\b"),),
        ),
    ),
    budget=Budget(timeout_s=30),
)
GOOD = (
    "I'll use the tmux-tui skill: start the server in a session on a private socket, then wait until\n"
    "capture-pane shows 'Listening on port 3000' instead of a blind sleep, and run the tests."
)


def graded(case: PromptCase, text: str, ctx: GradeContext) -> Grade:
    return grade_prompt(case, Trace(final_text=text), ctx)


def test_a_good_answer_passes_with_full_score(make_ctx: MakeCtx) -> None:
    result = graded(WAIT_FOR_OUTPUT, GOOD, make_ctx())
    assert result.passed
    assert result.score == pytest.approx(1.0)
    assert result.selected_skills == ("tmux-tui",)
    assert result.reasons == ()
    assert [i.name for i in result.items] == [
        "expected-pattern-coverage",
        "skill-selection",
        "workflow-compliance",
    ]


def test_score_is_the_share_of_item_maxima(make_ctx: MakeCtx) -> None:
    result = graded(WAIT_FOR_OUTPUT, "Use tmux-tui and wait.", make_ctx())
    total = sum(i.score for i in result.items) / sum(i.max_score for i in result.items)
    assert result.score == pytest.approx(total)
    assert result.score == pytest.approx(0.4)  # skill only: no expected pattern, the step fails


def test_wrong_skill_fails_with_a_reason(make_ctx: MakeCtx) -> None:
    text = GOOD.replace("tmux-tui", "tui-qa")
    result = graded(WAIT_FOR_OUTPUT, text, make_ctx())
    assert not result.passed
    assert result.reasons == ("expected skill 'tmux-tui' was not selected (selected: 'tui-qa')",)


def test_a_blind_sleep_command_fails_the_trial(make_ctx: MakeCtx) -> None:
    case = PromptCase(
        id="p", category="c", prompt="p", expected_skill="tmux-tui", budget=Budget(timeout_s=30)
    )
    result = graded(case, "Use tmux-tui:\n\n```sh\nsleep 5\n```", make_ctx())
    assert not result.passed
    assert result.score == pytest.approx(1.0)  # a perfect score still fails the strict rule
    assert [f.rule_id for f in result.findings] == ["blind-sleep"]
    assert result.reasons[0].startswith("error-level anti-pattern 'blind-sleep' fired at line 4: 'sleep 5'")


def test_instead_of_sleep_is_not_a_use_of_sleep(make_ctx: MakeCtx) -> None:
    text = GOOD + "\nNever use `sleep 5` here."
    result = graded(WAIT_FOR_OUTPUT, text, make_ctx())
    assert result.passed
    assert [(f.rule_id, f.severity, f.negated) for f in result.findings] == [("blind-sleep", "info", True)]


def test_a_required_step_that_fails_fails_the_trial_despite_a_high_score(make_ctx: MakeCtx) -> None:
    text = GOOD + "\nIf that is flaky, sleep 10 seconds first."
    result = graded(WAIT_FOR_OUTPUT, text, make_ctx())
    assert result.score >= 0.8
    assert not result.passed
    assert result.reasons == (
        "required workflow step 'observe-readiness' failed: uses forbidden /\\bsleep\\b/ at line 3 ('sleep')",
    )


def test_optional_steps_score_but_do_not_gate(make_ctx: MakeCtx) -> None:
    case = PromptCase(
        id="p",
        category="c",
        prompt="p",
        expected_skill="tmux-tui",
        workflow=(
            WorkflowCheck(id="cleanup", required=False, required_patterns=(Pattern(regex="kill-session"),)),
        ),
        budget=Budget(timeout_s=30),
    )
    result = graded(case, "tmux-tui", make_ctx())
    assert result.passed
    assert result.score == pytest.approx(0.4 / 0.6)


NO_SKILL = PromptCase(
    id="plain-file-edit",
    category="should-not-trigger",
    prompt="Rename parse_args in cli.py",
    expected_skill=None,
    forbidden_patterns=(Pattern(regex=r"\btmux\b"),),
    budget=Budget(timeout_s=30),
)


def test_expected_none_passes_when_no_skill_is_selected(make_ctx: MakeCtx) -> None:
    result = graded(NO_SKILL, "I'll edit cli.py; the tui-qa skill is not needed.", make_ctx())
    assert result.passed
    assert result.selected_skills == ()
    assert result.score == pytest.approx(1.0)


def test_expected_none_fails_when_a_skill_is_selected(make_ctx: MakeCtx) -> None:
    result = graded(NO_SKILL, "I'll use tmux-tui to edit cli.py.", make_ctx())
    assert not result.passed
    assert result.reasons == ("expected no skill, but the agent selected 'tmux-tui'",)


def test_forbidden_penalty_per_occurrence_outside_a_negation(make_ctx: MakeCtx) -> None:
    text = "Edit cli.py with sed.\nOpen tmux? No.\nRun it in tmux.\nDo this without tmux."
    result = graded(NO_SKILL, text, make_ctx())
    penalty = next(i for i in result.items if i.name == "forbidden-pattern-penalty")
    assert result.score == pytest.approx(0.8)
    assert penalty.score == pytest.approx(-0.2 * 0.4)
    assert "2 forbidden occurrence(s)" in penalty.reason
    forbidden = next(c for c in result.checks if c.kind == "forbidden-pattern")
    assert "1 negated mention(s) ignored" in forbidden.message
    assert result.passed  # a case-level forbidden pattern lowers the score; it is not in the pass rule


def test_penalty_floors_at_zero(make_ctx: MakeCtx) -> None:
    result = graded(NO_SKILL, "tmux " * 20, make_ctx())
    assert result.score == 0.0


def test_case_rules_extend_the_defaults(make_ctx: MakeCtx) -> None:
    rule = AntiPatternRule(id="no-kill-9", severity="error", patterns=(Pattern(regex=r"kill -9"),))
    case = PromptCase(
        id="p",
        category="c",
        prompt="p",
        expected_skill=None,
        anti_patterns=(rule,),
        budget=Budget(timeout_s=30),
    )
    result = graded(case, "Just kill -9 it.", make_ctx())
    assert not result.passed
    assert [f.rule_id for f in result.findings] == ["no-kill-9"]


def test_suite_rules_come_from_the_context(make_ctx: MakeCtx) -> None:
    quiet = AntiPatternRule(
        id="blind-sleep", severity="warning", patterns=(Pattern(regex=r"(?:^|;)\s*(sleep \d)"),)
    )
    case = PromptCase(id="p", category="c", prompt="p", expected_skill=None, budget=Budget(timeout_s=30))
    assert graded(case, "sleep 5", make_ctx(suite_rules=(quiet,))).passed
    assert not graded(case, "sleep 5", make_ctx()).passed


def test_empty_final_text_falls_back_to_assistant_messages() -> None:
    trace = Trace(
        messages=(
            Message(role="user", text="use tui-qa"),
            Message(role="assistant", text="I'll use tmux-tui."),
            Message(role="assistant", text="Then wait."),
        )
    )
    assert response_text(trace) == "I'll use tmux-tui.\n\nThen wait."


@pytest.mark.anyio
async def test_grade_dispatches_the_prompt_lane(make_ctx: MakeCtx) -> None:
    result = await grade(WAIT_FOR_OUTPUT, Trace(final_text=GOOD), make_ctx())
    assert result.passed


@pytest.mark.anyio
async def test_an_equal_trace_of_the_same_case_reuses_its_grade(make_ctx: MakeCtx) -> None:
    # Trials of one case whose agent answered the same text (every condition of a stub run) grade once;
    # the context's paths and environment are not read by the prompt grader, so they may differ.
    first = await grade(WAIT_FOR_OUTPUT, Trace(final_text=GOOD), make_ctx())
    again = await grade(WAIT_FOR_OUTPUT, Trace(final_text=GOOD), make_ctx(trial_dir="/elsewhere", env={}))
    assert again is first


@pytest.mark.anyio
async def test_a_reused_grade_needs_the_same_trace_case_skills_and_rules(make_ctx: MakeCtx) -> None:
    first = await grade(WAIT_FOR_OUTPUT, Trace(final_text=GOOD), make_ctx())
    other_text = await grade(WAIT_FOR_OUTPUT, Trace(final_text=GOOD + " sleep 5"), make_ctx())
    assert other_text != first and not other_text.passed
    same_id = msgspec.structs.replace(WAIT_FOR_OUTPUT, expected_skill="tui-qa")
    other_case = await grade(same_id, Trace(final_text=GOOD), make_ctx())
    assert not other_case.passed  # same id, another case: graded afresh
    other_skills = await grade(WAIT_FOR_OUTPUT, Trace(final_text=GOOD), make_ctx(skills=("tui-qa",)))
    assert other_skills is not first and other_skills == first  # tmux-tui is still the expected skill
    quiet = AntiPatternRule(id="blind-sleep", severity="warning", patterns=(Pattern(regex=r"^(sleep \d)"),))
    text = GOOD + "\nsleep 5"
    strict = await grade(WAIT_FOR_OUTPUT, Trace(final_text=text), make_ctx())
    lenient = await grade(WAIT_FOR_OUTPUT, Trace(final_text=text), make_ctx(suite_rules=(quiet,)))
    assert [f.severity for f in strict.findings if f.rule_id == "blind-sleep"] == ["error"]
    assert [f.severity for f in lenient.findings if f.rule_id == "blind-sleep"] == ["warning"]


def test_the_grade_records_whether_the_expected_skill_loaded(make_ctx: MakeCtx) -> None:
    # Selected by name, but never loaded: routing passes, activation does not.
    assert graded(WAIT_FOR_OUTPUT, GOOD, make_ctx()).skill_loaded is False
    trace = Trace(
        final_text=GOOD, skills=(SkillEvidence(skill="tmux-tui", source="skill-tool", confidence="high"),)
    )
    assert grade_prompt(WAIT_FOR_OUTPUT, trace, make_ctx()).skill_loaded is True
    no_skill = msgspec.structs.replace(WAIT_FOR_OUTPUT, expected_skill=None)
    assert grade_prompt(no_skill, trace, make_ctx()).skill_loaded is None
