"""Workflow checks: patterns in prose or in the commands run, dependencies resolved, weighted compliance."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeAlias

from ..model import Pattern, WorkflowCheck
from ..results import CheckOutcome
from .patterns import LineIndex, PatternMatch, find_all, find_first, find_forbidden, show_pattern

__all__ = ("Corpus", "compliance", "evaluate_workflow", "failed_dependency_message")

Corpus: TypeAlias = Literal["prose", "commands"]


class _Source:
    """What checks search: one prose text (negation-aware), or each command the agent ran on its own."""

    def __init__(self, corpus: Corpus, texts: Sequence[str]) -> None:
        self.corpus = corpus
        self.texts = tuple(texts)
        self.indexes = tuple(LineIndex(text) for text in self.texts)

    def _where(self, position: int, match: PatternMatch) -> str:
        return f"command {position + 1}" if self.corpus == "commands" else f"line {match.line}"

    def first(self, pattern: Pattern) -> str | None:
        """Where ``pattern`` first occurs, or None."""
        for position, (text, index) in enumerate(zip(self.texts, self.indexes, strict=True)):
            found = find_first(pattern, text, index=index)
            if found is not None:
                return self._where(position, found)
        return None

    def uses(self, pattern: Pattern) -> list[str]:
        """Uses of a forbidden pattern: in prose those outside a negation, in commands every one."""
        places: list[str] = []
        for position, (text, index) in enumerate(zip(self.texts, self.indexes, strict=True)):
            if self.corpus == "prose":
                found = [m for m in find_forbidden(pattern, text, index=index) if not m.negated]
            else:
                found = find_all(pattern, text, index=index)
            places.extend(f"{self._where(position, m)} ({m.text.strip()[:60]!r})" for m in found)
        return places


def _own(check: WorkflowCheck, source: _Source) -> tuple[bool, list[str], list[str]]:
    """Whether the check's own patterns hold, what is wrong, and where the required ones were found."""
    problems: list[str] = []
    evidence: list[str] = []
    for pattern in check.required_patterns:
        place = source.first(pattern)
        if place is None:
            where = "no command run matches" if source.corpus == "commands" else "the response never mentions"
            problems.append(f"{where} {show_pattern(pattern)}")
        else:
            evidence.append(f"{show_pattern(pattern)} at {place}")
    for pattern in check.forbidden_patterns:
        places = source.uses(pattern)
        if places:
            problems.append(f"uses forbidden {show_pattern(pattern)} at {', '.join(places[:3])}")
    return not problems, problems, evidence


def _cycles(by_id: dict[str, WorkflowCheck]) -> dict[str, str]:
    """Each check on a dependency cycle, with the cycle spelled out ("a -> b -> a")."""
    found: dict[str, str] = {}
    done: set[str] = set()

    def visit(check_id: str, stack: list[str]) -> None:
        if check_id in stack:
            loop = [*stack[stack.index(check_id) :], check_id]
            for member in loop[:-1]:
                found.setdefault(member, " -> ".join(loop))
            return
        if check_id in done or check_id not in by_id:
            return
        stack.append(check_id)
        for dependency in by_id[check_id].depends_on:
            visit(dependency, stack)
        stack.pop()
        done.add(check_id)

    for check_id in by_id:
        visit(check_id, [])
    return found


def failed_dependency_message(check_id: str) -> str:
    return f"depends on {check_id!r}, which failed"


def evaluate_workflow(
    checks: Sequence[WorkflowCheck], texts: Sequence[str], *, corpus: Corpus, gates: bool
) -> tuple[CheckOutcome, ...]:
    """One outcome per check, in order. ``gates`` says whether required checks decide the pass here.

    A check holds when its required patterns are found, no forbidden pattern is used, and every check
    it depends on holds. An unknown dependency or a cycle fails the check with a message; it never raises.
    """
    source = _Source(corpus, texts)
    by_id = {check.id: check for check in checks}
    cycles = _cycles(by_id)
    resolved: dict[str, tuple[bool, str]] = {}

    def resolve(check_id: str) -> tuple[bool, str]:
        if check_id in resolved:
            return resolved[check_id]
        ok, messages, evidence = _own(by_id[check_id], source)
        if check_id in cycles:
            messages.append(f"is part of a dependency cycle: {cycles[check_id]}")
            ok = False
        else:
            for dependency in by_id[check_id].depends_on:
                if dependency not in by_id:
                    known = ", ".join(repr(k) for k in by_id)
                    messages.append(f"depends on unknown step {dependency!r} (steps: {known})")
                    ok = False
                elif not resolve(dependency)[0]:
                    messages.append(failed_dependency_message(dependency))
                    ok = False
        found = ("found " + ", ".join(evidence)) if evidence else "holds"
        message = "; ".join(messages) if messages else found
        resolved[check_id] = (ok, message)
        return ok, message

    outcomes = []
    for check in checks:
        ok, message = resolve(check.id)
        outcomes.append(
            CheckOutcome(
                id=check.id, kind="workflow", required=gates and check.required, passed=ok, message=message
            )
        )
    return tuple(outcomes)


def compliance(checks: Sequence[WorkflowCheck], outcomes: Sequence[CheckOutcome]) -> float | None:
    """Weighted share of checks that hold, over all checks (required and optional); None if none weigh."""
    total = sum(check.weight for check in checks)
    if not checks or total <= 0:
        return None
    held = {o.id for o in outcomes if o.passed}
    return sum(check.weight for check in checks if check.id in held) / total
