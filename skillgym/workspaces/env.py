"""The trial environment, built in one fixed order so the user's own settings never reach a trial.

Layers, each overriding the ones before it (``ENV_ORDER`` states the same for the README):

1. base: only PATH, LANG, LC_ALL, LC_CTYPE, TERM, TZ, SHELL, USER and LOGNAME from the parent
   environment, plus the provider's passthrough (the credentials and endpoints it asks for);
2. the workspace preset's env;
3. the lane: ``SKILLGYM_LANE``;
4. the condition's env;
5. the case's env;
6. harness variables, which always win: HOME, XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME,
   XDG_STATE_HOME and the provider's own home variables (``Provider.home_env``: CLAUDE_CONFIG_DIR for
   claude, CODEX_HOME for codex), all under the trial's private home, then TMPDIR (the trial's own temp
   folder, which is also its /tmp in a sandbox), TMUX_TMPDIR,
   SKILLGYM_WORKSPACE, SKILLGYM_OUTPUT_DIR, SKILLGYM_FIXTURES, SKILLGYM_FIXTURE_LOG_DIR and
   SKILLGYM_TRIAL_ID.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from .layout import TrialLayout

# Everything else in the parent environment (API keys, proxies, the user's CLAUDE_CONFIG_DIR, a TMUX
# pointing at their own session, ...) would make a trial depend on who ran it.
BASE_KEYS: Final = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "SHELL", "USER", "LOGNAME")

ENV_ORDER: Final = (
    "base: PATH, LANG, LC_ALL, LC_CTYPE, TERM, TZ, SHELL, USER, LOGNAME from the parent environment, "
    "plus the credentials and endpoints the provider passes through",
    "the workspace preset's env",
    "the lane: SKILLGYM_LANE",
    "the condition's env",
    "the case's env",
    "harness variables, which always win: HOME, XDG_*_HOME and the provider's own home variables "
    "(CLAUDE_CONFIG_DIR, CODEX_HOME, ...; under the trial's private home), TMPDIR (the trial's temp folder), "
    "TMUX_TMPDIR, SKILLGYM_WORKSPACE, "
    "SKILLGYM_OUTPUT_DIR, SKILLGYM_FIXTURES, SKILLGYM_FIXTURE_LOG_DIR, SKILLGYM_TRIAL_ID",
)
ENV_ORDER_TEXT: Final = "\n".join(f"{n}. {layer}" for n, layer in enumerate(ENV_ORDER, start=1))

# Directories under the trial home that the harness variables point at, created by materialize (with the
# provider's own ``home_env``) so that agent CLIs which refuse a missing config dir start cleanly.
HOME_DIRS: Final = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_CACHE_HOME": ".cache",
    "XDG_STATE_HOME": ".local/state",
}
HARNESS_KEYS: Final = (
    "HOME",
    *HOME_DIRS,
    "TMPDIR",
    "TMUX_TMPDIR",
    "SKILLGYM_WORKSPACE",
    "SKILLGYM_OUTPUT_DIR",
    "SKILLGYM_FIXTURES",
    "SKILLGYM_FIXTURE_LOG_DIR",
    "SKILLGYM_TRIAL_ID",
)
TRIAL_ID_VAR: Final = "SKILLGYM_TRIAL_ID"


def home_dirs(home_env: Mapping[str, str]) -> dict[str, str]:
    """Every home variable of a trial, generic and the provider's, as variable -> path under the home."""
    return {**HOME_DIRS, **home_env}


def harness_env(
    layout: TrialLayout, *, trial_id: str, suite_root: Path, home_env: Mapping[str, str] = {}
) -> dict[str, str]:
    """Layer 6 alone: the variables that make a trial hermetic and tell it where things are.

    ``home_env`` is the provider's own home variables (``Provider.home_env``).
    """
    home = layout.home
    return {
        "HOME": home,
        **{key: os.path.join(home, sub) if sub else home for key, sub in home_dirs(home_env).items()},
        "TMPDIR": layout.tmp,
        "TMUX_TMPDIR": layout.tmux_tmpdir,
        "SKILLGYM_WORKSPACE": layout.workspace,
        # Evidence files are searched for in the workspace, so that is where the agent is told to write.
        "SKILLGYM_OUTPUT_DIR": layout.workspace,
        "SKILLGYM_FIXTURES": os.path.join(os.path.abspath(suite_root), "fixtures"),
        "SKILLGYM_FIXTURE_LOG_DIR": layout.fixture_log_dir,
        TRIAL_ID_VAR: trial_id,
    }


def hermetic_env(
    layout: TrialLayout,
    *,
    trial_id: str,
    suite_root: Path,
    passthrough: Mapping[str, str],
    preset_env: Mapping[str, str],
    lane: str,
    condition_env: Mapping[str, str],
    case_env: Mapping[str, str],
    home_env: Mapping[str, str] = {},
    parent: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The whole environment of one trial, layered in ``ENV_ORDER`` (later layers win).

    ``parent`` defaults to this process's environment; only ``BASE_KEYS`` are taken from it.
    """
    source = os.environ if parent is None else parent
    env = {key: source[key] for key in BASE_KEYS if key in source}
    env.setdefault("PATH", os.defpath)
    env.update(passthrough)
    env.update(preset_env)
    env["SKILLGYM_LANE"] = lane
    env.update(condition_env)
    env.update(case_env)
    env.update(harness_env(layout, trial_id=trial_id, suite_root=suite_root, home_env=home_env))
    return env


def with_command_env(
    env: Mapping[str, str], command_env: Mapping[str, str], *, home_env: Mapping[str, str] = {}
) -> dict[str, str]:
    """``env`` with a command's own variables on top, except that the harness variables (the provider's
    ``home_env`` among them) still win."""
    merged = {**env, **command_env}
    for key in (*HARNESS_KEYS, *home_env):
        if key in env:
            merged[key] = env[key]
    return merged
