"""Prompt-lane grading: the response text judged for routing, expected patterns and the planned workflow."""

from __future__ import annotations

from typing import Final

from ..model import PromptCase
from ..results import CheckOutcome, Grade, ScoreItem
from ..trace import Trace
from .antipatterns import effective_rules, has_error, scan_text
from .context import GradeContext
from .patterns import LineIndex, find_first, find_forbidden, show_pattern
from .rules import anti_pattern_reasons, requirement_reasons
from .skills import select_skills, skill_loaded
from .workflow import compliance, evaluate_workflow

__all__ = ("FORBIDDEN_PENALTY", "grade_prompt", "response_text")

COVERAGE_WEIGHT: Final = 0.4
SKILL_WEIGHT: Final = 0.4
WORKFLOW_WEIGHT: Final = 0.2
FORBIDDEN_PENALTY: Final = 0.1  # per non-negated occurrence of a case-level forbidden pattern


def response_text(trace: Trace) -> str:
    """The agent's answer: its final text, or its assistant messages joined when that is empty."""
    if trace.final_text.strip():
        return trace.final_text
    return "\n\n".join(m.text for m in trace.messages if m.role == "assistant")


def _skill_check(case: PromptCase, selected: tuple[str, ...]) -> CheckOutcome:
    chosen = ", ".join(repr(s) for s in selected) or "none"
    if case.expected_skill is None:
        ok = not selected
        message = (
            "no skill selected, as expected" if ok else f"expected no skill, but the agent selected {chosen}"
        )
    else:
        ok = case.expected_skill in selected
        verb = "selected" if ok else "was not selected"
        message = f"expected skill {case.expected_skill!r} {verb} (selected: {chosen})"
    return CheckOutcome(id="skill-selection", kind="skill", required=True, passed=ok, message=message)


def grade_prompt(case: PromptCase, trace: Trace, ctx: GradeContext) -> Grade:
    """Grade a prompt trial by the rule in ``PASS_RULES["prompt"]``; the score only ranks."""
    text = response_text(trace)
    index = LineIndex(text)
    candidates = (*ctx.skills, *(() if case.expected_skill is None else (case.expected_skill,)))
    selected = select_skills(trace, text, candidates)
    skill = _skill_check(case, selected)

    expected: list[CheckOutcome] = []
    for number, pattern in enumerate(case.expected_patterns, 1):
        found = find_first(pattern, text, index=index)
        where = (
            f"found {show_pattern(pattern)} at line {found.line}"
            if found is not None
            else f"the response never mentions {show_pattern(pattern)}"
        )
        expected.append(
            CheckOutcome(
                id=f"expected-{number}",
                kind="expected-pattern",
                required=False,
                passed=found is not None,
                message=where,
            )
        )
    forbidden: list[CheckOutcome] = []
    uses: list[str] = []
    for number, pattern in enumerate(case.forbidden_patterns, 1):
        occurrences = find_forbidden(pattern, text, index=index)
        counted = [m for m in occurrences if not m.negated]
        negated = len(occurrences) - len(counted)
        places = [f"line {m.line} ({m.text.strip()[:40]!r})" for m in counted]
        uses.extend(f"{show_pattern(pattern)} at {p}" for p in places)
        note = f"; {negated} negated mention(s) ignored" if negated else ""
        message = (
            f"uses {show_pattern(pattern)} at {', '.join(places)}"
            if counted
            else f"does not use {show_pattern(pattern)}"
        ) + note
        forbidden.append(
            CheckOutcome(
                id=f"forbidden-{number}",
                kind="forbidden-pattern",
                required=False,
                passed=not counted,
                message=message,
            )
        )

    workflow = evaluate_workflow(case.workflow, (text,), corpus="prose", gates=True)
    findings = scan_text(text, effective_rules(ctx.suite_rules, case.anti_patterns), negation=True)

    items: list[ScoreItem] = []
    if expected:
        held = sum(c.passed for c in expected)
        missing = [c.message for c in expected if not c.passed]
        items.append(
            ScoreItem(
                name="expected-pattern-coverage",
                score=COVERAGE_WEIGHT * held / len(expected),
                max_score=COVERAGE_WEIGHT,
                reason=f"{held}/{len(expected)} expected patterns found"
                + (f"; {'; '.join(missing)}" if missing else ""),
            )
        )
    items.append(
        ScoreItem(
            name="skill-selection",
            score=SKILL_WEIGHT * skill.passed,
            max_score=SKILL_WEIGHT,
            reason=skill.message,
        )
    )
    share = compliance(case.workflow, workflow)
    if share is not None:
        held_steps = sum(o.passed for o in workflow)
        items.append(
            ScoreItem(
                name="workflow-compliance",
                score=WORKFLOW_WEIGHT * share,
                max_score=WORKFLOW_WEIGHT,
                reason=f"{held_steps}/{len(workflow)} workflow steps hold (weighted {share:.2f})",
            )
        )
    # Items that do not apply are left out, so the score is the share of what does apply; the penalty
    # is then taken on that 0..1 scale and stated on the items' scale, so sum(score) / sum(max) holds.
    scale = sum(i.max_score for i in items)
    positive = sum(i.score for i in items) / scale
    penalty = min(FORBIDDEN_PENALTY * len(uses), positive)
    if case.forbidden_patterns:
        reason = f"{len(uses)} forbidden occurrence(s) x {FORBIDDEN_PENALTY}" + (
            f": {'; '.join(uses)}" if uses else ""
        )
        items.append(
            ScoreItem(
                name="forbidden-pattern-penalty",
                score=-(penalty * scale) if penalty else 0.0,
                max_score=0.0,
                reason=reason,
            )
        )
    score = max(0.0, positive - penalty)

    checks = (skill, *workflow, *expected, *forbidden)
    passed = skill.passed and all(o.passed for o in workflow if o.required) and not has_error(findings)
    reasons = () if passed else (*requirement_reasons(checks), *anti_pattern_reasons(findings))
    return Grade(
        passed=passed,
        score=score,
        items=tuple(items),
        checks=checks,
        findings=findings,
        reasons=tuple(reasons),
        selected_skills=selected,
        skill_loaded=skill_loaded(case.expected_skill, trace),
    )
