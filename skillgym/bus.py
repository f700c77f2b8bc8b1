"""The event bus: one bounded anyio memory object stream per subscriber, each subscriber a task.

Publishing never switches tasks (``post`` is synchronous), so a sequence of events posted together
reaches every subscriber in that order, with no lock. A subscriber's stream holds ``STREAM_BUFFER``
events; what is posted while it is full waits in the bus, in order, until a producer's
``await bus.room()`` (between units of work) sends it on, waiting as long as the subscriber is behind: a
slow reporter slows the run instead of buffering it. A subscriber task takes what its stream holds in
one go, and a subscriber with a ``flush()`` method has it awaited whenever its stream runs empty, before
the task waits for more: a reporter may gather a batch's writes and make them there, in one go.

Every event is scrubbed of the run's secrets as it is posted, before any subscriber sees it: the event
log, every reporter and the console are only ever handed what may be shown.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Protocol, TextIO, TypeVar

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .events import Event, event_type
from .redact import json_forms, scrub, scrub_struct

_E = TypeVar("_E", bound=Event)

# Small on purpose: a slow reporter applies backpressure to the runner instead of buffering a run. But
# not smaller than what one round of trial workers posts between two turns of the reporters (64 workers
# x 4 events, with room for more), or producers wait on every round even for reporters that keep up.
STREAM_BUFFER = 512
# A subscriber with a ``tick()`` method is called this often while no event arrives (heartbeats).
TICK_S = 1.0


class Subscriber(Protocol):
    """A reporter: sees every event in order, then ``finish`` once the run is over."""

    name: str

    async def on_event(self, event: Event) -> None: ...

    async def finish(self) -> None: ...


class _Outbox:
    """The bus's end of one subscriber's stream, and the events posted while that stream was full."""

    __slots__ = ("overflow", "send", "sending")

    def __init__(self, send: MemoryObjectSendStream[Event]) -> None:
        self.send = send
        self.overflow: deque[Event] = deque()
        # One producer at a time sends the overflow on, oldest first, so the events keep their order.
        self.sending = anyio.Lock()


class EventBus:
    """Broadcasts each event to every live subscriber; a subscriber that raises is reported and dropped."""

    def __init__(self, tg: TaskGroup, *, errors: TextIO | None = None, secrets: tuple[str, ...] = ()) -> None:
        self._tg = tg
        self._secrets = secrets
        self._forms = json_forms(secrets)
        self._outboxes: dict[str, _Outbox] = {}
        self._errors = errors or sys.stderr
        self.failed: dict[str, str] = {}
        self._tickers: list[anyio.CancelScope] = []
        self._closed = False

    def subscribe(self, subscriber: Subscriber) -> None:
        send, receive = anyio.create_memory_object_stream[Event](STREAM_BUFFER)
        outbox = _Outbox(send)
        self._outboxes[subscriber.name] = outbox
        self._tg.start_soon(self._pump, subscriber, receive, outbox, name=f"reporter:{subscriber.name}")
        tick: Callable[[], Awaitable[None]] | None = getattr(subscriber, "tick", None)
        if tick is not None:
            self._tg.start_soon(self._tick, subscriber, tick, name=f"reporter-tick:{subscriber.name}")

    def post(self, event: _E) -> _E:
        """Send ``event``, scrubbed of the run's secrets, to every live subscriber, without waiting (see
        ``room`` for backpressure); the event as sent."""
        if self._closed:
            raise RuntimeError("event posted to a closed bus")
        if self._secrets:
            event = scrub_struct(event, self._secrets, self._forms)
        for outbox in self._outboxes.values():
            if outbox.overflow:  # behind the events already waiting, never ahead of them
                outbox.overflow.append(event)
                continue
            try:
                outbox.send.send_nowait(event)
            except anyio.WouldBlock:
                outbox.overflow.append(event)
            except anyio.BrokenResourceError:
                pass  # its subscriber is being dropped: its task removes it before it can matter
        return event

    async def room(self) -> None:
        """Wait while any subscriber is more than ``STREAM_BUFFER`` events behind."""
        for outbox in list(self._outboxes.values()):
            if not outbox.overflow:
                continue
            async with outbox.sending:
                try:
                    while outbox.overflow:
                        # Sent before it leaves the overflow: a post meanwhile lines up behind it.
                        await outbox.send.send(outbox.overflow[0])
                        outbox.overflow.popleft()
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass  # dropped, or the bus closed: its task takes what is left itself

    async def publish(self, event: _E) -> _E:
        """``post`` then ``room``: one event, with backpressure; the event as sent."""
        sent = self.post(event)
        await self.room()
        return sent

    async def close(self) -> None:
        """End of the run: each subscriber takes what it has, then finishes."""
        self._closed = True  # a ticker that has not started yet sees this and never loops
        for scope in self._tickers:
            scope.cancel()
        for outbox in self._outboxes.values():
            outbox.send.close()

    async def _pump(
        self, subscriber: Subscriber, receive: MemoryObjectReceiveStream[Event], outbox: _Outbox
    ) -> None:
        current: Event | None = None
        flush: Callable[[], Awaitable[None]] | None = getattr(subscriber, "flush", None)
        unflushed = False
        try:
            with receive:
                while True:
                    try:
                        current = receive.receive_nowait()
                    except anyio.WouldBlock:
                        if flush is not None and unflushed:
                            await flush()  # on failure, named after the batch's last event
                            unflushed = False
                            continue  # it may have yielded and more arrived: take those before waiting
                        try:
                            current = await receive.receive()
                        except anyio.EndOfStream:
                            break
                    except anyio.EndOfStream:
                        break
                    await subscriber.on_event(current)
                    unflushed = True
            # Closed: what was still waiting for room comes after everything the stream held.
            while outbox.overflow:
                current = outbox.overflow.popleft()
                await subscriber.on_event(current)
                unflushed = True
            if flush is not None and unflushed:
                await flush()
            current = None
            await subscriber.finish()
        except Exception as exc:  # a broken reporter must not take the run down with it
            where = f"on {event_type(current)}" if current is not None else "while finishing"
            message = scrub(f"{type(exc).__name__}: {exc}", self._secrets)  # it may quote the event
            self.failed[subscriber.name] = message
            self._errors.write(
                f"skillgym: reporter {subscriber.name!r} failed {where} ({message}); dropped\n"
            )
            self._errors.flush()
        finally:
            # Stop feeding it, and never leave a producer waiting on its backlog (its send fails now).
            self._outboxes.pop(subscriber.name, None)
            outbox.send.close()
            outbox.overflow.clear()

    async def _tick(self, subscriber: Subscriber, tick: Callable[[], Awaitable[None]]) -> None:
        # A separate task rather than a timeout on receive(): ticks keep their pace while events arrive.
        with anyio.CancelScope() as scope:
            self._tickers.append(scope)
            while not self._closed and subscriber.name not in self.failed:
                await anyio.sleep(TICK_S)
                try:
                    await tick()
                except Exception as exc:
                    said = scrub(str(exc), self._secrets)
                    self.failed[subscriber.name] = f"{type(exc).__name__}: {said}"
                    self._errors.write(
                        f"skillgym: reporter {subscriber.name!r} failed on tick ({said}); dropped\n"
                    )
                    return


@asynccontextmanager
async def running_bus(*subscribers: Subscriber, secrets: tuple[str, ...] = ()) -> AsyncIterator[EventBus]:
    """A bus whose subscribers run in their own task group; leaving closes and drains them all.

    ``secrets``: the values scrubbed from every event posted (see ``redact.suite_secrets``).
    """
    async with anyio.create_task_group() as tg:
        bus = EventBus(tg, secrets=secrets)
        for subscriber in subscribers:
            bus.subscribe(subscriber)
        try:
            yield bus
        finally:
            with anyio.CancelScope(shield=True):
                await bus.close()
