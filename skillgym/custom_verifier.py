"""What a custom verifier (``a.custom("module:function")``) is called with: the trial, with ``Path``s."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importing skillgym (every case file does) must not import the grading engine
    from .grading.context import GradeContext
    from .sandboxes.base import TrialSandbox

__all__ = ("VerifierContext", "verifier_context")


@dataclass(frozen=True, kw_only=True, slots=True)
class VerifierContext:
    """The first argument of a custom verifier ``function(ctx, config)``; every path is absolute.

    A custom verifier is a function in a module the suite can import (a ``_checks.py`` beside the case
    files is found first). It is called as ``function(ctx, config)``, where ``config`` is a fresh ``dict``
    of the keyword arguments given to ``a.custom(...)``, and returns ``True``/``False``, a
    ``(passed, message)`` tuple or a ``CheckOutcome``. It may be ``async``; a synchronous one runs in a
    thread of its own. Raising, calling ``sys.exit`` or returning anything else is a ``grader-error``.

    Attributes:
        workspace: The trial's workspace, where the agent worked and left its files.
        trial_dir: The trial's folder in the run (``result.json``, ``transcript.md``, the agent's home).
        suite_root: The suite folder.
        fixture_log_dir: Where fixture apps write their ``<fixture>.jsonl`` ground-truth logs.
        tmux_tmpdir: The trial's ``TMUX_TMPDIR``; a tmux server the agent started has its socket under
            ``tmux_tmpdir / f"tmux-{os.getuid()}"``.
        env: The trial's whole environment (what the agent had).
        skills: The names of the suite's skills.
        provider_ok: Whether the agent ran to the end without a crash, timeout or CLI error.
        agent_started_at: When the agent started (epoch seconds), or None; a file last written before it
            is not the agent's work.
        sandbox: The trial's sandbox; start a program inside it with
            ``await ctx.sandbox.run(argv, cwd=ctx.workspace, env=ctx.env, timeout_s=10)``.
    """

    workspace: Path
    trial_dir: Path
    suite_root: Path
    fixture_log_dir: Path
    tmux_tmpdir: Path
    env: dict[str, str]
    skills: tuple[str, ...]
    provider_ok: bool
    agent_started_at: float | None
    sandbox: TrialSandbox


def verifier_context(ctx: GradeContext) -> VerifierContext:
    """The custom verifier's view of ``ctx``: a copy of its environment, its paths as ``Path``s."""
    return VerifierContext(
        workspace=Path(ctx.workspace),
        trial_dir=Path(ctx.trial_dir),
        suite_root=Path(ctx.suite_root),
        fixture_log_dir=Path(ctx.fixture_log_dir),
        tmux_tmpdir=Path(ctx.tmux_tmpdir),
        env=dict(ctx.env),
        skills=ctx.skills,
        provider_ok=ctx.provider_ok,
        agent_started_at=ctx.agent_started_at,
        sandbox=ctx.sandbox,
    )
