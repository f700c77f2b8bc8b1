"""Removing a trial's files: whole trees, read-only dirs included, now or from a run's background worker."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread


@contextlib.asynccontextmanager
async def background_removal() -> AsyncIterator[list[str]]:
    """Within the block, ``discard`` hands paths to one background worker and returns at once.

    Removing a workspace and a hermetic home is a few dozen system calls; in a worker thread each of them
    waits for the interpreter lock while the event loop is busy, which put tens of milliseconds on every
    trial's path. The worker removes what it is given in batches; the block ends only once it has gone
    through everything handed over, even when the run was interrupted. What cannot be removed (a file
    owned by another user, say) is left in place, as cleanup always did: never a failed trial. The block
    yields the list of those problems, complete once it has ended, for the run to pass on.
    """
    remover = _Remover()
    token = _REMOVER.set(remover)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(remover.run)
            try:
                yield remover.problems
            finally:
                remover.close()
    finally:
        _REMOVER.reset(token)
        with anyio.CancelScope(shield=True):
            await remover.run()  # whatever a cancelled worker left in the queue


async def discard(paths: list[str]) -> list[str]:
    """Remove ``paths``: now, from a worker thread, or by the run's background worker inside
    ``background_removal``. Returns what could not be removed now (nothing when handed over)."""
    try:
        remover = _REMOVER.get()
    except LookupError:
        return await anyio.to_thread.run_sync(remove_all, paths)
    remover.add(paths)
    return []


class _Remover:
    def __init__(self) -> None:
        self._queue: list[str] = []
        self._wake = anyio.Event()
        self._closing = False
        self.problems: list[str] = []  # what could not be removed

    def add(self, paths: list[str]) -> None:
        self._queue += paths
        self._wake.set()

    def close(self) -> None:
        self._closing = True
        self._wake.set()

    async def run(self) -> None:
        while self._queue or not self._closing:
            if not self._queue:
                await self._wake.wait()
                self._wake = anyio.Event()
                continue
            batch, self._queue = self._queue, []
            with anyio.CancelScope(shield=True):  # what was handed over is removed, interrupted or not
                self.problems += await anyio.to_thread.run_sync(remove_all, batch)


_REMOVER: anyio.lowlevel.RunVar[_Remover] = anyio.lowlevel.RunVar("skillgym_remover")


def remove_all(paths: list[str]) -> list[str]:
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
    try:
        mode = os.lstat(path).st_mode  # one system call for the common answers: missing, or a file
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        path.unlink(missing_ok=True)
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
