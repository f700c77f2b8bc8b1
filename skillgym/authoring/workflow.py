"""Workflow sugar: ``with c.workflow() as w:`` chains the tmux steps an agent should take, in order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

import msgspec

from ..errors import DefinitionError
from ..model import WorkflowCheck
from . import vocabulary
from .checks import (
    PatternLike,
    check_id,
    check_int,
    check_number,
    check_patterns,
    check_text,
    stamp,
    to_patterns,
)
from .graph import free_step_id
from .recorder import Block


class WorkflowBuilder(Block):
    """Records a chain of steps found in the commands the agent ran; each depends on the one before.

    Every step is scored but not required: in the execution and dogfood lanes the pass rule is the
    verifiers'. Default patterns come from ``skillgym.authoring.vocabulary.WORKFLOW``; every method takes
    ``patterns=`` to replace them and ``id=`` to name the step (default: an id unique within the case).
    """

    def __init__(self, *, case_id: str, opened_at: str, step_ids: set[str]) -> None:
        super().__init__(case_id=case_id, opened_at=opened_at)
        self._step_ids = step_ids  # the case's, shared with its other steps: default ids skip every one
        self._checks: list[WorkflowCheck] = []

    def create_session(self, *, id: str | None = None, patterns: Sequence[PatternLike] | None = None) -> Self:
        """The agent starts the program in a new tmux session."""
        return self._sugar("create_session", self._use("create_session"), id, patterns)

    def input(
        self, text: str, *, id: str | None = None, patterns: Sequence[PatternLike] | None = None
    ) -> Self:
        """The agent types ``text`` into the program (``tmux send-keys``)."""
        at = self._use("input")
        text = check_text(text, what="w.input() text", case_id=self._case_id, origin=at)
        return self._sugar("input", at, id, patterns, text=text)

    def run(
        self, command: str, *, id: str | None = None, patterns: Sequence[PatternLike] | None = None
    ) -> Self:
        """The agent runs ``command`` in the session's shell (``tmux send-keys``)."""
        at = self._use("run")
        command = check_text(command, what="w.run() command", case_id=self._case_id, origin=at)
        return self._sugar("run", at, id, patterns, text=command)

    def wait_for(
        self, text: str, *, id: str | None = None, patterns: Sequence[PatternLike] | None = None
    ) -> Self:
        """The agent waits on observable output showing ``text`` (a capture-pane poll or a wait helper)."""
        at = self._use("wait_for")
        text = check_text(text, what="w.wait_for() text", case_id=self._case_id, origin=at)
        return self._sugar("wait_for", at, id, patterns, text=text)

    def snapshot(self, *, id: str | None = None, patterns: Sequence[PatternLike] | None = None) -> Self:
        """The agent captures the pane's text."""
        return self._sugar("snapshot", self._use("snapshot"), id, patterns)

    def screenshot(self, *, id: str | None = None, patterns: Sequence[PatternLike] | None = None) -> Self:
        """The agent saves an image (or HTML rendering) of the screen."""
        return self._sugar("screenshot", self._use("screenshot"), id, patterns)

    def resize(
        self, cols: int, rows: int, *, id: str | None = None, patterns: Sequence[PatternLike] | None = None
    ) -> Self:
        """The agent resizes the terminal to ``cols`` x ``rows``."""
        at = self._use("resize")
        cols = check_int(cols, what="w.resize() cols", case_id=self._case_id, origin=at)
        rows = check_int(rows, what="w.resize() rows", case_id=self._case_id, origin=at)
        return self._sugar("resize", at, id, patterns, cols=cols, rows=rows)

    def destroy(self, *, id: str | None = None, patterns: Sequence[PatternLike] | None = None) -> Self:
        """The agent ends the session (kill-session or kill-server)."""
        return self._sugar("destroy", self._use("destroy"), id, patterns)

    def raw(self, check: WorkflowCheck) -> Self:
        """Append a WorkflowCheck as given (origin filled in when empty); the chain continues from it."""
        at = self._use("raw")
        self._append(raw_check(check, case_id=self._case_id, origin=at))
        return self

    def _sugar(
        self,
        name: str,
        at: str,
        step_id: str | None,
        override: Sequence[PatternLike] | None,
        **values: object,
    ) -> Self:
        phrase = vocabulary.WORKFLOW[name]
        if step_id is None:
            step_id = free_step_id(phrase.id, self._step_ids)
        else:
            step_id = check_id(step_id, what="step id", case_id=self._case_id, origin=at)
        if override is None:
            description, found = vocabulary.filled(phrase, values)
        else:
            description = vocabulary.describe(phrase, **values)
            if isinstance(override, str):
                override = (override,)
            found = to_patterns(
                override,
                call=f"w.{name}(patterns=...)",
                where=f"in step {step_id!r}",
                case_id=self._case_id,
                origin=at,
            )
        checks = self._checks
        checks.append(
            WorkflowCheck(
                id=step_id,
                description=description,
                required=False,
                required_patterns=found,
                depends_on=(checks[-1].id,) if checks else (),
                origin=at,
            )
        )
        self._step_ids.add(step_id)
        return self

    def _append(self, check: WorkflowCheck) -> None:
        self._checks.append(check)
        self._step_ids.add(check.id)

    def _compile(self) -> tuple[WorkflowCheck, ...]:
        """The recorded chain (none when the block raised); an empty block is an error at its line."""
        if self._discarded:
            return ()
        if not self._checks:
            raise DefinitionError(
                "the workflow block records no step; add steps such as "
                "w.create_session().input('...').wait_for('...') or remove the block",
                case_id=self._case_id,
                origin=self._opened_at,
            )
        return tuple(self._checks)


def raw_check(check: object, *, case_id: str, origin: str) -> WorkflowCheck:
    """Check a hand-built WorkflowCheck and give it the caller's origin when it has none."""
    if not isinstance(check, WorkflowCheck):
        raise DefinitionError(
            f"expected a skillgym.model.WorkflowCheck, got {type(check).__name__}; build one with "
            "WorkflowCheck(id=..., required_patterns=(Pattern(regex=...),))",
            case_id=case_id,
            origin=origin,
        )
    check_id(check.id, what="step id", case_id=case_id, origin=origin)
    where = f"in step {check.id!r}"
    required = check_patterns(check.required_patterns, where=where, case_id=case_id, origin=origin)
    forbidden = check_patterns(check.forbidden_patterns, where=where, case_id=case_id, origin=origin)
    check_number(
        check.weight, what=f"weight of step {check.id!r}", case_id=case_id, origin=origin, inclusive=True
    )
    if required != check.required_patterns or forbidden != check.forbidden_patterns:
        # A str (or compiled re.Pattern) given for a Pattern becomes one: the grader reads .regex and .flags.
        check = msgspec.structs.replace(check, required_patterns=required, forbidden_patterns=forbidden)
    return stamp(check, origin)
