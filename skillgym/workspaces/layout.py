"""Where one trial's files live: workspace, private home, temp and tmux dirs, fixture logs, streams."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Final

from ..model import Data

# Unix socket paths are limited to 108 bytes on Linux and 104 on macOS, counting the final NUL. tmux puts
# its socket at $TMUX_TMPDIR/tmux-<uid>/default, so a deep run directory makes every tmux command fail
# with "socket path too long"; such trials get a short socket dir under the system temp dir instead.
# Room is left for socket names an agent picks with `tmux -L <name>`, not just "default".
_SOCKET_PATH_MAX: Final = 103
_SOCKET_NAME_ROOM: Final = 24
_SOCKET_DIR: Final = f"/tmux-{os.getuid() if hasattr(os, 'getuid') else 0}/"
SHORT_TMUX_PREFIX: Final = "skillgym-tmux-"


class TrialLayout(Data, frozen=True, kw_only=True):
    """Absolute paths of one trial's files; ``layout_for`` builds it, nothing is created until used."""

    trial_dir: str
    workspace: str
    home: str
    tmux_tmpdir: str
    fixture_log_dir: str
    tmp: str  # the trial's TMPDIR, and its /tmp in a sandbox
    stdout: str
    stderr: str

    @property
    def bootstrap_log(self) -> str:
        """Where bootstrap and setup commands append their output."""
        return os.path.join(self.trial_dir, "bootstrap.log")


def layout_for(trial_dir: str | Path) -> TrialLayout:
    """The layout of the trial whose directory is ``trial_dir`` (made absolute; nothing is created).

    ``tmux_tmpdir`` is ``<trial_dir>/tmux`` unless the tmux socket path under it would be too long for a
    Unix socket; then it is ``<tmp>/skillgym-tmux-<hash of trial_dir>``, the same for the same trial dir.
    """
    root = os.path.abspath(trial_dir)
    return TrialLayout(
        trial_dir=root,
        workspace=os.path.join(root, "workspace"),
        home=os.path.join(root, "home"),
        tmux_tmpdir=_tmux_tmpdir(root),
        fixture_log_dir=os.path.join(root, "fixture-logs"),
        tmp=os.path.join(root, "tmp"),
        stdout=os.path.join(root, "stdout.txt"),
        stderr=os.path.join(root, "stderr.txt"),
    )


def _tmux_tmpdir(trial_dir: str) -> str:
    preferred = os.path.join(trial_dir, "tmux")
    if len(os.fsencode(preferred + _SOCKET_DIR)) + _SOCKET_NAME_ROOM <= _SOCKET_PATH_MAX:
        return preferred
    digest = hashlib.sha256(os.fsencode(trial_dir)).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), SHORT_TMUX_PREFIX + digest)
