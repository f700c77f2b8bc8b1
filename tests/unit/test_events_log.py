"""events.jsonl: one line per event, in order, written and flushed once per batch the bus delivers."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillgym.bus import running_bus
from skillgym.events import Counts, Event, LaneStart, RunFinish, event_encoder
from skillgym.reporters.events_log import EventLogWriter


def _events(n: int) -> list[Event]:
    lanes: list[Event] = [LaneStart(run_id="r", at=float(i), lane="prompt", total_trials=i) for i in range(n)]
    return [*lanes, RunFinish(run_id="r", at=0.0, counts=Counts(), exit_code=0, duration_s=0.0)]


def _lines(events: list[Event]) -> bytes:
    return b"".join(event_encoder.encode(e) + b"\n" for e in events)


@pytest.mark.anyio
async def test_a_batch_is_one_write_and_reaches_the_file_before_the_writer_waits(tmp_path: Path) -> None:
    path = tmp_path / "run" / "events.jsonl"
    writer = EventLogWriter(path)
    events = _events(5)
    for event in events[:3]:
        await writer.on_event(event)
    assert not path.exists()  # gathered, not yet written
    await writer.flush()
    assert path.read_bytes() == _lines(events[:3])
    for event in events[3:]:
        await writer.on_event(event)
    await writer.finish()
    assert path.read_bytes() == _lines(events)


@pytest.mark.anyio
async def test_through_the_bus_every_event_is_on_disk_in_order(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    events = _events(200)
    async with running_bus(EventLogWriter(path)) as bus:
        for event in events:
            await bus.publish(event)
    assert path.read_bytes() == _lines(events)


@pytest.mark.anyio
async def test_events_before_one_that_cannot_be_encoded_still_reach_the_log(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    writer = EventLogWriter(path)
    good = _events(2)
    for event in good:
        await writer.on_event(event)
    broken = LaneStart(run_id="r", at=float("nan"), lane="prompt", total_trials=object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unsupported"):
        await writer.on_event(broken)
    assert path.read_bytes() == _lines(good)
    await writer.finish()
