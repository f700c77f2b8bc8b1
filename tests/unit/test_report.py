"""Report aggregation: per-case stats, condition lifts, providers, baseline pairing, markdown sections."""

from __future__ import annotations

import random
from typing import get_args

import msgspec
import pytest

from skillgym.events import RunStart
from skillgym.identity import trial_id
from skillgym.paired import mcnemar_exact_p, sign_test_p
from skillgym.report import Report, build_report, compare_to_baseline, render_markdown
from skillgym.report.aggregate import PairedComparison
from skillgym.results import NOT_THE_AGENTS, ErrorClass, Grade, TrialPaths, TrialResult
from skillgym.score_intervals import bounded_mean_interval, suite_pass_interval


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
    error: ErrorClass | None = None,
) -> TrialResult:
    """One trial; ``error`` makes it errored with that class (``passed`` is then ignored)."""
    key = f"{lane}/{case}/{condition}/{provider}/trial-{trial}"
    errored = error is not None
    status = "errored" if errored else ("passed" if passed else "failed")
    return TrialResult(
        id=trial_id(
            lane=lane,  # type: ignore[arg-type]
            case_id=case,
            condition=condition,
            provider=provider,
            trial=trial,
            fingerprint=fingerprint,
        ),
        category="c",
        model=None,
        status=status,  # type: ignore[arg-type]
        error_class=error,
        error_message=f"{error}: details" if errored else None,
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
    results = [r for r in _lift_results() if r.id.case_id in ("c1", "c2")]
    by_name = {c.comparison.name: c.comparison for c in build_report(_start(), results).condition_comparisons}
    assert by_name["oracle lift (preloaded vs none)"].verdict == "inconclusive"


def test_errored_trials_are_reported_by_class_and_rates_shown_both_ways() -> None:
    results = [
        _trial("a", "none", 1, True),
        _trial("a", "none", 2, False),
        _trial("a", "none", 3, False, error="timeout"),
        _trial("a", "none", 4, False, error="environment-error"),
    ]
    report = build_report(_start(conditions=("none",)), results)
    assert report.errors_by_class == {"environment-error": 1, "timeout": 1}
    (lane,) = report.lane_summaries
    assert lane.pass_rate == pytest.approx(1 / 4)
    assert lane.pass_rate_excluding_errors == pytest.approx(1 / 2)
    md = render_markdown(report)
    assert (
        "- Errored trials by class: timeout 1 (the agent's: failures in comparisons); "
        "environment-error 1 (not the agent's: left out of comparisons)." in md
    )
    assert (
        "(pass rate 25% over every trial; 33% for verdicts, over every trial but errors not the agent's; "
        "50% excluding every errored trial, timeouts and provider errors too)." in md
    )
    assert lane.pass_rate_for_verdicts == pytest.approx(1 / 3)
    assert "| pass rate | for verdicts | excl. errors | mean case score |" in md
    assert "| prompt | 1 | 4 | 1 | 1 | 2 | 25% | 33% | 50% |" in md
    assert "`for verdicts` over every trial but errors not\nthe agent's" in md
    assert (
        "`excl. errors` over\ngraded trials (every errored trial left out, timeouts and provider errors too)"
        in md
    )


def test_only_timeouts_and_provider_errors_are_the_agents_among_the_error_classes() -> None:
    # A new error class must be placed on purpose: it decides whether verdicts count it as a failure.
    assert set(get_args(ErrorClass)) - set(NOT_THE_AGENTS) == {"timeout", "provider-error"}
    assert set(NOT_THE_AGENTS) == {"provider-unavailable", "environment-error", "grader-error", "interrupted"}


def test_case_level_interval_treats_the_case_as_the_unit() -> None:
    # 10 trials of one case and 10 of another: two units, not twenty.
    results = [_trial("a", "none", t, True) for t in range(1, 11)] + [
        _trial("b", "none", t, False) for t in range(1, 11)
    ]
    (summary,) = build_report(_start(conditions=("none",)), results).condition_summaries
    assert summary.case_pass_interval is not None
    # Two cases at opposite ends: the interval spans nearly everything, as twenty trials would not.
    assert summary.case_pass_interval.low < 0.01 and summary.case_pass_interval.high > 0.99


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


def test_markdown_has_every_section_and_lists_failures_with_reasons() -> None:
    md = render_markdown(build_report(_start(), _lift_results()))
    for heading in (
        "Executive summary",
        "Condition comparison",
        "Lane breakdown",
        "Provider comparison",
        "Failed cases",
        "Warnings",
        "Trial aggregation",
        "Baseline comparison",
        "Anti-pattern summary",
        "Completeness summary",
    ):
        assert f"\n## {heading}\n" in md
    assert "- `prompt/c1/none/stub/trial-1` (failed)\n  - required workflow step 's' failed: x" in md
    assert render_markdown(build_report(_start(), _lift_results())) == md  # deterministic


def test_trials_with_warnings_are_listed_and_counted_in_the_summary() -> None:
    stale = "cassette recorded for fingerprint aaa, case is now bbb: re-record with --record (x.jsonl)"
    warned = msgspec.structs.replace(_trial("a", "none", 1, True), warnings=(stale,))
    report = build_report(_start(), [warned, _trial("b", "none", 1, True)])
    assert [(w.key, w.warnings) for w in report.warned] == [("prompt/a/none/stub/trial-1", (stale,))]
    md = render_markdown(report)
    assert "- 1 trial(s) finished with warnings (see Warnings)." in md
    listed = "## Warnings\n\nWorth a look, though no verdict depends on them:\n\n"
    assert f"{listed}- `prompt/a/none/stub/trial-1`\n  - {stale}\n" in md
    quiet = render_markdown(build_report(_start(), [_trial("b", "none", 1, True)]))
    assert "## Warnings\n\nNone.\n" in quiet and "finished with warnings" not in quiet


def test_a_table_cell_with_a_bar_or_a_line_break_keeps_the_row_intact() -> None:
    odd = _trial("a|b\nc", "none", 1, True)
    md = render_markdown(build_report(_start(), [odd, _trial("plain", "none", 1, False)]))
    assert "| prompt | a\\|b c | none | stub | 1 | 1/1 |" in md
    assert "| prompt | plain | none | stub | 1 | 0/1 |" in md


def test_case_stats_leave_errored_trials_out_of_scores_only() -> None:
    results = [
        _trial("c", "none", 1, True),
        _trial("c", "none", 2, False),
        _trial("c", "none", 3, False, error="timeout"),
    ]
    (stats,) = build_report(_start(), results).cases
    assert (stats.trials, stats.passed, stats.failed, stats.errored) == (3, 1, 1, 1)
    assert stats.pass_rate == pytest.approx(1 / 3)
    assert stats.pass_rate_excluding_errors == pytest.approx(1 / 2)
    assert stats.mean_score == pytest.approx((1.0 + 0.25) / 2)


def _by_name(report: Report) -> dict[str, PairedComparison]:
    return {c.comparison.name: c for c in report.condition_comparisons}


@pytest.mark.parametrize("error", NOT_THE_AGENTS)
def test_errors_not_the_agents_are_left_out_of_condition_comparisons(error: ErrorClass) -> None:
    # Self-load never got a fair try (its workspace, its verifier, its provider): nothing is known about it.
    results = [_trial(f"c{i}", "none", 1, True) for i in range(8)]
    results += [_trial(f"c{i}", "self-load", 1, False, error=error) for i in range(8)]
    report = build_report(_start(conditions=("none", "self-load"), trials=1), results)
    realized = _by_name(report)["realized lift (self-load vs none)"]
    assert realized.comparison.verdict == "inconclusive"
    assert realized.comparison.n_pairs == 0 and realized.comparison.mean_diff is None
    assert realized.cases_left_out_for_errors == 8
    md = render_markdown(report)
    assert (
        "| realized lift (self-load vs none) | prompt | 0 (8 cases left out: errors not the agent's) |" in md
    )
    assert "**inconclusive** over 0 case(s); 8 cases left out: errors not the agent's." in md


@pytest.mark.parametrize("none_passes", [2, 3])
def test_a_verdict_that_provider_errors_decide_is_inconclusive_and_says_how_many(none_passes: int) -> None:
    # Self-load passes 1 trial per case and hits a provider error (maybe a rate limit) on 2. Counted as
    # failures it reads "regressed"; left out, "improved" (none passes 2 of 3) or "inconclusive" (none
    # passes 3 of 3). Either basis alone can read backwards, so the verdict is neither.
    results = [_trial(f"c{i}", "none", t, t <= none_passes) for i in range(10) for t in (1, 2, 3)]
    results += [_trial(f"c{i}", "self-load", 1, True) for i in range(10)]
    results += [
        _trial(f"c{i}", "self-load", t, False, error="provider-error") for i in range(10) for t in (2, 3)
    ]
    report = build_report(_start(conditions=("none", "self-load")), results)
    realized = _by_name(report)["realized lift (self-load vs none)"]
    assert realized.comparison.verdict == "inconclusive"
    assert realized.depends_on_errors == 20
    # The numbers stay those counting the errors as failures.
    assert realized.comparison.mean_diff == pytest.approx(1 / 3 - none_passes / 3)
    assert realized.comparison.n_pairs == 10 and realized.cases_left_out_for_errors == 0
    md = render_markdown(report)
    diff = f"{100 * (1 - none_passes) / 3:+.0f} pts"
    assert f"| realized lift (self-load vs none) | prompt | 10 | {diff} |" in md
    assert "| inconclusive: the verdict depends on 20 provider errors |" in md
    assert "**inconclusive: the verdict depends on 20 provider errors** over 10 case(s)." in md
    assert "improved" not in md and "regressed" not in md
    basis = (
        "Trials that errored for reasons not the agent's (environment, grader, provider unavailable or "
        "silent\nfor its whole budget, interrupted) are left out; timeouts (the agent ran out of time while "
        "it worked)\nand provider errors count as failures."
    )
    assert f"under the control.\n{basis}" in md


def test_a_condition_that_always_times_out_is_regressed() -> None:
    # None passes every trial; self-load makes the agent hang until every trial times out: a regression
    # of 100 points over 10 cases (sign test p = .002), which timeouts alone are allowed to decide.
    results = [_trial(f"c{i}", "none", t, True) for i in range(10) for t in (1, 2, 3)]
    results += [_trial(f"c{i}", "self-load", t, False, error="timeout") for i in range(10) for t in (1, 2, 3)]
    report = build_report(_start(conditions=("none", "self-load")), results)
    realized = _by_name(report)["realized lift (self-load vs none)"]
    assert realized.comparison.verdict == "regressed" and realized.depends_on_errors == 0
    assert realized.comparison.mean_diff == -1.0
    assert realized.comparison.interval is not None and realized.comparison.interval.high < 0.0
    assert "**regressed** over 10 case(s)." in render_markdown(report)


@pytest.mark.parametrize("error", ["timeout", "provider-error"])
def test_a_verdict_the_agents_errors_do_not_decide_stands(error: ErrorClass) -> None:
    # Preloaded passes 2 of 3 per case and times out once; none fails every trial. Counting the timeouts
    # as failures (67% vs 0%) or leaving them out (100% vs 0%): improved either way.
    results = [_trial(f"c{i}", "none", t, False) for i in range(10) for t in (1, 2, 3)]
    results += [_trial(f"c{i}", "preloaded", t, True) for i in range(10) for t in (1, 2)]
    results += [_trial(f"c{i}", "preloaded", 3, False, error=error) for i in range(10)]
    report = build_report(_start(conditions=("none", "preloaded")), results)
    oracle = _by_name(report)["oracle lift (preloaded vs none)"]
    assert oracle.comparison.verdict == "improved" and oracle.depends_on_errors == 0
    assert oracle.comparison.mean_diff == pytest.approx(2 / 3)
    md = render_markdown(report)
    assert "| 10/0/0 | 0.00195 | improved |" in md
    assert "depends on" not in md


def test_a_provider_comparison_the_agents_errors_decide_is_inconclusive() -> None:
    # Provider b hit a rate limit on 2 of 3 trials of every case; it passed what it ran, as did a.
    results = [_trial(f"c{i}", "none", t, True, provider="a") for i in range(10) for t in (1, 2, 3)]
    results += [_trial(f"c{i}", "none", 1, True, provider="b") for i in range(10)]
    results += [
        _trial(f"c{i}", "none", t, False, provider="b", error="provider-error")
        for i in range(10)
        for t in (2, 3)
    ]
    report = build_report(_start(conditions=("none",), providers=("a", "b")), results)
    (comp,) = report.provider_comparisons
    assert comp.comparison.verdict == "inconclusive" and comp.depends_on_errors == 20
    assert comp.comparison.mean_diff == pytest.approx(-2 / 3)


def test_condition_table_shows_both_case_counts_when_the_mean_averages_fewer() -> None:
    results = [_trial("a", "none", 1, True), _trial("b", "none", 1, False, error="environment-error")]
    report = build_report(_start(conditions=("none",), trials=1), results)
    (summary,) = report.condition_summaries
    assert (summary.cases, summary.cases_in_mean) == (2, 1)
    assert "| prompt | none | 2 (1 in the mean case pass rate) | 2 |" in render_markdown(report)


def test_the_trial_aggregation_says_what_pass_at_k_is_over_and_mcnemar_is_explained() -> None:
    results = [_trial(f"c{i}", c, 1, c == "preloaded") for i in range(6) for c in ("none", "preloaded")]
    md = render_markdown(build_report(_start(conditions=("none", "preloaded"), trials=1), results))
    assert "`pass`, pass@k and pass^k are over every trial of the case, errored ones included" in md
    assert "McNemar is the exact test for paired pass/fail outcomes" in md


def test_condition_comparisons_pair_pass_rates_for_verdicts() -> None:
    # c0's treatment passed once; its two other trials errored. Errors not the agent's are left out, so its
    # rate is 1; timeouts are its own failures, so its rate is 1/3.
    results = [_trial(f"c{i}", "none", t, False) for i in range(8) for t in (1, 2, 3)]
    results += [_trial(f"c{i}", "preloaded", t, True) for i in range(1, 8) for t in (1, 2, 3)]
    results += [_trial("c0", "preloaded", 1, True)]
    cases: list[tuple[ErrorClass, float]] = [("grader-error", 1.0), ("timeout", 1 / 3)]
    for error, c0_rate in cases:
        errored = [_trial("c0", "preloaded", t, False, error=error) for t in (2, 3)]
        report = build_report(_start(conditions=("none", "preloaded")), [*results, *errored])
        oracle = _by_name(report)["oracle lift (preloaded vs none)"]
        assert oracle.comparison.n_pairs == 8 and oracle.cases_left_out_for_errors == 0
        assert oracle.comparison.mean_diff == pytest.approx((7 + c0_rate) / 8)
        assert oracle.comparison.wins == 8
        (c0,) = [s for s in report.cases if s.case_id == "c0" and s.condition == "preloaded"]
        assert c0.pass_rate_for_verdicts == pytest.approx(c0_rate)
        assert c0.pass_rate_excluding_errors == 1.0 and c0.pass_rate == pytest.approx(1 / 3)


def test_mcnemar_counts_only_cases_with_trials_for_verdicts_on_both_sides() -> None:
    # One trial per case: 6 cases win; in 2 more the control passed and the treatment errored. An error not
    # the agent's is no evidence either way; a timeout is the agent's failure, so those 2 are losses.
    results = [_trial(f"c{i}", "none", 1, i >= 6) for i in range(8)]
    results += [_trial(f"c{i}", "self-load", 1, True) for i in range(6)]
    start = _start(conditions=("none", "self-load"), trials=1)
    cases: list[tuple[ErrorClass, int, int]] = [("environment-error", 0, 2), ("timeout", 2, 0)]
    for error, losses, left_out in cases:
        errored = [_trial(f"c{i}", "self-load", 1, False, error=error) for i in (6, 7)]
        realized = _by_name(build_report(start, [*results, *errored]))["realized lift (self-load vs none)"]
        assert realized.mcnemar_p == mcnemar_exact_p(6, losses)
        assert realized.comparison.p_value == sign_test_p(6, losses)
        assert (realized.comparison.wins, realized.comparison.losses) == (6, losses)
        assert realized.cases_left_out_for_errors == left_out


def test_provider_comparison_pairs_per_case_not_per_case_and_condition() -> None:
    # 2 cases x 4 conditions: two units of evidence, not eight (which would read as p < 0.01).
    conditions = ("none", "self-load", "preloaded", "stale")
    results = [
        _trial(case, condition, 1, provider == "claude", provider=provider)
        for provider in ("claude", "codex")
        for case in ("a", "b")
        for condition in conditions
    ]
    report = build_report(_start(providers=("codex", "claude"), trials=1), results)
    (comparison,) = report.provider_comparisons
    assert comparison.comparison.n_pairs == 2
    assert comparison.comparison.verdict == "inconclusive"
    assert comparison.comparison.mean_diff == pytest.approx(1.0)


def test_provider_comparison_averages_the_conditions_both_providers_have_for_verdicts() -> None:
    results = [
        _trial("a", "none", 1, True, provider="claude"),
        _trial("a", "stale", 1, False, provider="claude"),
        _trial("a", "none", 1, False, provider="codex"),
        _trial("a", "stale", 1, False, provider="codex", error="grader-error"),  # stale is not paired
        _trial("b", "none", 1, True, provider="claude"),
        _trial("b", "none", 1, False, provider="codex", error="environment-error"),
        _trial("c", "none", 1, True, provider="claude"),
        _trial("c", "none", 1, False, provider="codex", error="provider-error"),  # codex's own failure
    ]
    report = build_report(_start(providers=("codex", "claude"), conditions=("none", "stale")), results)
    (comparison,) = report.provider_comparisons
    assert comparison.comparison.n_pairs == 2 and comparison.comparison.mean_diff == pytest.approx(1.0)
    assert comparison.cases_left_out_for_errors == 1  # b: codex has nothing but an error not its own
    md = render_markdown(report)
    assert "| claude vs codex | prompt | 2 (1 case left out: errors not the agent's) |" in md
    assert (
        "Paired per case: each provider's pass rate over the conditions both ran, averaged per case.\n" in md
    )
    assert "for its whole budget, interrupted) are left out; timeouts (the agent ran out of time" in md


def test_condition_table_names_the_provider_when_the_run_has_several() -> None:
    results = [
        _trial(f"c{i}", condition, 1, condition == "preloaded", provider=provider)
        for provider in ("claude", "codex")
        for i in range(6)
        for condition in ("none", "preloaded")
    ]
    md = render_markdown(build_report(_start(providers=("claude", "codex"), trials=1), results))
    header = "| comparison | lane | provider | cases | mean diff | 95% CI | W/T/L | p (sign) | verdict |"
    assert header in md
    assert "| oracle lift (preloaded vs none) | prompt | claude | 6 |" in md
    assert "| oracle lift (preloaded vs none) | prompt | codex | 6 |" in md
    single = render_markdown(build_report(_start(), _lift_results()))
    assert "| comparison | lane | cases | mean diff | 95% CI | W/T/L | p (sign) | verdict |" in single


def _scored(trial: int, score: float) -> TrialResult:
    return msgspec.structs.replace(
        _trial("s", "none", trial, False), grade=Grade(passed=False, score=score, reasons=("x",))
    )


def test_score_interval_stays_within_zero_and_one() -> None:
    (stats,) = build_report(_start(), [_scored(1, 0.2), _scored(2, 0.5), _scored(3, 0.9)]).cases
    # Wilson's with the mean score for the rate: inside [0, 1], around the mean, and not a t-interval's
    # [0, 1] at three trials.
    assert stats.score_interval == bounded_mean_interval([0.2, 0.5, 0.9])
    assert 0.0 < stats.score_interval.low < 1.6 / 3 < stats.score_interval.high < 1.0


def test_case_rows_show_errored_trials_the_rate_without_them_and_the_score_interval() -> None:
    results = [
        _trial("c", "none", 1, True),
        _trial("c", "none", 2, False),
        _trial("c", "none", 3, False, error="timeout"),
        _trial("d", "none", 1, True),
    ]
    md = render_markdown(build_report(_start(conditions=("none",)), results))
    assert "| trials | pass | errored | 95% CI (Wilson) | mean score | score 95% CI |" in md
    assert "excl. errors; " not in md  # every error the agent's: the rate for verdicts is the first one
    assert "| prompt | c | none | stub | 3 | 1/3 (1/2 = 50% excl. errors) | 1 | [6%, 79%] | 0.62 |" in md
    assert "| prompt | d | none | stub | 1 | 1/1 | 0 | [21%, 100%] | 1.00 | 1 trial: no interval |" in md


def test_case_rows_show_the_rate_for_verdicts_when_some_error_was_not_the_agents() -> None:
    results = [
        _trial("c", "none", 1, True),
        _trial("c", "none", 2, False, error="timeout"),
        _trial("c", "none", 3, False, error="grader-error"),
    ]
    (stats,) = build_report(_start(conditions=("none",)), results).cases
    assert (stats.errored, stats.errored_not_agents, stats.verdict_trials) == (2, 1, 2)
    md = render_markdown(build_report(_start(conditions=("none",)), results))
    assert "| 1/3 (1/1 = 100% excl. errors; 1/2 = 50% for verdicts) | 2 |" in md


def test_case_level_intervals_are_per_condition_not_over_a_lanes_mixture() -> None:
    # Every case passes under preloaded and fails under none: the lane's 50% is not one population.
    results = [_trial(f"c{i}", c, 1, c == "preloaded") for i in range(6) for c in ("none", "preloaded")]
    report = build_report(_start(conditions=("none", "preloaded"), trials=1), results)
    (lane,) = report.lane_summaries
    assert not hasattr(lane, "case_pass_interval")
    by_condition = {s.condition: s for s in report.condition_summaries}
    assert by_condition.keys() == {"none", "preloaded"}
    preloaded = by_condition["preloaded"].case_pass_interval
    assert preloaded is not None and preloaded.high == 1.0 and preloaded.low < 0.7  # six cases: not certain
    md = render_markdown(report)
    assert "| prompt | none | 6 | 6 | 0 | 6 | 0 | 0% | 0% | 0% | [0%, 52%] | 0.25 |" in md


def test_each_case_level_interval_sits_beside_its_own_estimate() -> None:
    # One case ran 20 trials and passed them all; nine ran one each and failed. The pooled rate (20 of 29)
    # is about trials, the interval about the mean of the case rates (1 of 10 cases): side by side, the
    # pooled rate read as the interval's centre lay outside it.
    results = [_trial("a", "none", t, True) for t in range(1, 21)]
    results += [_trial(f"z{i}", "none", 1, False) for i in range(9)]
    (summary,) = build_report(_start(conditions=("none",)), results).condition_summaries
    interval, mean = summary.case_pass_interval, summary.mean_case_pass_rate
    assert interval is not None and mean is not None and mean == pytest.approx(0.1)
    assert interval.low <= mean <= interval.high
    pooled = summary.pass_rate_excluding_errors
    assert pooled is not None and pooled > interval.high  # not the interval's centre
    md = render_markdown(build_report(_start(conditions=("none",)), results))
    header = "| pooled pass rate | pooled excl. errors | mean case pass rate | its case-level 95% CI |"
    assert header in md
    assert f"| 69% | 69% | 10% | [{100 * interval.low:.0f}%, {100 * interval.high:.0f}%] | 0.33 |" in md
    assert (
        "| lane | cases | trials | passed | failed | errored | pass rate | for verdicts | excl. errors "
        "| mean case score |" in md
    )


def test_the_mean_case_pass_rate_and_its_interval_count_the_same_trials_as_the_verdicts() -> None:
    # a: a pass and a timeout (1/2); b: a pass and an environment error (1/1, the error left out).
    results = [
        _trial("a", "none", 1, True),
        _trial("a", "none", 2, False, error="timeout"),
        _trial("b", "none", 1, True),
        _trial("b", "none", 2, False, error="environment-error"),
    ]
    (summary,) = build_report(_start(conditions=("none",)), results).condition_summaries
    assert summary.pass_rate == pytest.approx(0.5) and summary.pass_rate_excluding_errors == 1.0
    assert summary.mean_case_pass_rate == pytest.approx(0.75)
    interval = summary.case_pass_interval
    assert interval == suite_pass_interval([0.5, 1.0], 2)  # the two case rates, two trials each at most


@pytest.mark.parametrize("seed", range(40))
def test_a_mean_case_pass_rate_never_falls_outside_its_interval(seed: int) -> None:
    rng = random.Random(seed)
    errors: list[ErrorClass | None] = [None, None, None, "timeout", "provider-error", "environment-error"]
    results = []
    for case in range(rng.randint(2, 12)):
        for t in range(1, rng.randint(1, 8) + 1):
            results.append(_trial(f"c{case}", "none", t, rng.random() < 0.5, error=rng.choice(errors)))
    for summary in build_report(_start(conditions=("none",)), results).condition_summaries:
        interval, mean = summary.case_pass_interval, summary.mean_case_pass_rate
        if interval is not None:
            assert mean is not None and interval.low <= mean <= interval.high


def test_condition_summaries_are_per_provider_when_there_are_several() -> None:
    results = [
        _trial(f"c{i}", "none", 1, p == "claude", provider=p) for i in range(4) for p in ("claude", "codex")
    ]
    report = build_report(_start(providers=("claude", "codex"), conditions=("none",), trials=1), results)
    assert [(s.condition, s.provider, s.pass_rate) for s in report.condition_summaries] == [
        ("none", "claude", 1.0),
        ("none", "codex", 0.0),
    ]
    assert "| lane | condition | provider | cases |" in render_markdown(report)


def test_stale_harm_verdict_says_which_way_stale_guidance_went() -> None:
    hurts = [_trial(f"c{i}", c, 1, c == "none") for i in range(8) for c in ("none", "stale")]
    report = build_report(_start(conditions=("none", "stale"), trials=1), hurts)
    (harm,) = report.condition_comparisons
    assert harm.comparison.verdict == "improved"  # report.json: treatment (none) passes more than stale
    md = render_markdown(report)
    assert md.count("stale hurts") == 2 and "improved" not in md  # the table row and the summary line
    helps = [_trial(f"c{i}", c, 1, c == "stale") for i in range(8) for c in ("none", "stale")]
    assert "| stale helps |" in render_markdown(
        build_report(_start(conditions=("none", "stale"), trials=1), helps)
    )


def test_cases_without_a_partner_are_counted_and_listed_in_the_lift() -> None:
    # Twelve cases ran with the skill, six without it: the lift is over six, and says which six are not in it.
    results = [_trial(f"c{i}", "self-load", 1, True) for i in range(12)]
    results += [_trial(f"c{i}", "none", 1, False) for i in range(6)]
    report = build_report(_start(conditions=("none", "self-load"), trials=1), results)
    realized = _by_name(report)["realized lift (self-load vs none)"]
    assert realized.comparison.n_pairs == 6
    unpaired = sorted(f"c{i}" for i in range(6, 12))  # in report order
    assert realized.unpaired == tuple(unpaired)
    md = render_markdown(report)
    listed = ", ".join(f"`{c}`" for c in unpaired)
    assert f"| 6 (6 unpaired (run on one side only, not compared): {listed}) |" in md
    assert "over 6 case(s); 6 unpaired case(s) not compared." in md


def test_a_case_whose_trials_all_failed_for_reasons_not_the_agents_has_no_usable_trials() -> None:
    results = [_trial("down", "none", t, False, error="provider-unavailable") for t in (1, 2, 3)]
    (stats,) = build_report(_start(conditions=("none",)), results).cases
    assert stats.pass_interval is None
    md = render_markdown(build_report(_start(conditions=("none",)), results))
    assert "| prompt | down | none | stub | 3 | 0/3 (0/0 = - excl. errors; 0/0 = - for verdicts) | 3 |" in md
    assert "| 3 | no usable trials | - | - |" in md


def test_an_interval_over_fewer_cases_than_the_simulations_check_is_marked() -> None:
    results = [_trial(f"c{i}", c, 1, c == "preloaded") for i in range(4) for c in ("none", "preloaded")]
    md = render_markdown(build_report(_start(conditions=("none", "preloaded"), trials=1), results))
    assert "| oracle lift (preloaded vs none) | prompt | 4 | +100 pts | [" in md
    assert "] † | 4/0/0 |" in md
    assert "† Over fewer than 6 cases: no simulation shows this interval holding its 95% there" in md
    six = [_trial(f"c{i}", c, 1, c == "preloaded") for i in range(6) for c in ("none", "preloaded")]
    assert "†" not in render_markdown(build_report(_start(conditions=("none", "preloaded"), trials=1), six))
