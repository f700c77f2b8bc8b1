"""What a grader may look at besides the case and the trace: the trial's places, env and suite data."""

from __future__ import annotations

import msgspec

from ..model import AntiPatternRule, Data
from ..sandboxes.base import UNSANDBOXED, TrialSandbox

__all__ = ("GradeContext",)


class GradeContext(Data, frozen=True, kw_only=True):
    """The trial around a trace; every path is absolute.

    - ``provider_ok``: the provider returned normally (no crash, timeout or CLI error).
    - ``workspace``: the trial's workspace; verifier paths are relative to it and may not leave it.
    - ``trial_dir``: the trial's directory (results, logs, agent home).
    - ``fixture_log_dir``: where fixtures write ``<fixture>.jsonl`` ground-truth logs.
    - ``tmux_tmpdir``: the trial's ``TMUX_TMPDIR``; a tmux server the agent started has its socket under
      ``<tmux_tmpdir>/tmux-<uid>/``.
    - ``env``: the trial's whole environment, given to command verifiers.
    - ``skills``: names of the suite's skills, the candidates for skill selection.
    - ``suite_rules``: suite-level anti-pattern rules (replace a default with the same id, else extend).
    - ``agent_started_at``: when the agent started (epoch seconds). Artifact searches ignore files last
      written before it, so a template's ``NOTES.md`` is not evidence the agent left. None: no filter.
    - ``suite_root``: the suite folder; custom verifier modules are imported from there first.
    - ``sandbox``: the trial's sandbox; a verifier that runs a program runs it with ``sandbox.run``.
    """

    provider_ok: bool
    workspace: str
    trial_dir: str
    fixture_log_dir: str
    tmux_tmpdir: str
    env: dict[str, str] = msgspec.field(default_factory=dict)
    skills: tuple[str, ...] = ()
    suite_rules: tuple[AntiPatternRule, ...] = ()
    agent_started_at: float | None = None
    suite_root: str = ""
    sandbox: TrialSandbox = UNSANDBOXED
