"""skillgym compare: pairing, each change, fingerprint changes, flaky cases, what fails it, its pages."""

from __future__ import annotations

import json
from collections.abc import Sequence

import msgspec
import pytest

from skillgym.errors import UsageError
from skillgym.report import build_report, compare_to_baseline
from skillgym.report.aggregate import Report
from skillgym.report.comparison import compare_runs, render_html, render_json, render_md
from skillgym.report.comparison_md import comparison_lines
from skillgym.report.flaky import flaky_cases, flip_rate, telling_k
from skillgym.results import ErrorClass
from skillgym.score_intervals import rate_difference_interval
from tests.unit.test_report import _start, _trial


def _run(run_id: str, cases: dict[str, Sequence[bool | ErrorClass]], **fingerprints: str) -> Report:
    """A run whose case ``name`` has one trial per outcome (True passes, False fails, a class errors)."""
    trials = [
        _trial(
            name,
            "none",
            n,
            outcome is True,
            error=None if isinstance(outcome, bool) else outcome,
            fingerprint=fingerprints.get(name, "f" * 64),
        )
        for name, outcomes in cases.items()
        for n, outcome in enumerate(outcomes, start=1)
    ]
    return build_report(_start(run_id=run_id), trials)


PASS5, FAIL5 = [True] * 5, [False] * 5


def _changes(baseline: Report, current: Report) -> dict[str, str]:
    return {r.case_id: r.change or "" for r in compare_to_baseline(current, baseline).rows}


def test_each_change_is_named_and_counted() -> None:
    before = _run(
        "a",
        {"steady": PASS5, "breaks": PASS5, "fixes": FAIL5, "wobbles": [True] * 3 + [False] * 2, "gone": PASS5}
        | {"edited": PASS5, "down": PASS5},
    )
    after = _run(
        "b",
        {
            "steady": PASS5,
            "breaks": FAIL5,
            "fixes": PASS5,
            "wobbles": [True] * 2 + [False] * 3,
            "fresh": PASS5,
        }
        | {"edited": PASS5, "down": ["provider-unavailable"] * 5},
        edited="e" * 64,
    )
    summary = compare_to_baseline(after, before)
    assert _changes(before, after) == {
        "steady": "unchanged",
        "breaks": "regressed",
        "fixes": "fixed",
        "wobbles": "inconclusive",
        "fresh": "new",
        "gone": "removed",
        "edited": "fingerprint-changed",
        "down": "left-out",
    }
    assert summary.changes == {
        "fixed": 1,
        "regressed": 1,
        "unchanged": 1,
        "inconclusive": 1,
        "new": 1,
        "removed": 1,
        "fingerprint-changed": 1,
        "left-out": 1,
    }
    # The older words stay in `status` for what reads report.json today.
    status = {r.case_id: r.status for r in summary.rows}
    assert status["fixes"] == "improved" and status["gone"] == "missing"
    assert (summary.current_run, summary.baseline_run) == ("b", "a")


def test_a_compared_row_carries_counts_interval_and_test() -> None:
    summary = compare_to_baseline(_run("b", {"c": FAIL5, "d": PASS5}), _run("a", {"c": PASS5, "d": PASS5}))
    row = next(r for r in summary.rows if r.case_id == "c")
    assert (row.baseline_passed, row.baseline_trials, row.current_passed, row.current_trials) == (5, 5, 0, 5)
    assert row.interval is not None and row.interval.high < 0.0  # 0/5 against 5/5
    assert row.p_value == pytest.approx(2 / 252) and row.p_holm == pytest.approx(4 / 252)
    assert row.test == ("two-sided Fisher exact test over trials; Holm's step-down over 2 compared row(s)")
    assert summary.row_test == row.test and summary.overall_test is not None


def test_a_changed_fingerprint_is_flagged_never_compared() -> None:
    # Identical outcomes would read "unchanged": the case changed, so the rates measure different things.
    summary = compare_to_baseline(_run("b", {"c": FAIL5}, c="e" * 64), _run("a", {"c": PASS5}))
    (row,) = summary.rows
    assert row.change == "fingerprint-changed"
    assert row.delta is None and row.p_value is None and row.interval is None and row.test is None
    assert summary.overall.n_pairs == 0 and summary.overall.verdict == "inconclusive"
    md = "\n".join(comparison_lines(summary, None))
    assert "**Fingerprint changed** (not compared" in md and "`prompt/c`" in md


def test_the_newcombe_difference_interval_matches_the_published_example() -> None:
    # Newcombe (1998), Statistics in Medicine 17:873, table II, example (a): 56/70 - 48/80, method 10.
    interval = rate_difference_interval(56, 70, 48, 80)
    assert interval is not None
    assert (round(interval.low, 4), round(interval.high, 4)) == (0.0524, 0.3339)
    assert rate_difference_interval(0, 0, 1, 1) is None


def test_flip_rate_and_pass_hat_k_have_their_exact_values() -> None:
    assert flip_rate(2, 4) == pytest.approx(8 / 12)  # 2 x 2 mixed pairs of the 6
    assert flip_rate(3, 5) == pytest.approx(0.6)
    assert flip_rate(5, 5) == 0.0 and flip_rate(1, 1) == 0.0
    report = _run("r", {"mixed": [True] * 3 + [False] * 2, "solid": PASS5, "dead": FAIL5})
    (flaky,) = flaky_cases(report.cases)
    assert (flaky.case_id, flaky.passed, flaky.trials) == ("mixed", 3, 5)
    assert flaky.pass_hat_k == pytest.approx({"1": 0.6, "3": 0.1, "5": 0.0})  # C(3,3)/C(5,3) = 1/10
    assert telling_k(flaky) == 3


def test_flaky_cases_count_only_trials_for_verdicts_and_sort_by_flips() -> None:
    report = _run(
        "r",
        {
            # 4 passes and an outage: the outage says nothing, so the case is steady, not flaky.
            "outage": [True] * 4 + ["environment-error"],
            # A timeout is the agent's failure: 1 of 2 disagree.
            "slow": [True, "timeout"],
            "mostly": [True] * 4 + [False],
        },
    )
    flaky = flaky_cases(report.cases)
    assert [f.case_id for f in flaky] == ["slow", "mostly"]
    assert flaky[0].flip_rate == 1.0 and flaky[1].flip_rate == pytest.approx(0.4)


def test_both_runs_flaky_sections_come_with_the_comparison() -> None:
    before = _run("a", {"c": [True, False, True]})
    after = _run("b", {"c": PASS5[:3], "d": [False, True]})
    summary = compare_to_baseline(after, before)
    assert [f.case_id for f in summary.flaky_baseline] == ["c"]
    assert [f.case_id for f in summary.flaky_current] == ["d"]
    md = "\n".join(comparison_lines(summary, None))
    assert (
        "### Flaky cases, baseline run a" in md
        and "| prompt | c | none | stub | 2/3 | 67% | pass^1 67% |" in md
    )
    assert (
        "### Flaky cases, current run b" in md
        and "| prompt | d | none | stub | 1/2 | 100% | pass^1 50% |" in md
    )


def test_a_conclusive_regression_is_listed_an_inconclusive_one_is_not() -> None:
    sources = ("A", "B")
    clear = compare_runs(_run("a", {"c": PASS5}), _run("b", {"c": FAIL5}), sources=sources)
    assert clear.regressions == ("prompt/c/none/stub",)
    # 3/5 to 1/5 is a drop, but Fisher's p is 0.52: not conclusive.
    murky = compare_runs(
        _run("a", {"c": [True] * 3 + [False] * 2}), _run("b", {"c": [True] + [False] * 4}), sources=sources
    )
    assert murky.regressions == () and murky.comparison.rows[0].change == "inconclusive"


def test_the_overall_verdict_regressing_fails_too() -> None:
    # Twelve cases each drop 2/3 -> 1/3: no row is conclusive alone, the paired per-case verdict is.
    names = [f"c{i}" for i in range(12)]
    before = _run("a", {n: [True, True, False] for n in names})
    after = _run("b", {n: [True, False, False] for n in names})
    comparison = compare_runs(before, after, sources=("A", "B"))
    assert all(r.change == "inconclusive" for r in comparison.comparison.rows)
    assert comparison.comparison.overall.verdict == "regressed"
    assert comparison.regressions == ("overall (paired per case)",)


def test_runs_with_no_case_in_common_are_refused() -> None:
    with pytest.raises(UsageError, match=r"have no case in common, so nothing pairs"):
        compare_runs(_run("a", {"x": PASS5}), _run("b", {"y": PASS5}), sources=("A", "B"))


def test_json_holds_the_very_comparison_report_json_would() -> None:
    before, after = _run("a", {"c": PASS5}), _run("b", {"c": FAIL5})
    doc = json.loads(render_json(compare_runs(before, after, sources=("A", "B"))))
    with_baseline = msgspec.structs.replace(after, baseline=compare_to_baseline(after, before))
    from_report = json.loads(msgspec.json.encode(with_baseline))["baseline"]
    assert doc["comparison"] == from_report
    assert doc["regressions"] == ["prompt/c/none/stub"]
    assert (doc["baseline_source"], doc["current_source"]) == ("A", "B")


def test_markdown_is_report_mds_baseline_section_under_a_header() -> None:
    comparison = compare_runs(_run("a", {"c": PASS5}), _run("b", {"c": FAIL5}), sources=("A", "B"))
    md = render_md(comparison)
    assert md.startswith("# skillgym compare — a → b\n")
    assert "- Conclusive regressions: `prompt/c/none/stub`." in md
    assert "\n".join(comparison_lines(comparison.comparison, "A")) in md


def test_html_is_self_contained_and_escapes_the_users_text() -> None:
    before = _run("a", {"<b>x</b>": PASS5, "wobble": [True, False]})
    after = _run("b", {"<b>x</b>": FAIL5, "wobble": [True, True]})
    page = render_html(compare_runs(before, after, sources=("A&1", "B")))
    assert "<script" not in page and "http" not in page and "@import" not in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page and "A&amp;1" in page
    assert 'data-change="regressed"' in page and "Flaky cases, baseline (A) run a" in page
