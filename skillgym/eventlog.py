"""Reading events.jsonl back: the source of truth for `report` rebuilds and `run --resume`."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from .errors import SkillgymError
from .events import READABLE_SCHEMAS, Event, RunFinish, RunStart, TrialFinish, decode_event
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
    schema = READABLE_SCHEMAS[-1]  # each segment's lines decode under the schema its run.start names
    for number, line in enumerate(body, start=1):
        if not line.strip():
            continue
        try:
            event = decode_event(line, schema)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise EventLogError(f"{path}:{number}: not a skillgym event ({exc}); the log is damaged") from exc
        if isinstance(event, RunStart):
            schema = _readable(path, number, event.schema)
        events.append(event)
    if truncated:
        try:  # a last line that happens to be whole but lacks its newline still counts
            events.append(decode_event(lines[-1], schema))
            truncated = False
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass
    starts = [i for i, e in enumerate(events) if isinstance(e, RunStart)]
    if not starts:
        raise EventLogError(f"{path} has no run.start event; it is not a complete skillgym event log")
    segment = events[starts[-1] :]
    start = segment[0]
    assert isinstance(start, RunStart)
    results: dict[str, TrialResult] = {}
    for event in segment:
        if isinstance(event, TrialFinish):
            results.pop(event.result.key, None)
            results[event.result.key] = event.result
    finish = next((e for e in reversed(segment) if isinstance(e, RunFinish)), None)
    return RunLog(start=start, results=tuple(results.values()), finish=finish, truncated_tail=truncated)


def _readable(path: Path, number: int, schema: int) -> int:
    if schema not in READABLE_SCHEMAS:
        readable = " or ".join(str(n) for n in READABLE_SCHEMAS)
        raise EventLogError(
            f"{path}:{number}: event schema {schema} is not one this skillgym reads ({readable}); "
            "use the skillgym version that wrote it"
        )
    return schema


def _is_event(line: bytes) -> bool:
    for schema in READABLE_SCHEMAS:
        try:
            decode_event(line, schema)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        return True
    return False


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
    if not _is_event(data[keep:]):
        with path.open("r+b") as handle:
            handle.truncate(keep)
            os.fsync(handle.fileno())
        return
    with path.open("ab") as handle:
        handle.write(b"\n")
