"""Finding the processes a trial left behind by the tag in their environment, one /proc scan for many."""

from __future__ import annotations

from typing import Final

import anyio
import anyio.lowlevel
import anyio.to_thread

from ..process import processes_by_env
from .env import TRIAL_ID_VAR

_GATHER_S: Final = 0.01


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
    older than its request; one scan runs at a time, started by one of its waiters.

    Once trials have been seen ending together (a scan served several, or some asked while it ran), every
    later scan waits ``_GATHER_S`` before it starts, so the rest of a wave joins it: at 50 agents that took
    the scans from about 2 trials each to about 6, and a tenth to a fifth off skillgym's CPU. Trials that
    never overlap (concurrency 1) never wait.
    """

    def __init__(self) -> None:
        self._open: _Sweep | None = None
        self._running: _Sweep | None = None
        self._together = False

    async def pids(self, trial_id: str) -> list[int]:
        sweep = self._open or _Sweep()
        self._open = sweep
        sweep.wanted.add(trial_id)
        while sweep.found is None:
            if self._running is not None:
                await self._running.done.wait()
                continue
            self._running = sweep
            sweep.done = anyio.Event()
            try:
                if self._together:
                    await anyio.sleep(_GATHER_S)  # still open: others ending now join this scan
                self._open = None
                sweep.found = await anyio.to_thread.run_sync(
                    processes_by_env, TRIAL_ID_VAR, frozenset(sweep.wanted)
                )
            finally:
                self._open = None if self._open is sweep else self._open
                self._running = None
                self._together = self._together or len(sweep.wanted) > 1 or self._open is not None
                sweep.done.set()
        return [pid for pid in sweep.found.get(trial_id, []) if pid > 1]


_SWEEPER: anyio.lowlevel.RunVar[_Sweeper] = anyio.lowlevel.RunVar("skillgym_sweeper")
