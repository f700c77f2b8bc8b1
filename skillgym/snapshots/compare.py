"""Snapshot statuses and merges, as pure functions of a run's token rows and a snapshot file.

Comparisons use the median total tokens per trial, so a run with ``--trials 1`` and one with
``--trials 5`` compare fairly. The threshold is symmetric: more than ``threshold`` percent above the
snapshot is ``regressed``, more than ``threshold`` percent below is ``improved``, anything between is
``unchanged``. A changed case fingerprint is ``stale`` and is not compared at all (the old figures
measured a different task).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

import msgspec

from ..stats import Summary
from ..usage import TokenRow
from .model import (
    EntryCheck,
    EntryKey,
    Figures,
    FileUpdate,
    SnapshotEntry,
    SnapshotFile,
    SnapshotStatus,
)


def classify(
    current: float, snapshot: float, threshold_percent: float
) -> tuple[SnapshotStatus, float | None]:
    """The status of a median total against its snapshot, and the change in percent (None from zero)."""
    if snapshot == 0:
        return ("unchanged", 0.0) if current == 0 else ("regressed", None)
    change = (current - snapshot) / snapshot * 100
    if change > threshold_percent:
        return "regressed", round(change, 2)
    if change < -threshold_percent:
        return "improved", round(change, 2)
    return "unchanged", round(change, 2)


def row_entry_key(row: TokenRow) -> EntryKey:
    return (row.lane, row.case_id, row.condition)


def _figures(row: TokenRow, pick: str) -> Figures:
    def value(summary: Summary | None) -> float | None:
        if summary is None:
            return None
        v: float = getattr(summary, pick)
        return int(v) if float(v).is_integer() else round(v, 1)

    total = value(row.total)
    assert total is not None  # rows without a total are missing-usage and never become entries
    return Figures(input=value(row.input), output=value(row.output), cached=value(row.cached), total=total)


def entry_from_row(row: TokenRow, *, run_id: str, note: str = "") -> SnapshotEntry:
    """A snapshot entry holding a row's per-trial median and spread (min, max)."""
    return SnapshotEntry(
        lane=row.lane,
        case=row.case_id,
        condition=row.condition,
        fingerprint=row.fingerprint,
        trials=row.trials,
        run=run_id,
        note=note,
        median=_figures(row, "median"),
        min=_figures(row, "low"),
        max=_figures(row, "high"),
        judge=_judge_figures(row),
    )


def _judge_figures(row: TokenRow) -> Figures | None:
    if row.judge_total is None:
        return None

    def median(summary: Summary | None) -> float | None:
        return (
            None if summary is None else (int(v) if float(v := summary.median).is_integer() else round(v, 1))
        )

    total = median(row.judge_total)
    assert total is not None
    return Figures(
        input=median(row.judge_input),
        output=median(row.judge_output),
        cached=median(row.judge_cached),
        total=total,
    )


def _same_measure(a: SnapshotEntry, b: SnapshotEntry) -> bool:
    return (a.fingerprint, a.trials, a.median, a.min, a.max, a.judge) == (
        b.fingerprint,
        b.trials,
        b.median,
        b.min,
        b.max,
        b.judge,
    )


def is_orphaned(key: EntryKey, measured: Collection[EntryKey], scope: Collection[EntryKey] | None) -> bool:
    """In the file, not measured, and its case (under that condition) no longer exists in the suite.

    ``scope`` is every (lane, case, condition) the suite defines; without it (the suite did not load),
    nothing is called orphaned.
    """
    return scope is not None and key not in measured and key not in scope


def check_file(
    *,
    file: str,
    provider: str,
    model: str,
    rows: Sequence[TokenRow],
    snapshot: SnapshotFile | None,
    threshold_percent: float,
    budgets: Mapping[tuple[str, str], float | None],
    scope: Collection[EntryKey] | None,
) -> tuple[list[EntryCheck], int]:
    """Every row's status against one snapshot file, then the file's orphans; also how many were not run.

    A case's own ``token_budget(max_regression_percent=...)`` overrides ``threshold_percent``.
    """
    entries = {e.key: e for e in snapshot.entries} if snapshot is not None else {}
    out: list[EntryCheck] = []
    for row in rows:
        key = row_entry_key(row)
        budget = budgets.get((row.lane, row.case_id))
        threshold = threshold_percent if budget is None else budget
        entry = entries.get(key)
        current = row.total.median if row.total is not None else None
        change: float | None = None
        status: SnapshotStatus
        if current is None:
            status = "missing-usage"
        elif entry is None:
            status = "new"
        elif entry.fingerprint != row.fingerprint:
            status = "stale"
        else:
            status, change = classify(current, float(entry.median.total), threshold)
        out.append(
            EntryCheck(
                file=file,
                provider=provider,
                model=model,
                lane=row.lane,
                case_id=row.case_id,
                condition=row.condition,
                status=status,
                threshold_percent=threshold,
                trials=row.trials,
                snapshot_trials=entry.trials if entry else None,
                current_total=current,
                snapshot_total=float(entry.median.total) if entry else None,
                change_percent=change,
                fingerprint=row.fingerprint,
                snapshot_fingerprint=entry.fingerprint if entry else None,
            )
        )
    measured = {row_entry_key(r) for r in rows}
    not_run = 0
    for key, entry in entries.items():
        if key in measured:
            continue
        if not is_orphaned(key, measured, scope):
            not_run += 1
            continue
        out.append(
            EntryCheck(
                file=file,
                provider=provider,
                model=model,
                lane=entry.lane,
                case_id=entry.case,
                condition=entry.condition,
                status="orphaned",
                threshold_percent=threshold_percent,
                snapshot_trials=entry.trials,
                snapshot_total=float(entry.median.total),
                snapshot_fingerprint=entry.fingerprint,
            )
        )
    return out, not_run


def merge_file(
    *,
    file: str,
    provider: str,
    model: str,
    rows: Iterable[TokenRow],
    snapshot: SnapshotFile | None,
    run_id: str,
    scope: Collection[EntryKey] | None,
) -> tuple[SnapshotFile, FileUpdate]:
    """Accept a run's rows into a snapshot file: measured entries replaced, orphans removed, the rest kept.

    An entry whose figures and fingerprint did not change is kept as it was (its run id too), so a
    re-update with the same tokens changes no byte. A row without usage keeps the old entry.
    """
    entries = {e.key: e for e in snapshot.entries} if snapshot is not None else {}
    rows = list(rows)
    measured = {row_entry_key(r) for r in rows}
    counts = dict.fromkeys(("new", "updated", "unchanged", "removed", "kept", "missing_usage"), 0)
    merged: dict[EntryKey, SnapshotEntry] = {}
    for key, entry in entries.items():
        if is_orphaned(key, measured, scope):
            counts["removed"] += 1
        else:
            merged[key] = entry
            if key not in measured:
                counts["kept"] += 1
    for row in rows:
        key = row_entry_key(row)
        old = entries.get(key)
        if row.total is None:
            counts["missing_usage"] += 1
            continue
        fresh = entry_from_row(row, run_id=run_id, note=old.note if old else "")
        if old is not None and fresh.judge is None and old.judge is not None:
            fresh = msgspec.structs.replace(fresh, judge=old.judge)  # judged from the cache: nothing measured
        if old is None:
            counts["new"] += 1
        elif _same_measure(old, fresh):
            counts["unchanged"] += 1
            continue
        else:
            counts["updated"] += 1
        merged[key] = fresh
    result = SnapshotFile(provider=provider, model=model, entries=tuple(merged.values()))
    update = FileUpdate(
        file=file,
        provider=provider,
        model=model,
        new=counts["new"],
        updated=counts["updated"],
        unchanged=counts["unchanged"],
        removed=counts["removed"],
        kept=counts["kept"],
        missing_usage=counts["missing_usage"],
    )
    return result, update
