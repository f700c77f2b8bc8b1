"""The strict pass rule of each lane, stated once, and the human lines that say which part broke."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..model import Lane
from ..results import CheckKind, CheckOutcome, Finding

__all__ = ("PASS_RULES", "anti_pattern_reasons", "requirement_reasons")

# Judged checks are folded in after the lane grader (skillgym.judge.grading), the same way in every lane.
_JUDGED: Final = (
    " Every required judged check (s.judge, a.judge, a rubric with pass_at) passes as well; a judge that "
    "cannot decide makes the trial a grader-error, never a pass."
)
# The README states these sentences verbatim; the lane graders implement exactly them.
PASS_RULES: Final[dict[Lane, str]] = {
    "prompt": (
        "A prompt trial passes when the expected skill is selected (for expected_skill None: no skill is "
        "selected), every required workflow step holds (its required patterns present, its forbidden "
        "patterns absent outside a negation), and no error-level anti-pattern fires." + _JUDGED
    ),
    "execution": (
        "An execution trial passes when the provider succeeded, every required verifier holds, every "
        "required artifact is present, and no error-level anti-pattern fires in the commands run." + _JUDGED
    ),
    "dogfood": (
        "A dogfood trial passes when the provider succeeded, every required report requirement and "
        "required artifact (including the proof-bundle kinds) is present, every required verifier holds, "
        "and the score is at least the case's pass_threshold." + _JUDGED
    ),
}

_BROKEN: Final[dict[CheckKind, str]] = {
    "workflow": "required workflow step {id!r} failed: {message}",
    "verifier": "required verifier {id!r} failed: {message}",
    "artifact": "required artifact {id!r} is missing: {message}",
    "report": "required report requirement {id!r} is not met: {message}",
    "bundle": "required proof-bundle {id!r} is missing: {message}",
    "skill": "{message}",
    "expected-pattern": "required pattern {id!r} is missing: {message}",
    "forbidden-pattern": "forbidden pattern {id!r} is used: {message}",
    "judge": "required judged check {id!r} failed: {message}",
}


def requirement_reasons(checks: Iterable[CheckOutcome]) -> list[str]:
    """One line per required check that failed, in order."""
    return [_BROKEN[c.kind].format(id=c.id, message=c.message) for c in checks if c.required and not c.passed]


def anti_pattern_reasons(findings: Iterable[Finding]) -> list[str]:
    """One line per error-level finding that gates (not negated)."""
    return [
        f"error-level anti-pattern {f.rule_id!r} fired at line {f.line}: {f.matched_text!r} ({f.message})"
        for f in findings
        if f.severity == "error" and not f.negated
    ]
