"""The execution lane builder: the agent really performs a task; required verifiers judge the effects."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from ..model import Budget, Command, ExecutionCase, Lane
from .checks import check_argv, check_env, check_id, check_int, check_number, check_relative_path, check_text
from .effects import EffectsBuilder
from .graph import check_unique


class ExecutionBuilder(EffectsBuilder):
    """Records an execution case: task, fixture, setup commands, workflow steps, verifiers and artifacts."""

    lane: ClassVar[Lane] = "execution"
    default_budget: ClassVar[Budget] = Budget(timeout_s=120.0, max_turns=16)

    def __init__(self, case_id: str, opened_at: str) -> None:
        super().__init__(case_id, opened_at)
        self._setup: list[tuple[Command, str]] = []
        self._reference_steps: int | None = None

    def setup(
        self,
        argv: Sequence[str],
        *,
        id: str | None = None,
        description: str = "",
        timeout_s: float = 60,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """A command the harness runs in the workspace before the agent starts (an argv list, no shell)."""
        at = self._use("setup")
        args = check_argv(argv, what="c.setup() argv", case_id=self._case_id, origin=at)
        if id is None:
            taken = {c.id for c, _ in self._setup}
            ident = next(f"setup-{n}" for n in range(1, len(taken) + 2) if f"setup-{n}" not in taken)
        else:
            ident = check_id(id, what="setup command id", case_id=self._case_id, origin=at)
        command = Command(
            argv=args,
            id=ident,
            description=check_text(
                description, what="description", case_id=self._case_id, origin=at, allow_empty=True
            ),
            cwd=None
            if cwd is None
            else check_relative_path(cwd, what="cwd", case_id=self._case_id, origin=at),
            env=check_env(env, what="env", case_id=self._case_id, origin=at),
            timeout_s=check_number(timeout_s, what="timeout_s", case_id=self._case_id, origin=at),
        )
        self._setup.append((command, at))

    def reference_steps(self, n: int) -> None:
        """How many commands a skilled agent needs: the yardstick for the efficiency score."""
        at = self._use("reference_steps")
        self._reference_steps = self._once(
            "c.reference_steps()", check_int(n, what="reference_steps", case_id=self._case_id, origin=at), at
        )

    def _missing(self) -> list[str]:
        missing = super()._missing()
        required_judge = any(j.required for j in self._assertion_judged())
        if not required_judge and not any(v.required for v in self._recorded_verifiers()):
            missing.append(
                "a required verifier (execution cases pass on checked effects only: add "
                "`with c.assertions() as a:` with a check such as a.file_exists(...) or a.judge(...))"
            )
        return missing

    def _build(self) -> ExecutionCase:
        if self._setup:
            check_unique(
                [(c.id, at) for c, at in self._setup], what="setup command id", case_id=self._case_id
            )
        return ExecutionCase(
            id=self._case_id,
            category=self._category,
            budget=self._budget,
            task=self._task,
            fixture=self._fixture,
            setup=tuple([c for c, _ in self._setup]),
            verifiers=self._compiled_verifiers(),
            artifacts=tuple(self._artifacts),
            reference_steps=self._reference_steps,
        )
