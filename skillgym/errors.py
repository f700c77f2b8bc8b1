"""The one error hierarchy: every failure a user can cause says what, where and how to fix it."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What ``skillgym`` exits with; the README's exit-code table states the same."""

    OK = 0  # every gate passed; without gates, every trial passed
    FAILED = 1  # a gate failed (or was not shown); without gates, a trial failed by the agent's doing
    USAGE = 2  # bad input or configuration: nothing ran, or nothing more was written
    # Errors that are not the agent's (an outage, the environment, the grader, the budget) left a gate or the
    # verdicts without enough data: neither a pass nor a fail; run again (or --resume with a larger budget).
    INCONCLUSIVE = 3
    INTERRUPTED = 130  # Ctrl-C or SIGTERM: finished trials and the report are kept


class SkillgymError(Exception):
    """Base of every error skillgym raises on purpose; carries the process exit code."""

    exit_code: int = ExitCode.USAGE


class DefinitionError(SkillgymError, ValueError):
    """A case, condition, preset or suite definition is invalid.

    The message names the case, the problem and the fix; ``origin`` is the ``file:line`` of the
    offending step, when known.
    """

    def __init__(self, message: str, *, case_id: str | None = None, origin: str | None = None) -> None:
        self.case_id = case_id
        self.origin = origin
        self.problem = message
        where = f"{origin}: " if origin else ""
        who = f"case {case_id!r}: " if case_id else ""
        super().__init__(f"{where}{who}{message}")


class RecorderClosedError(SkillgymError, RuntimeError):
    """A builder was used after its ``with`` block closed."""


class CollectionError(SkillgymError):
    """One or more suite files failed to load; ``errors`` lists each with its file and line."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        if len(errors) == 1:  # one problem, one line: it already names its file, line and fix
            super().__init__(errors[0])
            return
        lines = "\n".join(f"  {e}" for e in errors)
        super().__init__(f"the suite did not load ({len(errors)} problems):\n{lines}")


class UsageError(SkillgymError, ValueError):
    """Bad command-line input: unknown lane, condition, case id, flag or value."""
