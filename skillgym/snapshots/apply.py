"""Checking and updating snapshot files from a run's results: at the end of a run (``step``), or afterwards.

Results are grouped per provider and model, one file each (``snapshots/<provider>/<model>.toml``).
Orphans are judged against the suite: an entry is orphaned when the suite no longer has its case in its
lane under its condition. Entries of cases that still exist but that this run did not measure (filtered
by ``--lane``, ``--case`` or ``--condition``) are neither compared nor removed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path

import msgspec

from ..model import Suite
from ..usage import TokenRow
from .compare import check_file, merge_file
from .model import (
    STATUSES,
    EntryCheck,
    EntryKey,
    FileUpdate,
    SnapshotCheck,
    SnapshotUpdate,
)
from .store import locked, provider_files, read_snapshot, snapshot_path, write_snapshot

Budgets = Mapping[tuple[str, str], float | None]


def suite_scope(suite: Suite) -> frozenset[EntryKey]:
    """Every (lane, case, condition) the suite defines: what an entry must match not to be orphaned."""
    return frozenset((case.lane, case.id, condition) for case in suite.cases for condition in case.conditions)


def suite_budgets(suite: Suite) -> dict[tuple[str, str], float | None]:
    """Each case's own regression threshold (``c.token_budget(max_regression_percent=...)``), if any."""
    return {(case.lane, case.id): case.token_budget.max_regression_percent for case in suite.cases}


def by_file(rows: Iterable[TokenRow]) -> dict[tuple[str, str], list[TokenRow]]:
    """Rows per (provider, model): one snapshot file each."""
    files: dict[tuple[str, str], list[TokenRow]] = defaultdict(list)
    for row in rows:
        files[(row.provider, row.model)].append(row)
    return dict(sorted(files.items()))


def preflight(directory: str | Path, providers: Iterable[str]) -> None:
    """Read every existing snapshot file of ``providers``: a broken one stops a run before it starts."""
    for provider in providers:
        for path in provider_files(directory, provider):
            read_snapshot(path, provider=provider)


def check_rows(
    rows: Sequence[TokenRow],
    *,
    directory: str | Path,
    threshold_percent: float,
    enforce: bool = False,
    budgets: Budgets,
    scope: Collection[EntryKey] | None,
    notes: Sequence[str] = (),
) -> SnapshotCheck:
    """Compare a run's rows with their snapshot files (read, never written)."""
    checks: list[EntryCheck] = []
    files: list[str] = []
    not_run = 0
    for (provider, model), group in by_file(rows).items():
        path = snapshot_path(directory, provider, model)
        files.append(str(path))
        found, skipped = check_file(
            file=str(path),
            provider=provider,
            model=model,
            rows=group,
            snapshot=read_snapshot(path, provider=provider, model=model),
            threshold_percent=threshold_percent,
            budgets=budgets,
            scope=scope,
        )
        checks += found
        not_run += skipped
    counts: dict[str, int] = {s: n for s in STATUSES if (n := sum(c.status == s for c in checks))}
    extra = (
        () if scope is not None else ("the suite was not available, so orphaned entries were not looked for",)
    )
    return SnapshotCheck(
        directory=str(directory),
        threshold_percent=threshold_percent,
        enforce=enforce,
        files=tuple(files),
        rows=tuple(checks),
        counts=counts,
        not_run=not_run,
        notes=(*notes, *extra),
    )


def update_rows(
    rows: Sequence[TokenRow],
    *,
    directory: str | Path,
    run_id: str,
    scope: Collection[EntryKey] | None,
    notes: Sequence[str] = (),
) -> SnapshotUpdate:
    """Accept a run's rows: each file is read, merged and replaced under its lock (a broken file is kept)."""
    updates: list[FileUpdate] = []
    for (provider, model), group in by_file(rows).items():
        path = snapshot_path(directory, provider, model)
        with locked(path):
            current = read_snapshot(path, provider=provider, model=model)
            merged, update = merge_file(
                file=str(path),
                provider=provider,
                model=model,
                rows=group,
                snapshot=current,
                run_id=run_id,
                scope=scope,
            )
            written = False
            if current is not None or merged.entries:  # no usage and no file yet: create nothing
                written = write_snapshot(path, merged)
        updates.append(msgspec.structs.replace(update, written=written))
    return SnapshotUpdate(directory=str(directory), files=tuple(updates), notes=tuple(notes))
