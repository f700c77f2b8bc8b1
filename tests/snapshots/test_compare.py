"""Statuses and merges as pure functions: thresholds, budgets, stale, orphaned, missing usage."""

from __future__ import annotations

import msgspec
import pytest

from skillgym.report.tokens import TokenRow
from skillgym.snapshots import Figures, FileUpdate, SnapshotEntry, SnapshotFile
from skillgym.snapshots.compare import check_file, classify, entry_from_row, merge_file
from skillgym.snapshots.store import render_snapshot
from skillgym.stats import Summary

FP = "a" * 64


def row(case: str, total: float | None, *, trials: int = 3, fingerprint: str = FP) -> TokenRow:
    summary = (
        None if total is None else Summary(n=trials, median=total, low=total - 10, high=total + 10, iqr=5)
    )
    return TokenRow(
        lane="prompt",
        case_id=case,
        condition="none",
        provider="command",
        model="default",
        fingerprint=fingerprint,
        trials=0 if total is None else trials,
        missing=trials if total is None else 0,
        total=summary,
    )


def entry(case: str, total: float, *, fingerprint: str = FP, note: str = "") -> SnapshotEntry:
    figures = Figures(total=total)
    return SnapshotEntry(
        lane="prompt",
        case=case,
        condition="none",
        fingerprint=fingerprint,
        trials=3,
        run="old-run",
        note=note,
        median=figures,
        min=Figures(total=total - 10),
        max=Figures(total=total + 10),
    )


def file(*entries: SnapshotEntry) -> SnapshotFile:
    return SnapshotFile(provider="command", model="default", entries=entries)


@pytest.mark.parametrize(
    ("current", "snapshot", "threshold", "expected"),
    [
        (120, 100, 20, ("unchanged", 20.0)),  # exactly at the threshold is not more than it
        (121, 100, 20, ("regressed", 21.0)),
        (130, 100, 20, ("regressed", 30.0)),
        (130, 100, 30, ("unchanged", 30.0)),
        (79, 100, 20, ("improved", -21.0)),
        (80, 100, 20, ("unchanged", -20.0)),
        (100, 100, 0, ("unchanged", 0.0)),
        (101, 100, 0, ("regressed", 1.0)),
        (0, 0, 20, ("unchanged", 0.0)),
        (5, 0, 20, ("regressed", None)),
    ],
)
def test_classify(
    current: float, snapshot: float, threshold: float, expected: tuple[str, float | None]
) -> None:
    assert classify(current, snapshot, threshold) == expected


def _check(rows: list[TokenRow], snap: SnapshotFile | None, **kw: object) -> dict[str, str]:
    found, _ = check_file(
        file="f.toml",
        provider="command",
        model="default",
        rows=rows,
        snapshot=snap,
        threshold_percent=kw.get("threshold", 20.0),  # type: ignore[arg-type]
        budgets=kw.get("budgets", {}),  # type: ignore[arg-type]
        scope=kw.get("scope"),  # type: ignore[arg-type]
    )
    return {c.case_id: c.status for c in found}


def test_every_status() -> None:
    rows = [
        row("new", 100),
        row("same", 110),
        row("up", 200),
        row("down", 50),
        row("changed", 100, fingerprint="b" * 64),
        row("quiet", None),
    ]
    snap = file(
        entry("same", 100), entry("up", 100), entry("down", 100), entry("changed", 10), entry("gone", 100)
    )
    scope = {("prompt", c, "none") for c in ("new", "same", "up", "down", "changed", "quiet")}
    assert _check(rows, snap, scope=scope) == {
        "new": "new",
        "same": "unchanged",
        "up": "regressed",
        "down": "improved",
        "changed": "stale",
        "quiet": "missing-usage",
        "gone": "orphaned",
    }


def test_not_run_entries_of_existing_cases_are_neither_compared_nor_orphaned() -> None:
    snap = file(entry("ran", 100), entry("filtered-out", 100), entry("deleted", 100))
    scope = {("prompt", "ran", "none"), ("prompt", "filtered-out", "none")}
    found, not_run = check_file(
        file="f.toml",
        provider="command",
        model="default",
        rows=[row("ran", 100)],
        snapshot=snap,
        threshold_percent=20,
        budgets={},
        scope=scope,
    )
    assert {c.case_id: c.status for c in found} == {"ran": "unchanged", "deleted": "orphaned"}
    assert not_run == 1
    # Without the suite nothing can be called orphaned.
    assert _check([row("ran", 100)], snap, scope=None) == {"ran": "unchanged"}


def test_a_case_budget_beats_the_threshold() -> None:
    snap = file(entry("tight", 100), entry("loose", 100), entry("default", 100))
    rows = [row("tight", 112), row("loose", 140), row("default", 112)]
    budgets = {("prompt", "tight"): 10.0, ("prompt", "loose"): 50.0, ("prompt", "default"): None}
    assert _check(rows, snap, budgets=budgets) == {
        "tight": "regressed",
        "loose": "unchanged",
        "default": "unchanged",
    }


def test_entry_from_row_keeps_median_and_spread() -> None:
    made = entry_from_row(row("c", 100.5, trials=4), run_id="r1")
    assert (made.median.total, made.min.total, made.max.total) == (100.5, 90.5, 110.5)
    assert made.median.input is None
    assert (made.trials, made.run, made.fingerprint) == (4, "r1", FP)
    assert type(entry_from_row(row("c", 100.0), run_id="r").median.total) is int


def _merge(
    rows: list[TokenRow], snap: SnapshotFile | None, scope: set[tuple[str, str, str]] | None = None
) -> tuple[SnapshotFile, FileUpdate]:
    return merge_file(
        file="f.toml",
        provider="command",
        model="default",
        rows=rows,
        snapshot=snap,
        run_id="new-run",
        scope=scope,
    )


def test_merge_replaces_measured_keeps_others_and_removes_orphans() -> None:
    same = entry_from_row(row("same", 100), run_id="old-run", note="checked by hand")
    snap = file(
        same, entry("moved", 100, note="keep me"), entry("quiet", 70), entry("other", 100), entry("gone", 1)
    )
    rows = [row("same", 100), row("moved", 150), row("quiet", None), row("new", 10)]
    scope = {("prompt", c, "none") for c in ("same", "moved", "quiet", "other", "new")}
    merged, update = _merge(rows, snap, scope)
    by = {e.case: e for e in merged.entries}
    assert sorted(by) == ["moved", "new", "other", "quiet", "same"]
    assert by["same"] == same  # same figures: untouched, old run id and note kept
    assert (by["moved"].median.total, by["moved"].run, by["moved"].note) == (150, "new-run", "keep me")
    assert by["quiet"].median.total == 70  # no usage now: the old entry stays
    assert by["new"].run == "new-run"
    assert (
        update.new,
        update.updated,
        update.unchanged,
        update.removed,
        update.kept,
        update.missing_usage,
    ) == (
        1,
        1,
        1,
        1,
        1,
        1,
    )


def test_merge_into_nothing() -> None:
    merged, update = _merge([row("a", 1)], None)
    assert [e.case for e in merged.entries] == ["a"]
    assert update.new == 1


def test_judge_tokens_sit_under_their_own_key_and_survive_a_run_judged_from_the_cache() -> None:
    judged = msgspec.structs.replace(
        row("j", 100.0), judge_trials=3, judge_total=Summary(n=3, median=40.0, low=30, high=50, iqr=5)
    )
    fresh = entry_from_row(judged, run_id="r1")
    assert fresh.median == Figures(total=100) and fresh.judge == Figures(total=40)
    text = render_snapshot(SnapshotFile(provider="command", model="default", entries=(fresh,)))
    assert "[entry.judge]\ntotal = 40\n" in text
    assert read_back(text).entries[0].judge == Figures(total=40)
    # A later run whose verdicts all came from the cache measured no judge tokens: the figures stay.
    merged, _ = merge_file(
        file="f.toml",
        provider="command",
        model="default",
        rows=[row("j", 100.0)],
        snapshot=SnapshotFile(provider="command", model="default", entries=(fresh,)),
        run_id="r2",
        scope=None,
    )
    assert merged.entries[0].judge == Figures(total=40) and merged.entries[0].run == "r1"


def read_back(text: str) -> SnapshotFile:
    from skillgym.snapshots.store import parse_snapshot

    return parse_snapshot(text.encode(), "f.toml")
