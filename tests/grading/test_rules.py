"""Tests for skillgym.grading.rules and the package surface: the pass rules as stated, and dispatch."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import skillgym.grading as grading
from skillgym.grading import PASS_RULES, GradeContext, grade
from skillgym.grading.rules import anti_pattern_reasons, requirement_reasons
from skillgym.model import LANES, Budget, DogfoodCase, ExecutionCase, PromptCase
from skillgym.results import CheckOutcome, Finding
from skillgym.trace import Trace

JUDGED = (
    "Every required judged check (s.judge, a.judge, a rubric with pass_at) passes as well; a judge that",
    "cannot decide makes the trial a grader-error, never a pass.",
)


def test_one_rule_per_lane_in_the_stated_words() -> None:
    assert tuple(PASS_RULES) == LANES
    assert PASS_RULES["prompt"] == " ".join(
        (
            "A prompt trial passes when the expected skill is selected (for expected_skill None: no skill is",
            "selected), every required workflow step holds (its required patterns present, its forbidden",
            "patterns absent outside a negation), and no error-level anti-pattern fires.",
            *JUDGED,
        )
    )
    assert PASS_RULES["execution"] == " ".join(
        (
            "An execution trial passes when the provider succeeded, every required verifier holds, every",
            "required artifact is present, and no error-level anti-pattern fires in the commands run.",
            *JUDGED,
        )
    )
    assert PASS_RULES["dogfood"] == " ".join(
        (
            "A dogfood trial passes when the provider succeeded, every required report requirement and",
            "required artifact (including the proof-bundle kinds) is present, every required verifier holds,",
            "and the score is at least the case's pass_threshold.",
            *JUDGED,
        )
    )


def test_reasons_name_each_broken_requirement_once() -> None:
    checks = [
        CheckOutcome(id="file-contains-1", kind="verifier", required=True, passed=False, message="no file"),
        CheckOutcome(id="opt", kind="verifier", required=False, passed=False, message="ignored"),
        CheckOutcome(id="ok", kind="verifier", required=True, passed=True, message="fine"),
    ]
    assert requirement_reasons(checks) == ["required verifier 'file-contains-1' failed: no file"]
    findings = [
        Finding(rule_id="blind-sleep", severity="error", message="m", matched_text="sleep 1", line=2),
        Finding(
            rule_id="blind-sleep", severity="info", message="m", matched_text="sleep", line=3, negated=True
        ),
        Finding(rule_id="user-tmux-server", severity="warning", message="m", matched_text="tmux", line=4),
    ]
    assert anti_pattern_reasons(findings) == [
        "error-level anti-pattern 'blind-sleep' fired at line 2: 'sleep 1' (m)"
    ]


def test_public_surface() -> None:
    assert {"grade", "GradeContext", "DEFAULT_RULES", "PASS_RULES"} <= set(grading.__all__)
    assert all(hasattr(grading, name) for name in grading.__all__)


@pytest.mark.anyio
async def test_grade_dispatches_on_the_lane(make_ctx: Callable[..., GradeContext]) -> None:
    ctx = make_ctx()
    budget = Budget(timeout_s=10)
    prompt = PromptCase(id="p", category="c", prompt="hi", expected_skill=None, budget=budget)
    execution = ExecutionCase(id="e", category="c", task="t", budget=budget)
    dogfood = DogfoodCase(id="d", category="c", task="t", budget=budget)
    assert [i.name for i in (await grade(prompt, Trace(), ctx)).items] == ["skill-selection"]
    assert [i.name for i in (await grade(execution, Trace(), ctx)).items] == [
        "provider",
        "anti-pattern-avoidance",
    ]
    assert [i.name for i in (await grade(dogfood, Trace(), ctx)).items] == [
        "bundle-completeness",
        "evidence-quality",
        "reproducibility",
    ]
