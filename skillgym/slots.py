"""``--concurrency``: how many trials run their agent, and its grading, at the same time."""

from __future__ import annotations

import anyio


class AgentSlots:
    """A limiter for the agent phase of trials, which tells when every slot has been taken once.

    A runner sets up the next trials and cleans up finished ones outside the slots, while other trials'
    agents hold them; ``filled`` lets it hold that extra work back until the first agents have started.
    """

    def __init__(self, total: int) -> None:
        if total < 1:
            raise ValueError(f"concurrency must be at least 1, got {total}")
        self.total = total
        self._limiter = anyio.CapacityLimiter(total)
        self.filled = anyio.Event()  # set once every slot is taken, or by the runner when no trial is left

    async def take(self) -> float:
        """Wait for a slot, to be given back by the same task; the seconds waited, 0.0 if one was free.

        A free slot is taken without yielding to other tasks: a trial of an in-process provider costs no
        extra turn of the event loop.
        """
        waited = 0.0
        try:
            self._limiter.acquire_nowait()
        except anyio.WouldBlock:
            since = anyio.current_time()
            await self._limiter.acquire()
            waited = anyio.current_time() - since
        if not self._limiter.available_tokens and not self.filled.is_set():
            self.filled.set()
        return waited

    def give(self) -> None:
        self._limiter.release()
