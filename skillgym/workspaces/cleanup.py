"""After a trial: stop its tmux servers and tagged processes, then remove its workspace and home."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Final

import anyio.to_thread

from ..model import Data
from ..process import ProcessStartError, command_line, kill_pids, left_running, run_process
from .env import TRIAL_ID_VAR
from .layout import TrialLayout
from .removal import discard
from .sweep import tagged_pids

_TMUX_KILL_TIMEOUT_S: Final = 5.0


class CleanupReport(Data, frozen=True, kw_only=True):
    """What cleanup did; ``survivors`` and ``problems`` are worth a warning, never a failed trial."""

    tmux_sockets: tuple[str, ...] = ()
    killed: tuple[int, ...] = ()
    survivors: tuple[int, ...] = ()
    problems: tuple[str, ...] = ()


async def cleanup(layout: TrialLayout, *, trial_id: str, keep_workspace: bool) -> CleanupReport:
    """Stop everything the trial left running, then remove its files, without raising for what is gone.

    1. name every process of this user started with ``SKILLGYM_TRIAL_ID=<trial_id>`` (daemons that
       left the trial's process group with setsid or double forks, tmux servers) in ``problems``;
    2. ``tmux -S <socket> kill-server`` for every socket under the trial's ``tmux_tmpdir``;
    3. SIGTERM, then SIGKILL, what of step 1 is still running;
    4. remove the tmux socket dir, and the workspace, home and temp folder unless ``keep_workspace``
       (inside a run's ``background_removal`` block this is handed to its worker and done by the end of
       the block).

    Runs to the end even when the caller is cancelled, so a trial interrupted by Ctrl-C still leaves no
    process behind. Returns what it did; anything it could not undo is in ``survivors`` and ``problems``.
    """
    with anyio.CancelScope(shield=True):
        problems: list[str] = []
        # A trial that never started tmux has an empty (or no) socket dir: no thread to find that out.
        tmux_dir = Path(layout.tmux_tmpdir)
        sockets = await anyio.to_thread.run_sync(_tmux_sockets, tmux_dir) if _has_entries(tmux_dir) else []
        # Named before anything is stopped, tmux servers among them: each is worth one warning.
        pids = await tagged_pids(trial_id)
        commands = [(pid, command_line(pid)) for pid in pids]
        problems += [
            left_running(command, pid, by="cleanup") for pid, command in commands if command is not None
        ]
        for socket in sockets:
            await _kill_tmux_server(socket)  # tmux ends its panes' programs itself; the rest come next
        survivors = await kill_pids(pids) if pids else []
        if survivors:
            problems.append(
                f"processes {survivors} tagged {TRIAL_ID_VAR}={trial_id} survived SIGKILL "
                "(uninterruptible sleep?); check them with `ps`"
            )
        doomed = [layout.tmux_tmpdir]
        if not keep_workspace:
            doomed += [layout.workspace, layout.home, layout.tmp]
        problems += await discard(doomed)
    return CleanupReport(
        tmux_sockets=tuple(str(s) for s in sockets),
        killed=tuple(pids),
        survivors=tuple(survivors),
        problems=tuple(problems),
    )


def _has_entries(folder: Path) -> bool:
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is not None
    except OSError:  # missing, or unreadable: either way no socket can be found in it
        return False


def _tmux_sockets(tmpdir: Path) -> list[Path]:
    # tmux puts its sockets in $TMUX_TMPDIR/tmux-<uid>/<name>; any depth is searched in case of -S paths.
    found: list[Path] = []
    for folder, _dirs, files in os.walk(tmpdir):
        for name in files:
            path = Path(folder, name)
            with contextlib.suppress(OSError):
                if stat.S_ISSOCK(path.lstat().st_mode):
                    found.append(path)
    return sorted(found)


async def _kill_tmux_server(socket: Path) -> None:
    # A stale socket (server already gone) or a missing tmux binary is nothing left to stop; a server
    # that ignores kill-server is still tagged with the trial id and goes in the process sweep.
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    with contextlib.suppress(ProcessStartError):
        await run_process(
            ["tmux", "-S", str(socket), "kill-server"], cwd=Path("/"), env=env, timeout_s=_TMUX_KILL_TIMEOUT_S
        )
