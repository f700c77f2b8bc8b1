"""Reading events.jsonl back: the source of truth for `report` rebuilds and `run --resume`."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from .errors import SkillgymError
from .events import EVENT_SCHEMA, Event, RunFinish, RunStart, TrialFinish, event_decoder
from .model import Data
from .results import TrialResult


class EventLogError(SkillgymError):
    """events.jsonl is missing, from an unknown schema, or damaged before its last line."""


class RunLog(Data, frozen=True, kw_only=True):
    """The last run segment of an event log (a resumed run appends a new segment)."""

    start: RunStart
    results: tuple[TrialResult, ...]  # the latest result per trial key, in log order
    finish: RunFinish | None
    truncated_tail: bool  # the last line was cut off (the process was killed mid-write)


def read_run_log(run_dir: Path) -> RunLog:
    """Parse ``<run_dir>/events.jsonl``; a cut-off last line is tolerated, damage elsewhere is an error."""
    path = run_dir / "events.jsonl"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise EventLogError(
            f"{path} does not exist: {run_dir} is not a skillgym run directory (or it never started)"
        ) from None
    lines = data.split(b"\n")
    truncated = bool(lines[-1])  # a complete log ends with a newline, leaving an empty last piece
    body = lines[:-1]
    events: list[Event] = []
    for number, line in enumerate(body, start=1):
        if not line.strip():
            continue
        try:
            events.append(event_decoder.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise EventLogError(f"{path}:{number}: not a skillgym event ({exc}); the log is damaged") from exc
    if truncated:
        try:  # a last line that happens to be whole but lacks its newline still counts
            events.append(event_decoder.decode(lines[-1]))
            truncated = False
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass
    starts = [i for i, e in enumerate(events) if isinstance(e, RunStart)]
    if not starts:
        raise EventLogError(f"{path} has no run.start event; it is not a complete skillgym event log")
    segment = events[starts[-1] :]
    start = segment[0]
    assert isinstance(start, RunStart)
    if start.schema != EVENT_SCHEMA:
        raise EventLogError(
            f"{path}: event schema {start.schema} is not the {EVENT_SCHEMA} this skillgym reads; "
            "use the skillgym version that wrote it"
        )
    results: dict[str, TrialResult] = {}
    for event in segment:
        if isinstance(event, TrialFinish):
            results.pop(event.result.key, None)
            results[event.result.key] = event.result
    finish = next((e for e in reversed(segment) if isinstance(e, RunFinish)), None)
    return RunLog(start=start, results=tuple(results.values()), finish=finish, truncated_tail=truncated)


def mend_tail(run_dir: Path) -> None:
    """Make events.jsonl end on a line boundary before events are appended to it.

    A whole event that only lacks its newline gets one; a cut-off fragment is removed (it never was an
    event, and leaving it would glue the next event onto garbage).
    """
    path = run_dir / "events.jsonl"
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return
    keep = data.rfind(b"\n") + 1
    try:
        event_decoder.decode(data[keep:])
    except (msgspec.DecodeError, msgspec.ValidationError):
        with path.open("r+b") as handle:
            handle.truncate(keep)
            os.fsync(handle.fileno())
        return
    with path.open("ab") as handle:
        handle.write(b"\n")
