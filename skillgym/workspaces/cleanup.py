"""After a trial: stop its tmux servers and tagged processes, then remove its workspace and home."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import anyio.lowlevel
import anyio.to_thread

from ..model import Data
from ..process import ProcessStartError, kill_pids, processes_by_env, run_process
from .env import TRIAL_ID_VAR
from .layout import TrialLayout

_TMUX_KILL_TIMEOUT_S: Final = 5.0


class CleanupReport(Data, frozen=True, kw_only=True):
    """What cleanup did; ``survivors`` and ``problems`` are worth a warning, never a failed trial."""

    tmux_sockets: tuple[str, ...] = ()
    killed: tuple[int, ...] = ()
    survivors: tuple[int, ...] = ()
    problems: tuple[str, ...] = ()


async def cleanup(layout: TrialLayout, *, trial_id: str, keep_workspace: bool) -> CleanupReport:
    """Stop everything the trial left running, then remove its files, without raising for what is gone.

    1. ``tmux -S <socket> kill-server`` for every socket under the trial's ``tmux_tmpdir``;
    2. SIGTERM, then SIGKILL, every process of this user started with ``SKILLGYM_TRIAL_ID=<trial_id>``
       (daemons that left the trial's process group with setsid or double forks);
    3. remove the tmux socket dir, and the workspace and home unless ``keep_workspace``.

    Runs to the end even when the caller is cancelled, so a trial interrupted by Ctrl-C still leaves no
    process behind. Returns what it did; anything it could not undo is in ``survivors`` and ``problems``.
    """
    with anyio.CancelScope(shield=True):
        problems: list[str] = []
        # A trial that never started tmux has an empty (or no) socket dir: no thread to find that out.
        tmux_dir = Path(layout.tmux_tmpdir)
        sockets = await anyio.to_thread.run_sync(_tmux_sockets, tmux_dir) if _has_entries(tmux_dir) else []
        for socket in sockets:
            await _kill_tmux_server(socket)
        pids = await _sweeper().pids(trial_id)
        survivors = await kill_pids(pids) if pids else []
        if survivors:
            problems.append(
                f"processes {survivors} tagged {TRIAL_ID_VAR}={trial_id} survived SIGKILL "
                "(uninterruptible sleep?); check them with `ps`"
            )
        doomed = [layout.tmux_tmpdir]
        if not keep_workspace:
            doomed += [layout.workspace, layout.home]
        problems += await anyio.to_thread.run_sync(_remove_all, doomed)
    return CleanupReport(
        tmux_sockets=tuple(str(s) for s in sockets),
        killed=tuple(pids),
        survivors=tuple(survivors),
        problems=tuple(problems),
    )


class _Sweep:
    """One pass over /proc on behalf of every trial that asked before it began."""

    def __init__(self) -> None:
        self.wanted: set[str] = set()
        self.found: dict[str, list[int]] | None = None
        self.done = anyio.Event()


class _Sweeper:
    """Finds each trial's tagged processes, sharing scans between trials that end at the same time.

    Reading every process's environment costs a few hundred system calls; with dozens of agents at once
    that was one full scan per trial. A trial joins the next scan that has not started yet, so what it
    gets is never older than its request; one scan runs at a time, started by one of its waiters.
    """

    def __init__(self) -> None:
        self._open: _Sweep | None = None
        self._running: _Sweep | None = None

    async def pids(self, trial_id: str) -> list[int]:
        sweep = self._open or _Sweep()
        self._open = sweep
        sweep.wanted.add(trial_id)
        while sweep.found is None:
            if self._running is not None:
                await self._running.done.wait()
                continue
            self._running, self._open = sweep, None
            sweep.done = anyio.Event()
            try:
                sweep.found = await anyio.to_thread.run_sync(
                    processes_by_env, TRIAL_ID_VAR, frozenset(sweep.wanted)
                )
            finally:
                self._running = None
                sweep.done.set()
        return [pid for pid in sweep.found.get(trial_id, []) if pid > 1]


_SWEEPER: anyio.lowlevel.RunVar[_Sweeper] = anyio.lowlevel.RunVar("skillgym_sweeper")


def _sweeper() -> _Sweeper:
    try:
        return _SWEEPER.get()
    except LookupError:
        sweeper = _Sweeper()
        _SWEEPER.set(sweeper)
        return sweeper


def _remove_all(paths: list[str]) -> list[str]:
    """Remove each of ``paths`` (in one worker thread); what could not be removed, as problems."""
    problems = []
    for path in paths:
        try:
            remove_tree(Path(path))
        except OSError as exc:
            problems.append(f"could not remove {path}: {exc}; delete it by hand")
    return problems


def remove_tree(path: Path) -> None:
    """Delete ``path`` (a tree, a file or a symlink) if it exists, even with read-only dirs inside.

    Read-only directories are common in agent workspaces (Go's module cache, ``chmod -w`` in a test),
    so a first PermissionError makes the tree owner-writable and tries again. Raises OSError for what
    still cannot be removed.
    """
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
        return
    if not path.exists():
        return
    try:
        _rmtree(path)
    except PermissionError:
        _make_writable(path)
        _rmtree(path)


def _rmtree(path: Path) -> None:
    def ignore_gone(func: Callable[..., Any], failed: str, exc: BaseException) -> None:
        if not isinstance(exc, FileNotFoundError):
            raise exc

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=ignore_gone)
    else:
        shutil.rmtree(path, onerror=lambda func, failed, info: ignore_gone(func, failed, info[1]))


def _make_writable(path: Path) -> None:
    def allow(target: str) -> None:
        # Symlinks are skipped: chmod would follow them and change files outside the tree.
        if not os.path.islink(target):
            with contextlib.suppress(OSError):
                os.chmod(target, stat.S_IMODE(os.stat(target).st_mode) | stat.S_IRWXU)

    allow(str(path))
    for folder, dirs, _files in os.walk(path):
        for name in dirs:  # before os.walk descends, so unreadable dirs become listable
            allow(os.path.join(folder, name))


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
