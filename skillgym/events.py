"""The run's lifecycle events: a msgspec tagged union, one JSON object per line of events.jsonl."""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec

from .cost.model import BudgetStop
from .gates.model import GateResult
from .identity import TrialId
from .model import Data, Lane
from .results import TrialResult
from .shard import ShardSpec
from .snapshots.model import NoSnapshotStep, SnapshotOutcome
from .usage import TokenReport

EVENT_SCHEMA = 4
# Older logs are still read: eventlog upgrades their events as it reads them. Schema 1 has trial.start's
# and each result's identity fields at the top level, not in `id`; schemas 1 and 2 have run.finish's
# token section, snapshot step and notes in an untyped `summary`; schemas 1 to 3 have no `kept` on
# trial.finish (its default, false, reads them right).
READABLE_EVENT_SCHEMAS: tuple[int, ...] = (1, 2, 3, EVENT_SCHEMA)


class Counts(Data, frozen=True, kw_only=True):
    """Trial outcomes so far (or in total) for a case, lane or run."""

    total: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0


class _Event(Data, frozen=True, kw_only=True, tag_field="type"):
    run_id: str
    at: float  # unix time


class MergedShard(Data, frozen=True, kw_only=True):
    """One shard run a merged run was joined from."""

    index: int  # shard I of N
    run_id: str
    trials: int  # the trials it ran


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
    trials: int  # the trials it ran
    concurrency: int
    total_trials: int
    skill_hash: str
    versions: dict[str, str] = {}
    resumed: bool = False
    baseline_report: str | None = None  # --compare-baseline, so a rebuilt report compares again
    settings: dict[str, Any] = {}  # provider and workspace options a resume must reuse
    notes: tuple[str, ...] = ()  # what the providers said at start (what replay re-enacts, for instance)
    plan_fingerprint: str | None = None  # of the whole plan (skillgym.shard.plan_fingerprint)
    shard: ShardSpec | None = None  # `run --shard I/N`: which part of the plan this run is
    merged: tuple[MergedShard, ...] = ()  # `skillgym merge`: the shard runs this run was joined from


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
    id: TrialId
    model: str | None  # what the run asks for; the result says which model answered
    workspace: dict[str, Any] = {}  # the resolved workspace plan, secrets redacted


class TrialFinish(_Event, frozen=True, kw_only=True, tag="trial.finish"):
    """Carries the whole result, so reports can be rebuilt from the log alone.

    ``kept``: a resumed run re-announces the results it keeps from before, so every reporter sees the
    whole run; those carry ``kept=True``, and only the trials that ran in this segment ``False``.
    """

    result: TrialResult
    kept: bool = False


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
    gates: tuple[GateResult, ...] = ()  # the CI gates, judged on the run's statistics
    budget: BudgetStop | None = None  # set when --budget-usd or --budget-tokens ended the run


Event: TypeAlias = (
    RunStart | LaneStart | CaseStart | TrialStart | TrialFinish | CaseFinish | LaneFinish | RunFinish
)

event_encoder = msgspec.json.Encoder()
event_decoder = msgspec.json.Decoder(Event)


def event_type(event: Event) -> str:
    """The ``type`` tag of an event, as written in the log."""
    tag = event.__struct_config__.tag
    assert isinstance(tag, str)
    return tag
