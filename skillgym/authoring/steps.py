"""Workflow steps: ``with c.step(id) as s:`` records one WorkflowCheck the agent is expected to take."""

from __future__ import annotations

from typing import Self

import msgspec

from ..errors import DefinitionError
from ..model import JudgedCheck, Pattern, WorkflowCheck
from .checks import PatternLike, check_ids, check_number, check_text, refuse_contradiction, to_patterns
from .graph import free_step_id
from .recorder import Block


class StepBuilder(Block):
    """Records one step: the patterns it must and must not mention, its dependencies and its weight."""

    def __init__(
        self,
        *,
        case_id: str,
        opened_at: str,
        step_id: str,
        description: str,
        required: bool,
        weight: float,
        depends_on: tuple[str, ...],
    ) -> None:
        super().__init__(case_id=case_id, opened_at=opened_at)
        self._id = step_id
        self._description = description
        self._required = required
        self._weight = weight
        self._depends_on = list(depends_on)
        self._required_patterns: list[tuple[Pattern, str]] = []
        self._forbidden_patterns: list[tuple[Pattern, str]] = []
        self._judged: list[JudgedCheck] = []
        self._where = f"in step {step_id!r}"

    @property
    def id(self) -> str:
        """The step id other steps name in ``after`` / ``depends_on``."""
        return self._id

    def _label(self) -> str:
        return f"StepBuilder {self._id!r}"

    def must_mention(self, *patterns: PatternLike) -> Self:
        """Each pattern must be found for the step to hold (a str is a case-insensitive regex)."""
        at = self._use("must_mention")
        found = to_patterns(
            patterns, call="s.must_mention()", where=self._where, case_id=self._case_id, origin=at
        )
        refuse_contradiction(
            found, self._forbidden_patterns, subject=f"step {self._id!r}", case_id=self._case_id, origin=at
        )
        self._required_patterns.extend([(p, at) for p in found])
        return self

    def must_not_mention(self, *patterns: PatternLike) -> Self:
        """No pattern may be found outside a negation ("instead of sleep" is not a use of sleep)."""
        at = self._use("must_not_mention")
        found = to_patterns(
            patterns, call="s.must_not_mention()", where=self._where, case_id=self._case_id, origin=at
        )
        refuse_contradiction(
            found, self._required_patterns, subject=f"step {self._id!r}", case_id=self._case_id, origin=at
        )
        self._forbidden_patterns.extend([(p, at) for p in found])
        return self

    def judge(self, expectation: str, *, required: bool = True) -> Self:
        """An LLM judge must find ``expectation`` (plain language) met by the answer, with quoted evidence.

        The check is graded by the run's ``--judge``; it is required unless ``required=False`` or the
        step is optional, and a judge that cannot decide makes it a grader-error, never a pass.
        """
        at = self._use("judge")
        text = check_text(
            expectation, what=f"s.judge() expectation {self._where}", case_id=self._case_id, origin=at
        )
        ident = free_step_id(f"{self._id}-judge", {j.id for j in self._judged})
        self._judged.append(
            JudgedCheck(id=ident, expectation=text, required=bool(required), step=self._id, origin=at)
        )
        return self

    def after(self, *step_ids: str) -> Self:
        """This step counts only once the named steps hold (adds to ``depends_on``)."""
        at = self._use("after")
        if not step_ids:
            raise DefinitionError(
                f"s.after() needs at least one step id {self._where}", case_id=self._case_id, origin=at
            )
        for step_id in check_ids(step_ids, what="step id", case_id=self._case_id, origin=at):
            if step_id not in self._depends_on:
                self._depends_on.append(step_id)
        return self

    def optional(self) -> Self:
        """The step adds to the score but does not decide pass or fail."""
        self._use("optional")
        self._required = False
        return self

    def weight(self, w: float) -> Self:
        """The step's share of the workflow score relative to the others (default 1.0)."""
        at = self._use("weight")
        self._weight = check_number(
            w, what=f"weight of step {self._id!r}", case_id=self._case_id, origin=at, inclusive=True
        )
        return self

    def _judged_checks(self) -> tuple[JudgedCheck, ...]:
        """The step's judged checks (none when its block raised); an optional step's never gate."""
        if self._discarded:
            return ()
        if self._required:
            return tuple(self._judged)
        return tuple(msgspec.structs.replace(j, required=False) for j in self._judged)

    def _compile(self) -> tuple[WorkflowCheck, ...]:
        """The compiled check (none when the step's block raised, or when only a judge grades it)."""
        if self._discarded:
            return ()
        if not self._required_patterns and not self._forbidden_patterns:
            if self._judged:
                return ()
            raise DefinitionError(
                f"step {self._id!r} checks nothing; add s.must_mention(...), s.must_not_mention(...) or "
                "s.judge(...) inside its block",
                case_id=self._case_id,
                origin=self._opened_at,
            )
        return (
            WorkflowCheck(
                id=self._id,
                description=self._description,
                required=self._required,
                required_patterns=tuple([p for p, _ in self._required_patterns]),
                forbidden_patterns=tuple([p for p, _ in self._forbidden_patterns]),
                depends_on=tuple(self._depends_on),
                weight=self._weight,
                origin=self._opened_at,
            ),
        )
