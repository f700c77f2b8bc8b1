"""Reading events.jsonl back: the source of truth for `report` rebuilds and `run --resume`."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from .errors import SkillgymError
from .events import (
    EVENT_SCHEMA,
    READABLE_EVENT_SCHEMAS,
    Event,
    RunFinish,
    RunStart,
    TrialFinish,
    event_decoder,
)
from .model import Data
from .results import RESULT_SCHEMA, TrialResult

# The identity's fields, which schema 1 keeps at the top level of trial.start and of a result.
_ID_FIELDS = ("lane", "case_id", "condition", "provider", "trial", "fingerprint")


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
    schema = EVENT_SCHEMA  # of the segment being read: a resumed run's may be newer than the ones before
    for number, line in enumerate(body, start=1):
        if not line.strip():
            continue
        try:
            event = decode_event(line, schema=schema)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise EventLogError(f"{path}:{number}: not a skillgym event ({exc}); the log is damaged") from exc
        if isinstance(event, RunStart):
            schema = event.schema
        events.append(event)
    if truncated:
        try:  # a last line that happens to be whole but lacks its newline still counts
            events.append(decode_event(lines[-1], schema=schema))
            truncated = False
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass
    starts = [i for i, e in enumerate(events) if isinstance(e, RunStart)]
    if not starts:
        raise EventLogError(f"{path} has no run.start event; it is not a complete skillgym event log")
    segment = events[starts[-1] :]
    start = segment[0]
    assert isinstance(start, RunStart)
    if start.schema not in READABLE_EVENT_SCHEMAS:
        raise EventLogError(
            f"{path}: event schema {start.schema} is not one this skillgym reads "
            f"({', '.join(map(str, READABLE_EVENT_SCHEMAS))}); use the skillgym version that wrote it"
        )
    results: dict[str, TrialResult] = {}
    for event in segment:
        if isinstance(event, TrialFinish):
            results.pop(event.result.id.key, None)
            results[event.result.id.key] = event.result
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
        decode_event(data[keep:], schema=READABLE_EVENT_SCHEMAS[0])  # whichever schema wrote it
    except (msgspec.DecodeError, msgspec.ValidationError):
        with path.open("r+b") as handle:
            handle.truncate(keep)
            os.fsync(handle.fileno())
        return
    with path.open("ab") as handle:
        handle.write(b"\n")


def decode_event(line: bytes, *, schema: int = EVENT_SCHEMA) -> Event:
    """One line of events.jsonl, written under ``schema`` or a later one, in today's shape.

    Raises msgspec.DecodeError or msgspec.ValidationError for a line that is not an event.
    """
    try:
        return event_decoder.decode(line)
    except msgspec.ValidationError:
        if schema >= EVENT_SCHEMA:
            raise
        event = msgspec.json.decode(line)
        if schema <= 1:
            event = _from_schema_1(event)
        upgraded: Event = msgspec.convert(_from_schema_2(event), Event)
        return upgraded


def _from_schema_1(event: object) -> object:
    """A schema-1 event as today's schema has it: trial.start's and each result's identity in ``id``."""
    if not isinstance(event, dict):
        return event  # not an event: converting it fails with a message that says so
    if event.get("type") == "trial.start":
        return nest_id(event)
    if event.get("type") == "trial.finish" and isinstance(event.get("result"), dict):
        return {**event, "result": {**nest_id(event["result"]), "schema": RESULT_SCHEMA}}
    return event


def _from_schema_2(event: object) -> object:
    """A schema-2 (or 1) event as today's: run.finish's ``summary`` entries become its typed fields."""
    if not isinstance(event, dict) or event.get("type") != "run.finish" or "summary" not in event:
        return event
    rest = {k: v for k, v in event.items() if k != "summary"}
    summary = event["summary"]
    if not isinstance(summary, dict):
        return event  # not a summary: converting it fails with a message that says so
    snapshots: dict[str, object] = {"step": "none"}
    if "snapshot_error" in summary:
        snapshots = {"step": "error", "message": str(summary["snapshot_error"])}
    elif isinstance(summary.get("snapshot_check"), dict):
        snapshots = {**summary["snapshot_check"], "step": "check"}
    elif isinstance(summary.get("snapshot_update"), dict):
        snapshots = {**summary["snapshot_update"], "step": "update"}
    notes = summary.get("notes", [])
    return {**rest, "tokens": summary.get("tokens"), "snapshots": snapshots, "notes": notes}


def nest_id(flat: dict[str, object]) -> dict[str, object]:
    """A schema-1 record (trial.start or a result) with its identity's fields nested under ``id``."""
    rest = {k: v for k, v in flat.items() if k not in _ID_FIELDS and k != "key"}
    return {**rest, "id": {"key": flat.get("key"), **{k: flat.get(k) for k in _ID_FIELDS if k in flat}}}
