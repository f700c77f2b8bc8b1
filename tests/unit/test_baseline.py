"""--compare-baseline: per-case pairing, graded trials only, and reading reports of other schema versions."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from skillgym.errors import UsageError
from skillgym.report import build_report, compare_to_baseline, load_report, render_markdown
from skillgym.report.aggregate import REPORT_SCHEMA, BaselineRow
from skillgym.reporters.final import write_report
from tests.unit.test_report import _start, _trial

SCHEMA_1 = Path(__file__).parent / "data" / "report-schema-1.json"  # written by skillgym before schema 2
CONDITIONS = ("none", "self-load", "preloaded", "stale")


def test_overall_pairs_per_case_not_per_condition_row() -> None:
    # 2 cases x 4 conditions: two units of evidence, not eight (which would read as p < 0.01).
    old = build_report(_start(run_id="old"), [_trial(c, k, 1, False) for c in "ab" for k in CONDITIONS])
    new = build_report(_start(), [_trial(c, k, 1, True) for c in "ab" for k in CONDITIONS])
    summary = compare_to_baseline(new, old)
    assert len(summary.rows) == 8
    assert summary.overall.n_pairs == 2
    assert summary.overall.verdict == "inconclusive"


def test_overall_averages_a_cases_compared_rows() -> None:
    old = build_report(_start(run_id="old"), [_trial("a", k, 1, False) for k in ("none", "stale")])
    new = build_report(_start(), [_trial("a", "none", 1, True), _trial("a", "stale", 1, False)])
    overall = compare_to_baseline(new, old).overall
    assert overall.n_pairs == 1 and overall.mean_diff == pytest.approx(0.5)


def test_rows_leave_out_errors_not_the_agents_and_count_its_own_as_failures() -> None:
    old = build_report(
        _start(run_id="old"),
        [
            *(_trial("flaky", "none", t, True) for t in range(1, 11)),
            *(_trial("down", "none", t, True) for t in range(1, 4)),
            *(_trial("slow", "none", t, True) for t in range(1, 4)),
        ],
    )
    new = build_report(
        _start(),
        [
            # Five environment errors say nothing about the agent: 5 of 5 left is still 100%.
            *(_trial("flaky", "none", t, True) for t in range(1, 6)),
            *(_trial("flaky", "none", t, False, error="environment-error") for t in range(6, 11)),
            *(_trial("down", "none", t, False, error="provider-unavailable") for t in range(1, 4)),
            # Three timeouts are the agent's: it passed 3 of 3 and now none, not "nothing to compare".
            *(_trial("slow", "none", t, False, error="timeout") for t in range(1, 4)),
        ],
    )
    summary = compare_to_baseline(new, old)
    rows = {r.case_id: r for r in summary.rows}
    assert rows["flaky"].status == "unchanged" and rows["flaky"].delta == 0.0
    assert rows["flaky"].current_pass_rate_for_verdicts == 1.0
    assert (rows["flaky"].current_errored, rows["flaky"].current_errored_not_agents) == (5, 5)
    assert rows["down"].status == "left-out" and rows["down"].delta is None
    assert rows["down"].current_pass_rate_for_verdicts is None
    # The timeouts are failures like any other: 3 of 3 to 0 of 3 (Fisher p = 0.1, Holm over the two
    # compared rows 0.2) is no flag by itself, and no error makes it depend on anything.
    assert rows["slow"].status == "inconclusive" and rows["slow"].delta == -1.0
    assert rows["slow"].depends_on_errors == 0
    assert rows["slow"].p_value == pytest.approx(0.1) and rows["slow"].p_holm == pytest.approx(0.2)
    assert (rows["slow"].current_errored, rows["slow"].current_errored_not_agents) == (3, 0)
    assert summary.overall.n_pairs == 2 and summary.cases_left_out_for_errors == 1
    report = msgspec.structs.replace(new, baseline=summary, baseline_report="/runs/old/report.json")
    md = render_markdown(report)
    assert "Against run old (`/runs/old/report.json`): overall **inconclusive** over 2 case(s); " in md
    assert "1 case left out: errors not the agent's." in md
    assert (
        "| prompt | flaky | none | stub | 100% | 100% (5 errored, 5 left out) | +0 pts | [-43, +28] | 1 | 1 "
        "| unchanged |" in md
    )
    assert (
        "| prompt | down | none | stub | 100% | - (3 errored, 3 left out) | - | - | - | - | left-out |" in md
    )
    assert (
        "| prompt | slow | none | stub | 100% | 0% (3 errored) | -100 pts | [-100, -21] | 0.1 | 0.2 "
        "| inconclusive |" in md
    )


def test_an_overall_verdict_a_burst_of_provider_errors_decides_is_inconclusive() -> None:
    # Every case passed 3 of 3 before; now 1 of 3, the other 2 provider errors (a rate limit, say).
    cases = [f"c{i}" for i in range(10)]
    old = build_report(_start(run_id="old"), [_trial(c, "none", t, True) for c in cases for t in (1, 2, 3)])
    new = build_report(
        _start(),
        [_trial(c, "none", 1, True) for c in cases]
        + [_trial(c, "none", t, False, error="provider-error") for c in cases for t in (2, 3)],
    )
    summary = compare_to_baseline(new, old)
    assert summary.overall.verdict == "inconclusive" and summary.overall_depends_on_errors == 20
    assert summary.overall.mean_diff == pytest.approx(-2 / 3)
    report = msgspec.structs.replace(new, baseline=summary)
    md = render_markdown(report)
    assert "overall **inconclusive: the verdict depends on 20 provider errors** over 10 case(s)" in md


def test_an_overall_verdict_timeouts_do_not_decide_stands() -> None:
    cases = [f"c{i}" for i in range(10)]
    old = build_report(_start(run_id="old"), [_trial(c, "none", t, False) for c in cases for t in (1, 2, 3)])
    new = build_report(
        _start(),
        [_trial(c, "none", t, True) for c in cases for t in (1, 2)]
        + [_trial(c, "none", 3, False, error="timeout") for c in cases],
    )
    summary = compare_to_baseline(new, old)
    assert summary.overall.verdict == "improved" and summary.overall_depends_on_errors == 0


def test_a_changed_fingerprint_has_no_delta() -> None:
    old = build_report(_start(run_id="old"), [_trial("a", "none", t, False) for t in (1, 2, 3)])
    new = build_report(_start(), [_trial("a", "none", t, True, fingerprint="e" * 64) for t in (1, 2, 3)])
    (row,) = compare_to_baseline(new, old).rows
    assert row.status == "fingerprint-changed" and row.delta is None
    md = render_markdown(msgspec.structs.replace(new, baseline=compare_to_baseline(new, old)))
    assert "| prompt | a | none | stub | 0% | 100% | - | - | - | - | fingerprint-changed |" in md


def _flip_among(unchanged: int) -> BaselineRow:
    """The row of a case that went from 0 of 5 to 5 of 5, compared beside ``unchanged`` steady cases."""
    steady = [f"s{i}" for i in range(unchanged)]
    old = build_report(
        _start(run_id="old"),
        [_trial("flip", "none", t, False) for t in range(1, 6)]
        + [_trial(c, "none", t, t <= 2) for c in steady for t in range(1, 6)],
    )
    new = build_report(
        _start(),
        [_trial("flip", "none", t, True) for t in range(1, 6)]
        + [_trial(c, "none", t, t <= 2) for c in steady for t in range(1, 6)],
    )
    return next(r for r in compare_to_baseline(new, old).rows if r.case_id == "flip")


def test_a_row_is_flagged_by_its_holm_adjusted_p_and_keeps_the_raw_one() -> None:
    alone = _flip_among(0)
    assert alone.p_value == pytest.approx(2 / 252)  # Fisher: 0/5 against 5/5
    assert alone.p_holm == alone.p_value and alone.status == "improved"
    # Among 19 steady cases the same change is one of 20 tests: Holm multiplies its p by 20.
    crowded = _flip_among(19)
    assert crowded.p_value == alone.p_value and crowded.p_holm == pytest.approx(20 * 2 / 252)
    assert crowded.status == "inconclusive"
    report = build_report(_start(), [_trial("flip", "none", t, True) for t in range(1, 6)])
    old = build_report(_start(run_id="old"), [_trial("flip", "none", t, False) for t in range(1, 6)])
    md = render_markdown(msgspec.structs.replace(report, baseline=compare_to_baseline(report, old)))
    assert (
        "| prompt | flip | none | stub | 0% | 100% | +100 pts | [+39, +100] | 0.00794 | 0.00794 | fixed |"
        in md
    )
    assert "its **Holm**-adjusted p (over every compared row) is below 0.05" in md


def test_a_baseline_that_could_not_be_read_is_named_in_the_report() -> None:
    report = msgspec.structs.replace(
        build_report(_start(baseline_report="/runs/old/report.json"), [_trial("a", "none", 1, True)]),
        baseline_problem="not found",
    )
    md = render_markdown(report)
    assert "This run named the baseline `/runs/old/report.json`; it was not compared when this report" in md
    assert "was built: not found." in md
    assert "No baseline given" not in md


def _write(tmp_path: Path, doc: dict[str, object]) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_report_newer_than_this_version_is_refused_with_the_fix(tmp_path: Path) -> None:
    doc = json.loads(SCHEMA_1.read_text())
    doc["schema"] = 99
    with pytest.raises(UsageError) as caught:
        load_report(_write(tmp_path, doc))
    message = str(caught.value)
    assert f"baseline report {tmp_path / 'report.json'} has report schema 99" in message  # what and where
    assert f"newer than this skillgym reads (schema {REPORT_SCHEMA} and earlier)" in message
    assert "upgrade skillgym" in message  # how


def test_a_report_without_a_schema_is_not_a_skillgym_report(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a skillgym report"):
        load_report(_write(tmp_path, {"run_id": "x"}))
    with pytest.raises(UsageError, match="report schema 0, which no skillgym writes"):
        load_report(_write(tmp_path, {"schema": 0}))


def test_a_schema_1_report_keeps_its_cases_and_drops_what_it_computed_differently() -> None:
    report = load_report(SCHEMA_1)
    assert report.schema == 1
    assert len(report.cases) == 4 and report.counts.errored == 1
    # Its comparisons counted errored trials as failures; not passed off as this version's.
    assert report.condition_comparisons == () and report.baseline is None
    assert report.condition_summaries == ()
    (lane,) = report.lane_summaries
    assert lane.counts.total == 8


def test_a_schema_1_reports_cases_get_their_rates_for_verdicts_from_the_failures_listed(
    tmp_path: Path,
) -> None:
    cases = {(c.case_id, c.condition): c for c in load_report(SCHEMA_1).cases}
    timed_out = cases[("wait-for-output", "self-load")]  # its errored trial is a timeout: the agent's
    assert (timed_out.errored, timed_out.errored_not_agents, timed_out.pass_rate_for_verdicts) == (1, 0, 0.5)
    assert cases[("plain-edit", "none")].pass_rate_for_verdicts == 1.0
    doc = json.loads(SCHEMA_1.read_text())
    for failure in doc["failures"]:
        if failure["status"] == "errored":
            failure["error_class"] = "environment-error"
    (case,) = [c for c in load_report(_write(tmp_path, doc)).cases if c.errored]
    assert (case.errored_not_agents, case.verdict_trials, case.pass_rate_for_verdicts) == (1, 1, 1.0)


def test_this_version_compares_with_a_schema_1_baseline() -> None:
    baseline = load_report(SCHEMA_1)
    current = build_report(
        _start(),
        [_trial("wait-for-output", "none", t, True) for t in (1, 2)]
        + [_trial("wait-for-output", "self-load", t, True) for t in (1, 2)],
    )
    summary = compare_to_baseline(current, baseline)
    rows = {(r.case_id, r.condition): r for r in summary.rows}
    # 1 pass and 1 timeout: the timeout is the agent's, a failure.
    assert rows[("wait-for-output", "self-load")].baseline_pass_rate_for_verdicts == 0.5
    assert rows[("wait-for-output", "none")].delta == pytest.approx(0.5)
    assert rows[("plain-edit", "none")].status == "missing"
    assert summary.overall.n_pairs == 1


def test_a_report_this_version_writes_loads_back_unchanged(tmp_path: Path) -> None:
    report = build_report(_start(), [_trial("a", "none", t, t == 1) for t in (1, 2, 3)])
    write_report(tmp_path, report)
    assert load_report(tmp_path) == report
