"""Finding the processes a trial left behind by the tag in their environment, one /proc scan for many."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import anyio.to_thread

from ..process import processes_by_env
from .env import TRIAL_ID_VAR


async def tagged_pids(trial_id: str) -> list[int]:
    """PIDs of this user's running processes started with ``SKILLGYM_TRIAL_ID=<trial_id>``.

    Reading every process's environment costs a few hundred system calls, so trials that ask at about the
    same time (a wave of agents ending together) share one scan; the answer is never older than the ask.
    """
    try:
        sweeper = _SWEEPER.get()
    except LookupError:
        sweeper = _Sweeper()
        _SWEEPER.set(sweeper)
    return await sweeper.pids(trial_id)


class _Sweep:
    """One pass over /proc on behalf of every trial that asked before it began."""

    def __init__(self) -> None:
        self.wanted: set[str] = set()
        self.found: dict[str, list[int]] | None = None
        self.done = anyio.Event()


class _Sweeper:
    """One per event loop. A trial joins the next scan that has not started yet, so what it gets is never
    older than its request; one scan runs at a time, started by one of its waiters."""

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
