"""The event bus: one bounded stream per subscriber, each subscriber a task in the run's task group."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Protocol, TextIO

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .events import Event, event_type

# Small on purpose: a slow reporter applies backpressure to the runner instead of buffering a run.
STREAM_BUFFER = 64
# A subscriber with a ``tick()`` method is called this often while no event arrives (heartbeats).
TICK_S = 1.0


class Subscriber(Protocol):
    """A reporter: sees every event in order, then ``finish`` once the run is over."""

    name: str

    async def on_event(self, event: Event) -> None: ...

    async def finish(self) -> None: ...


class EventBus:
    """Broadcasts each event to every live subscriber; a subscriber that raises is reported and dropped."""

    def __init__(self, tg: TaskGroup, *, errors: TextIO | None = None) -> None:
        self._tg = tg
        self._streams: dict[str, MemoryObjectSendStream[Event]] = {}
        self._errors = errors or sys.stderr
        self.failed: dict[str, str] = {}
        self._tickers: list[anyio.CancelScope] = []
        self._closed = False

    def subscribe(self, subscriber: Subscriber) -> None:
        send, receive = anyio.create_memory_object_stream[Event](STREAM_BUFFER)
        self._streams[subscriber.name] = send
        self._tg.start_soon(self._pump, subscriber, receive, name=f"reporter:{subscriber.name}")
        tick: Callable[[], Awaitable[None]] | None = getattr(subscriber, "tick", None)
        if tick is not None:
            self._tg.start_soon(self._tick, subscriber, tick, name=f"reporter-tick:{subscriber.name}")

    async def publish(self, event: Event) -> None:
        for name, stream in list(self._streams.items()):
            try:
                await stream.send(event)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                # The subscriber died (already reported by its pump); stop feeding it.
                self._streams.pop(name, None)
                stream.close()

    async def close(self) -> None:
        """End of the run: each subscriber drains what it has, then finishes."""
        self._closed = True  # a ticker that has not started yet sees this and never loops
        for scope in self._tickers:
            scope.cancel()
        for stream in self._streams.values():
            await stream.aclose()
        self._streams.clear()

    async def _pump(self, subscriber: Subscriber, receive: MemoryObjectReceiveStream[Event]) -> None:
        current: Event | None = None
        async with receive:
            try:
                async for current in receive:
                    await subscriber.on_event(current)
                current = None
                await subscriber.finish()
            except Exception as exc:  # a broken reporter must not take the run down with it
                where = f"on {event_type(current)}" if current is not None else "while finishing"
                message = f"{type(exc).__name__}: {exc}"
                self.failed[subscriber.name] = message
                self._errors.write(
                    f"skillgym: reporter {subscriber.name!r} failed {where} ({message}); dropped\n"
                )
                self._errors.flush()

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
