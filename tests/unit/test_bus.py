"""The event bus: every subscriber sees every event in order; a raising one is reported once and dropped."""

from __future__ import annotations

import io

import anyio
import anyio.lowlevel
import pytest

from skillgym.bus import STREAM_BUFFER, EventBus, running_bus
from skillgym.events import Counts, Event, LaneStart, RunFinish, event_type


def _events(n: int) -> list[Event]:
    lanes: list[Event] = [LaneStart(run_id="r", at=float(i), lane="prompt", total_trials=i) for i in range(n)]
    return [*lanes, RunFinish(run_id="r", at=0.0, counts=Counts(), exit_code=0, duration_s=0.0)]


class Recorder:
    def __init__(self, name: str, *, slow: bool = False) -> None:
        self.name = name
        self.seen: list[Event] = []
        self.finished = False
        self.slow = slow

    async def on_event(self, event: Event) -> None:
        if self.slow:
            await anyio.sleep(0)
        self.seen.append(event)

    async def finish(self) -> None:
        self.finished = True


class Exploding(Recorder):
    async def on_event(self, event: Event) -> None:
        if len(self.seen) == 3:
            raise RuntimeError("disk full")
        self.seen.append(event)


@pytest.mark.anyio
async def test_each_subscriber_gets_every_event_in_order_and_drains_before_exit() -> None:
    fast, slow = Recorder("fast"), Recorder("slow", slow=True)
    events = _events(STREAM_BUFFER * 3)  # more than a stream holds: backpressure, not loss
    async with running_bus(fast, slow) as bus:
        for event in events:
            await bus.publish(event)
    assert fast.seen == events
    assert slow.seen == events
    assert fast.finished and slow.finished


@pytest.mark.anyio
async def test_a_raising_subscriber_is_reported_once_and_the_others_carry_on() -> None:
    errors = io.StringIO()
    good, bad = Recorder("good"), Exploding("bad")
    events = _events(10)
    async with anyio.create_task_group() as tg:
        bus = EventBus(tg, errors=errors)
        bus.subscribe(good)
        bus.subscribe(bad)
        for event in events:
            await bus.publish(event)
        await bus.close()
    assert good.seen == events and good.finished
    assert len(bad.seen) == 3 and not bad.finished
    message = errors.getvalue()
    assert message.count("\n") == 1
    assert "reporter 'bad' failed on lane.start (RuntimeError: disk full); dropped" in message
    assert bus.failed == {"bad": "RuntimeError: disk full"}


def test_event_type_is_the_wire_tag() -> None:
    assert event_type(_events(1)[-1]) == "run.finish"


class Gated(Recorder):
    """Takes no event until ``gate`` is set."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.gate = anyio.Event()

    async def on_event(self, event: Event) -> None:
        await self.gate.wait()
        self.seen.append(event)


@pytest.mark.anyio
async def test_room_waits_while_a_subscriber_is_behind_and_post_never_switches_tasks() -> None:
    gated = Gated("gated")
    events = _events(STREAM_BUFFER + 5)
    made_room = anyio.Event()
    async with running_bus(gated) as bus:
        for event in events:
            bus.post(event)  # synchronous: nothing else runs in between, so no lock is needed
        assert gated.seen == []

        async def producer() -> None:
            await bus.room()
            made_room.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(producer)
            await anyio.wait_all_tasks_blocked()
            assert not made_room.is_set()  # the subscriber is more than STREAM_BUFFER behind
            gated.gate.set()
        await anyio.lowlevel.checkpoint()
        assert made_room.is_set()
    assert gated.seen == events and gated.finished


@pytest.mark.anyio
async def test_a_dropped_subscriber_never_holds_producers_back() -> None:
    errors = io.StringIO()
    bad = Exploding("bad")
    async with anyio.create_task_group() as tg:
        bus = EventBus(tg, errors=errors)
        bus.subscribe(bad)
        for event in _events(STREAM_BUFFER * 2):
            bus.post(event)
        with anyio.fail_after(5):
            await bus.room()
        await bus.close()
    assert len(bad.seen) == 3 and "bad" in bus.failed


class Batching(Recorder):
    """Records where each flush fell; ``yields`` makes the first flush give other tasks a turn."""

    def __init__(self, name: str, *, yields: bool = False) -> None:
        super().__init__(name)
        self.flushed_at: list[int] = []
        self.yields = yields

    async def flush(self) -> None:
        self.flushed_at.append(len(self.seen))
        if self.yields and len(self.flushed_at) == 1:
            await anyio.sleep(0)


@pytest.mark.anyio
async def test_flush_is_awaited_once_the_queue_runs_empty() -> None:
    batching = Batching("batching")
    events = _events(6)
    async with running_bus(batching) as bus:
        for event in events[:3]:
            bus.post(event)
        await anyio.wait_all_tasks_blocked()
        assert batching.flushed_at == [3]  # one flush for the three events posted together
        for event in events[3:]:
            bus.post(event)
    assert batching.seen == events
    assert batching.flushed_at[:2] == [3, 7] and batching.finished


@pytest.mark.anyio
async def test_events_that_arrive_while_flush_yields_are_not_missed() -> None:
    batching = Batching("batching", yields=True)
    events = _events(4)
    async with running_bus(batching) as bus:
        bus.post(events[0])
        await anyio.lowlevel.checkpoint()  # the pump takes it and yields inside flush
        for event in events[1:]:
            bus.post(event)
        with anyio.fail_after(5):
            while len(batching.seen) < len(events):
                await anyio.lowlevel.checkpoint()
    assert batching.seen == events


@pytest.mark.anyio
async def test_every_producer_waiting_for_room_is_released_once_the_backlog_drains() -> None:
    gated = Gated("gated")
    released: list[int] = []
    async with running_bus(gated) as bus:
        for event in _events(STREAM_BUFFER + 5):
            bus.post(event)

        async def producer(number: int) -> None:
            await bus.room()
            released.append(number)

        async with anyio.create_task_group() as tg:
            for number in range(3):
                tg.start_soon(producer, number)
            await anyio.wait_all_tasks_blocked()
            assert released == []
            gated.gate.set()
    assert sorted(released) == [0, 1, 2]


@pytest.mark.anyio
async def test_a_round_of_64_trials_does_not_make_producers_wait_for_a_reporter_that_keeps_up() -> None:
    recorder = Recorder("recorder")
    async with running_bus(recorder) as bus:
        for event in _events(64 * 4):  # trial and case start and finish from 64 workers, one turn each
            bus.post(event)
        await bus.room()  # returns at once: no switch to the reporter was needed
        assert recorder.seen == []
    assert len(recorder.seen) == 64 * 4 + 1


@pytest.mark.anyio
async def test_events_posted_while_a_producer_waits_for_room_keep_their_order() -> None:
    gated = Gated("gated")
    events = _events(STREAM_BUFFER * 2 + 20)
    first, later = events[: STREAM_BUFFER + 10], events[STREAM_BUFFER + 10 :]
    async with running_bus(gated) as bus:
        for event in first:
            bus.post(event)

        async def producer() -> None:
            await bus.room()

        async with anyio.create_task_group() as tg:
            tg.start_soon(producer)
            await anyio.wait_all_tasks_blocked()  # it waits, holding the oldest waiting event
            gated.gate.set()
            for event in later:  # posted while that producer sends on what was waiting before
                bus.post(event)
                await anyio.lowlevel.checkpoint()
        await bus.room()
    assert gated.seen == events and gated.finished


@pytest.mark.anyio
async def test_closing_delivers_what_still_waits_for_room_in_order() -> None:
    recorder = Recorder("recorder", slow=True)
    events = _events(STREAM_BUFFER * 3)
    async with running_bus(recorder) as bus:
        for event in events:
            bus.post(event)  # no room() at all: two buffers' worth waits in the bus at close
    assert recorder.seen == events and recorder.finished


@pytest.mark.anyio
async def test_room_after_close_returns_and_post_after_close_is_refused() -> None:
    gated = Gated("gated")
    async with anyio.create_task_group() as tg:
        bus = EventBus(tg)
        bus.subscribe(gated)
        for event in _events(STREAM_BUFFER + 5):
            bus.post(event)
        await bus.close()
        with anyio.fail_after(5):
            await bus.room()  # nothing left to wait for: the subscriber's task takes the rest itself
        with pytest.raises(RuntimeError, match="closed bus"):
            bus.post(_events(1)[0])
        gated.gate.set()
    assert len(gated.seen) == STREAM_BUFFER + 6 and gated.finished


@pytest.mark.anyio
async def test_every_event_is_scrubbed_of_the_runs_secrets_before_any_subscriber_sees_it() -> None:
    first, second = Recorder("first"), Recorder("second")
    plain = LaneStart(run_id="r", at=0.0, lane="prompt", total_trials=1)
    leaky = RunFinish(
        run_id="r", at=0.0, counts=Counts(), exit_code=0, duration_s=0.0, notes=("key sk-bus-secret-1 used",)
    )
    async with running_bus(first, second, secrets=("sk-bus-secret-1",)) as bus:
        assert bus.post(plain) is plain  # nothing to scrub: the same object goes out
        sent = await bus.publish(leaky)
    assert sent.notes == ("key <redacted> used",)
    assert first.seen == second.seen == [plain, sent]
