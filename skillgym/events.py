"""The run's lifecycle events: a msgspec tagged union, one JSON object per line of events.jsonl."""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec

from .model import Data, Lane
from .results import TrialResult
from .snapshots.model import (
    NoSnapshotStep,
    SnapshotCheck,
    SnapshotFailure,
    SnapshotOutcome,
    SnapshotUpdate,
)
from .usage import TokenReport

# 2: run.finish carries the token section, the snapshot step's outcome and the notes as typed fields,
# where 1 had them in an untyped ``summary``. Logs of schema 1 are still read (``decode_event``).
EVENT_SCHEMA = 2
READABLE_SCHEMAS = (1, 2)


class Counts(Data, frozen=True, kw_only=True):
    """Trial outcomes so far (or in total) for a case, lane or run."""

    total: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0


class _Event(Data, frozen=True, kw_only=True, tag_field="type"):
    run_id: str
    at: float  # unix time


class RunStart(_Event, frozen=True, kw_only=True, tag="run.start"):
    """First line of every event log; carries the schema version readers check."""

    schema: int = EVENT_SCHEMA
    argv: tuple[str, ...]
    suite: str
    suite_dir: str  # absolute: `run --resume` reloads the suite from here, whatever the cwd
    run_dir: str
    lanes: tuple[Lane, ...]
    conditions: tuple[str, ...]
    providers: tuple[str, ...]
    case_filter: tuple[str, ...] = ()
    model: str | None
    trials: int
    concurrency: int
    total_trials: int
    skill_hash: str
    versions: dict[str, str] = {}
    resumed: bool = False
    baseline_report: str | None = None  # --compare-baseline, so a rebuilt report compares again
    settings: dict[str, Any] = {}  # provider and workspace options a resume must reuse


class LaneStart(_Event, frozen=True, kw_only=True, tag="lane.start"):
    lane: Lane
    total_trials: int


class CaseStart(_Event, frozen=True, kw_only=True, tag="case.start"):
    """A case under one condition and provider: brackets that group's trials."""

    lane: Lane
    case_id: str
    condition: str
    provider: str
    fingerprint: str
    total_trials: int


class TrialStart(_Event, frozen=True, kw_only=True, tag="trial.start"):
    key: str
    lane: Lane
    case_id: str
    condition: str
    provider: str
    model: str | None
    trial: int
    fingerprint: str
    workspace: dict[str, Any] = {}  # the resolved workspace plan, secrets redacted


class TrialFinish(_Event, frozen=True, kw_only=True, tag="trial.finish"):
    """Carries the whole result, so reports can be rebuilt from the log alone."""

    result: TrialResult


class CaseFinish(_Event, frozen=True, kw_only=True, tag="case.finish"):
    lane: Lane
    case_id: str
    condition: str
    provider: str
    counts: Counts


class LaneFinish(_Event, frozen=True, kw_only=True, tag="lane.finish"):
    lane: Lane
    counts: Counts


class RunFinish(_Event, frozen=True, kw_only=True, tag="run.finish"):
    """Last line of a complete log; absent when the run was killed.

    Beyond the counts it carries what the run's finishers found (see ``skillgym.finishers``): the token
    section, the snapshot step's outcome, and notes every reporter shows. ``exit_code`` already counts
    them (``--snapshot-enforce`` fails a run on a regression; an unreadable snapshot file is exit 2).
    """

    counts: Counts
    exit_code: int
    duration_s: float
    interrupted: bool = False
    tokens: TokenReport | None = None  # absent when no trial reported usage
    snapshots: SnapshotOutcome = NoSnapshotStep()
    notes: tuple[str, ...] = ()


Event: TypeAlias = (
    RunStart | LaneStart | CaseStart | TrialStart | TrialFinish | CaseFinish | LaneFinish | RunFinish
)

event_encoder = msgspec.json.Encoder()
event_decoder = msgspec.json.Decoder(Event)


class RunFinishV1(_Event, frozen=True, kw_only=True, tag="run.finish"):
    """``run.finish`` as schema 1 wrote it: the token section and the snapshot step in ``summary``."""

    counts: Counts
    exit_code: int
    duration_s: float
    interrupted: bool = False
    summary: dict[str, Any] = {}


_decoder_v1 = msgspec.json.Decoder(
    RunStart | LaneStart | CaseStart | TrialStart | TrialFinish | CaseFinish | LaneFinish | RunFinishV1
)


def upgrade_finish(old: RunFinishV1) -> RunFinish:
    """A schema-1 ``run.finish`` as today's: its summary's entries become the typed fields."""
    summary = old.summary
    snapshots: SnapshotOutcome = NoSnapshotStep()
    if "snapshot_error" in summary:
        snapshots = SnapshotFailure(message=str(summary["snapshot_error"]))
    elif "snapshot_check" in summary:
        snapshots = msgspec.convert(summary["snapshot_check"], SnapshotCheck)
    elif "snapshot_update" in summary:
        snapshots = msgspec.convert(summary["snapshot_update"], SnapshotUpdate)
    tokens = summary.get("tokens")
    return RunFinish(
        run_id=old.run_id,
        at=old.at,
        counts=old.counts,
        exit_code=old.exit_code,
        duration_s=old.duration_s,
        interrupted=old.interrupted,
        tokens=None if tokens is None else msgspec.convert(tokens, TokenReport),
        snapshots=snapshots,
        notes=tuple(str(n) for n in summary.get("notes", ())),
    )


def decode_event(line: bytes, schema: int = EVENT_SCHEMA) -> Event:
    """One line of a log written under ``schema`` (one of ``READABLE_SCHEMAS``), as today's event.

    Raises ``msgspec.DecodeError`` or ``msgspec.ValidationError`` when the line is not such an event.
    """
    if schema == EVENT_SCHEMA:
        return event_decoder.decode(line)
    event = _decoder_v1.decode(line)
    return upgrade_finish(event) if isinstance(event, RunFinishV1) else event


def event_type(event: Event) -> str:
    """The ``type`` tag of an event, as written in the log."""
    tag = event.__struct_config__.tag
    assert isinstance(tag, str)
    return tag
