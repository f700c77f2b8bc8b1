"""The event bus: one queue per subscriber, each subscriber a task in the run's task group.

Publishing never switches tasks (``post`` is synchronous), so a sequence of events posted together
reaches every subscriber in that order, with no lock; a subscriber task drains its queue in batches.
Backpressure is explicit: producers ``await bus.room()`` between units of work, which waits while any
subscriber is more than ``STREAM_BUFFER`` events behind, so a slow reporter slows the run instead of
buffering it. A subscriber with a ``flush()`` method has it awaited whenever its queue runs empty, before
the subscriber waits for more: a reporter may gather a batch's writes and make them there, in one go.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Protocol, TextIO

import anyio
from anyio.abc import TaskGroup

from .events import Event, event_type

# Small on purpose: a slow reporter applies backpressure to the runner instead of buffering a run. But
# not smaller than what one round of trial workers posts between two turns of the reporters (64 workers x
# 4 events, with room for more): below that, producers waited on every round even for reporters that
# kept up, and the waits and wake-ups cost a 20,000-trial stub run over a tenth of its CPU time.
STREAM_BUFFER = 512
# A subscriber with a ``tick()`` method is called this often while no event arrives (heartbeats).
TICK_S = 1.0


class Subscriber(Protocol):
    """A reporter: sees every event in order, then ``finish`` once the run is over."""

    name: str

    async def on_event(self, event: Event) -> None: ...

    async def finish(self) -> None: ...


class _Inbox:
    """One subscriber's pending events and the wake-ups between it and the producers."""

    __slots__ = ("drained", "events", "held", "idle", "wake")

    def __init__(self) -> None:
        self.events: deque[Event] = deque()
        self.wake = anyio.Event()  # set when events arrive or the bus closes
        self.drained = anyio.Event()  # set when the backlog falls to the limit
        # Plain flags, read for every event instead of asking the events: the subscriber waits on
        # ``wake`` (only then does a post need to set it), a producer waits on ``drained``.
        self.idle = False
        self.held = False


class EventBus:
    """Broadcasts each event to every live subscriber; a subscriber that raises is reported and dropped."""

    def __init__(self, tg: TaskGroup, *, errors: TextIO | None = None) -> None:
        self._tg = tg
        self._inboxes: dict[str, _Inbox] = {}
        self._errors = errors or sys.stderr
        self.failed: dict[str, str] = {}
        self._tickers: list[anyio.CancelScope] = []
        self._closed = False

    def subscribe(self, subscriber: Subscriber) -> None:
        inbox = _Inbox()
        self._inboxes[subscriber.name] = inbox
        self._tg.start_soon(self._pump, subscriber, inbox, name=f"reporter:{subscriber.name}")
        tick: Callable[[], Awaitable[None]] | None = getattr(subscriber, "tick", None)
        if tick is not None:
            self._tg.start_soon(self._tick, subscriber, tick, name=f"reporter-tick:{subscriber.name}")

    def post(self, event: Event) -> None:
        """Queue ``event`` for every live subscriber, without waiting (see ``room`` for backpressure)."""
        if self._closed:
            raise RuntimeError("event posted to a closed bus")
        for inbox in self._inboxes.values():
            inbox.events.append(event)
            if inbox.idle:
                inbox.idle = False
                inbox.wake.set()

    async def room(self) -> None:
        """Wait while any subscriber is more than ``STREAM_BUFFER`` events behind."""
        for inbox in list(self._inboxes.values()):
            while len(inbox.events) > STREAM_BUFFER:
                if not inbox.held:  # the first producer to wait makes the event; others share it
                    inbox.drained = anyio.Event()
                    inbox.held = True
                await inbox.drained.wait()

    async def publish(self, event: Event) -> None:
        """``post`` then ``room``: one event, with backpressure."""
        self.post(event)
        await self.room()

    async def close(self) -> None:
        """End of the run: each subscriber drains what it has, then finishes."""
        self._closed = True  # a ticker that has not started yet sees this and never loops
        for scope in self._tickers:
            scope.cancel()
        for inbox in self._inboxes.values():
            inbox.wake.set()

    async def _pump(self, subscriber: Subscriber, inbox: _Inbox) -> None:
        current: Event | None = None
        events = inbox.events
        flush: Callable[[], Awaitable[None]] | None = getattr(subscriber, "flush", None)
        try:
            while True:
                while events:
                    current = events.popleft()
                    await subscriber.on_event(current)
                    if inbox.held and len(events) <= STREAM_BUFFER:
                        inbox.held = False
                        inbox.drained.set()
                if flush is not None:
                    await flush()  # on failure, named after the batch's last event
                    if events:  # it yielded and more arrived: drain those before waiting
                        continue
                current = None
                if self._closed:
                    break
                inbox.wake = anyio.Event()  # no await since the queue emptied: nothing was missed
                inbox.idle = True
                await inbox.wake.wait()
            await subscriber.finish()
        except Exception as exc:  # a broken reporter must not take the run down with it
            where = f"on {event_type(current)}" if current is not None else "while finishing"
            message = f"{type(exc).__name__}: {exc}"
            self.failed[subscriber.name] = message
            self._errors.write(
                f"skillgym: reporter {subscriber.name!r} failed {where} ({message}); dropped\n"
            )
            self._errors.flush()
        finally:
            # Stop feeding it, and never leave a producer waiting on its backlog.
            self._inboxes.pop(subscriber.name, None)
            events.clear()
            inbox.held = False
            inbox.drained.set()

    async def _tick(self, subscriber: Subscriber, tick: Callable[[], Awaitable[None]]) -> None:
        # A separate task rather than a timeout on receive(): cancelling a receive can lose an event.
        with anyio.CancelScope() as scope:
            self._tickers.append(scope)
            while not self._closed and subscriber.name not in self.failed:
                await anyio.sleep(TICK_S)
                try:
                    await tick()
                except Exception as exc:
                    self.failed[subscriber.name] = f"{type(exc).__name__}: {exc}"
                    self._errors.write(
                        f"skillgym: reporter {subscriber.name!r} failed on tick ({exc}); dropped\n"
                    )
                    return


@asynccontextmanager
async def running_bus(*subscribers: Subscriber) -> AsyncIterator[EventBus]:
    """A bus whose subscribers run in their own task group; leaving closes and drains them all."""
    async with anyio.create_task_group() as tg:
        bus = EventBus(tg)
        for subscriber in subscribers:
            bus.subscribe(subscriber)
        try:
            yield bus
        finally:
            with anyio.CancelScope(shield=True):
                await bus.close()
