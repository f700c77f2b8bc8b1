"""Report aggregation: per-case stats, condition lifts, providers, baseline pairing, markdown sections."""

from __future__ import annotations

import msgspec
import pytest

from skillgym.events import RunStart
from skillgym.report import build_report, compare_to_baseline, render_markdown
from skillgym.report.baseline import newcombe_interval
from skillgym.results import Grade, TrialPaths, TrialResult


def _start(**changes: object) -> RunStart:
    base = RunStart(
        run_id="r1",
        at=0.0,
        argv=(),
        suite="evals",
        suite_dir="/x",
        run_dir="/x/runs/r1",
        lanes=("prompt", "execution"),
        conditions=("none", "self-load", "preloaded", "stale"),
        providers=("stub",),
        model=None,
        trials=3,
        concurrency=1,
        total_trials=0,
        skill_hash="h" * 64,
    )
    return msgspec.structs.replace(base, **changes)


def _trial(
    case: str,
    condition: str,
    trial: int,
    passed: bool,
    *,
    provider: str = "stub",
    lane: str = "prompt",
    fingerprint: str = "f" * 64,
    errored: bool = False,
) -> TrialResult:
    key = f"{lane}/{case}/{condition}/{provider}/trial-{trial}"
    status = "errored" if errored else ("passed" if passed else "failed")
    return TrialResult(
        key=key,
        lane=lane,
        case_id=case,
        category="c",
        condition=condition,
        provider=provider,  # type: ignore[arg-type]
        model=None,
        trial=trial,
        fingerprint=fingerprint,
        status=status,  # type: ignore[arg-type]
        error_class="timeout" if errored else None,
        error_message="too slow" if errored else None,
        grade=None
        if errored
        else Grade(
            passed=passed,
            score=1.0 if passed else 0.25,
            reasons=() if passed else ("required workflow step 's' failed: x",),
        ),
        started_at=0.0,
        finished_at=1.0,
        duration_s=1.0,
        paths=TrialPaths(dir=key, result=f"{key}/result.json"),
    )


def _lift_results() -> list[TrialResult]:
    # 8 cases: with the skill preloaded every case passes; without it, most fail.
    out = []
    for i in range(8):
        for t in (1, 2, 3):
            out.append(_trial(f"c{i}", "preloaded", t, True))
            out.append(_trial(f"c{i}", "none", t, i == 0 and t == 1))
            out.append(_trial(f"c{i}", "self-load", t, t != 3))
            out.append(_trial(f"c{i}", "stale", t, False))
    return out


def test_case_stats_count_rates_intervals_and_pass_at_k() -> None:
    report = build_report(_start(), _lift_results())
    (stats,) = [s for s in report.cases if s.case_id == "c0" and s.condition == "none"]
    assert (stats.trials, stats.passed, stats.failed, stats.errored) == (3, 1, 2, 0)
    assert stats.pass_rate == pytest.approx(1 / 3)
    assert stats.pass_interval is not None and stats.pass_interval.low < 1 / 3 < stats.pass_interval.high
    assert stats.pass_at_k == {"1": pytest.approx(1 / 3), "3": 1.0}
    assert stats.pass_hat_k == {"1": pytest.approx(1 / 3), "3": 0.0}


def test_condition_lifts_are_paired_per_case_with_verdicts() -> None:
    report = build_report(_start(), _lift_results())
    by_name = {c.comparison.name: c.comparison for c in report.condition_comparisons}
    oracle = by_name["oracle lift (preloaded vs none)"]
    assert oracle.n_pairs == 8 and oracle.wins == 8 and oracle.verdict == "improved"
    realized = by_name["realized lift (self-load vs none)"]
    assert realized.verdict == "improved"
    harm = by_name["stale harm (none vs stale)"]
    assert harm.wins == 1 and harm.ties == 7 and harm.verdict == "inconclusive"  # 1 win of 8 proves nothing


def test_too_few_cases_are_inconclusive_not_improved() -> None:
    results = [r for r in _lift_results() if r.case_id in ("c1", "c2")]
    by_name = {c.comparison.name: c.comparison for c in build_report(_start(), results).condition_comparisons}
    assert by_name["oracle lift (preloaded vs none)"].verdict == "inconclusive"


def test_infrastructure_errors_are_reported_apart_and_rates_shown_both_ways() -> None:
    results = [
        _trial("a", "none", 1, True),
        _trial("a", "none", 2, False),
        _trial("a", "none", 3, False, errored=True),
    ]
    report = build_report(_start(conditions=("none",)), results)
    assert report.errors_by_class == {"timeout": 1}
    (lane,) = report.lane_summaries
    assert lane.pass_rate == pytest.approx(1 / 3)
    assert lane.pass_rate_excluding_errors == pytest.approx(1 / 2)
    md = render_markdown(report)
    assert "Infrastructure errors: timeout 1." in md
    assert "excluding infrastructure errors 50%" in md


def test_lane_interval_treats_the_case_as_the_unit() -> None:
    # 10 trials of one case and 10 of another: two units, not twenty.
    results = [_trial("a", "none", t, True) for t in range(1, 11)] + [
        _trial("b", "none", t, False) for t in range(1, 11)
    ]
    (lane,) = build_report(_start(conditions=("none",)), results).lane_summaries
    assert lane.case_pass_interval is not None
    assert lane.case_pass_interval.low == 0.0 and lane.case_pass_interval.high == 1.0


def test_two_providers_get_a_provider_comparison() -> None:
    results = [_trial(f"c{i}", "none", 1, True, provider="claude") for i in range(8)]
    results += [_trial(f"c{i}", "none", 1, False, provider="codex") for i in range(8)]
    report = build_report(_start(providers=("codex", "claude"), conditions=("none",)), results)
    (comparison,) = report.provider_comparisons
    assert comparison.treatment == "claude" and comparison.control == "codex"
    assert comparison.comparison.verdict == "improved"
    assert "claude vs codex" in render_markdown(report)


def test_baseline_pairs_by_lane_case_condition_provider_and_flags_changed_fingerprints() -> None:
    old = build_report(
        _start(run_id="old"),
        [
            *(_trial("same", "none", t, False) for t in range(1, 11)),
            *(_trial("changed", "none", t, True) for t in range(1, 4)),
            *(_trial("gone", "none", t, True) for t in range(1, 4)),
        ],
    )
    new = build_report(
        _start(),
        [
            *(_trial("same", "none", t, True) for t in range(1, 11)),
            *(_trial("changed", "none", t, True, fingerprint="e" * 64) for t in range(1, 4)),
            *(_trial("fresh", "none", t, True) for t in range(1, 4)),
        ],
    )
    summary = compare_to_baseline(new, old)
    status = {row.case_id: row.status for row in summary.rows}
    assert status == {"same": "improved", "changed": "fingerprint-changed", "fresh": "new", "gone": "missing"}
    assert summary.overall.n_pairs == 1 and summary.overall.verdict == "inconclusive"


def test_newcombe_interval_contains_the_difference() -> None:
    results = [_trial("a", "none", t, t <= 7) for t in range(1, 11)]
    other = [_trial("a", "none", t, t <= 3) for t in range(1, 11)]
    a = build_report(_start(), results).cases[0]
    b = build_report(_start(), other).cases[0]
    interval = newcombe_interval(a, b)
    assert interval is not None and interval[0] < 0.4 < interval[1]


def test_markdown_has_every_section_and_lists_failures_with_reasons() -> None:
    md = render_markdown(build_report(_start(), _lift_results()))
    for heading in (
        "Executive summary",
        "Condition comparison",
        "Lane breakdown",
        "Provider comparison",
        "Failed cases",
        "Trial aggregation",
        "Baseline comparison",
        "Anti-pattern summary",
        "Completeness summary",
    ):
        assert f"\n## {heading}\n" in md
    assert "- `prompt/c1/none/stub/trial-1` (failed)\n  - required workflow step 's' failed: x" in md
    assert render_markdown(build_report(_start(), _lift_results())) == md  # deterministic


def test_a_table_cell_with_a_bar_or_a_line_break_keeps_the_row_intact() -> None:
    odd = msgspec.structs.replace(_trial("a|b", "none", 1, True), case_id="a|b\nc")
    md = render_markdown(build_report(_start(), [odd, _trial("plain", "none", 1, False)]))
    assert "| prompt | a\\|b c | none | stub | 1 | 1/1 |" in md
    assert "| prompt | plain | none | stub | 1 | 0/1 |" in md


def test_case_stats_leave_errored_trials_out_of_scores_only() -> None:
    results = [
        _trial("c", "none", 1, True),
        _trial("c", "none", 2, False),
        _trial("c", "none", 3, False, errored=True),
    ]
    (stats,) = build_report(_start(), results).cases
    assert (stats.trials, stats.passed, stats.failed, stats.errored) == (3, 1, 1, 1)
    assert stats.pass_rate == pytest.approx(1 / 3)
    assert stats.pass_rate_excluding_errors == pytest.approx(1 / 2)
    assert stats.mean_score == pytest.approx((1.0 + 0.25) / 2)
