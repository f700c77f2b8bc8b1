"""The token snapshot schema (what ``snapshots/<provider>/<model>.toml`` holds) and check/update results."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

import msgspec

from ..model import Data, Lane

SNAPSHOT_SCHEMA = 1
DEFAULT_THRESHOLD_PERCENT = 20.0

Mode: TypeAlias = Literal["check", "update"]
SnapshotStatus: TypeAlias = Literal[
    "new", "unchanged", "improved", "regressed", "stale", "orphaned", "missing-usage"
]
STATUSES: tuple[SnapshotStatus, ...] = (
    "regressed",
    "stale",
    "missing-usage",
    "orphaned",
    "new",
    "improved",
    "unchanged",
)
EntryKey: TypeAlias = tuple[str, str, str]  # lane, case, condition

Count = Annotated[int, msgspec.Meta(ge=0)]
Tokens = Annotated[int, msgspec.Meta(ge=0)] | Annotated[float, msgspec.Meta(ge=0)]


class Figures(Data, frozen=True, kw_only=True):
    """Per-trial token counts; ``cached`` is cache read plus cache write. A count never reported is absent."""

    input: Tokens | None = None
    output: Tokens | None = None
    cached: Tokens | None = None
    total: Tokens


class SnapshotEntry(Data, frozen=True, kw_only=True):
    """One (lane, case, condition): the baseline a later run's median total per trial is compared with."""

    lane: Lane
    case: str
    condition: str
    fingerprint: Annotated[str, msgspec.Meta(min_length=1)]
    trials: Annotated[int, msgspec.Meta(ge=1)]
    run: str = ""  # the run the figures came from
    note: str = ""  # free text for reviewers; kept by `update` (comments are not)
    median: Figures
    min: Figures
    max: Figures
    # The judge's median tokens per trial, apart from the agent's (``[entry.judge]``): kept for review,
    # never compared; a run whose verdicts all came from the cache keeps the figures already there.
    judge: Figures | None = None

    @property
    def key(self) -> EntryKey:
        return (self.lane, self.case, self.condition)


class SnapshotFile(Data, frozen=True, kw_only=True):
    """A whole snapshot file: one provider and model, entries sorted by lane, case and condition."""

    schema: int = SNAPSHOT_SCHEMA
    provider: str
    model: str
    entries: tuple[SnapshotEntry, ...] = msgspec.field(default=(), name="entry")


class SnapshotOptions(Data, frozen=True, kw_only=True):
    """What `run --snapshot-check|--snapshot-update` asks for at the end of a run."""

    mode: Mode
    directory: str = "snapshots"
    threshold_percent: Annotated[float, msgspec.Meta(ge=0)] = DEFAULT_THRESHOLD_PERCENT
    enforce: bool = False  # a regression fails the run (exit 1); check only


class EntryCheck(Data, frozen=True, kw_only=True):
    """One entry's verdict. Totals are median tokens per trial; ``change_percent`` is against the snapshot."""

    file: str
    provider: str
    model: str
    lane: str
    case_id: str
    condition: str
    status: SnapshotStatus
    threshold_percent: float
    trials: int = 0  # this run's trials that reported usage
    snapshot_trials: int | None = None
    current_total: float | None = None
    snapshot_total: float | None = None
    change_percent: float | None = None
    fingerprint: str | None = None
    snapshot_fingerprint: str | None = None

    @property
    def label(self) -> str:
        return f"{self.lane}/{self.case_id}/{self.condition}"


class SnapshotCheck(Data, frozen=True, kw_only=True, tag_field="step", tag="check"):
    """A whole check: every entry the run measured or orphaned, counts per status, and caveats."""

    directory: str
    threshold_percent: float
    enforce: bool = False
    files: tuple[str, ...] = ()
    rows: tuple[EntryCheck, ...] = ()
    counts: dict[str, int] = {}
    not_run: int = 0  # entries of cases that still exist but this run did not measure (not compared)
    notes: tuple[str, ...] = ()

    @property
    def regressions(self) -> tuple[EntryCheck, ...]:
        return tuple(r for r in self.rows if r.status == "regressed")


class FileUpdate(Data, frozen=True, kw_only=True):
    """What `update` did to one snapshot file."""

    file: str
    provider: str
    model: str
    new: int = 0
    updated: int = 0  # figures or fingerprint changed
    unchanged: int = 0  # same figures: the entry (and its run id and note) is kept byte for byte
    removed: int = 0  # orphaned: the case or condition no longer exists in the suite
    kept: int = 0  # not measured by this run: left as they were
    missing_usage: int = 0  # measured but no usage reported: the old entry, if any, is kept
    written: bool = False  # False when the file's bytes did not change


class SnapshotUpdate(Data, frozen=True, kw_only=True, tag_field="step", tag="update"):
    """A whole update: what happened to each snapshot file, and caveats."""

    directory: str
    files: tuple[FileUpdate, ...] = ()
    notes: tuple[str, ...] = ()


class NoSnapshotStep(Data, frozen=True, kw_only=True, tag_field="step", tag="none"):
    """The run was asked neither to check nor to update its token snapshots."""


class SnapshotFailure(Data, frozen=True, kw_only=True, tag_field="step", tag="error"):
    """A snapshot file could not be read or written: a configuration error (exit 2); the results stand."""

    message: str


# What a run's snapshot step came to, as ``run.finish`` carries it (tagged by ``step``).
SnapshotOutcome: TypeAlias = SnapshotCheck | SnapshotUpdate | NoSnapshotStep | SnapshotFailure
