"""Tests for skillgym.stats against published values, closed forms and brute-force enumeration."""

from __future__ import annotations

import itertools
import math
import random
import statistics
from fractions import Fraction

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillgym.paired import Comparison, compare_paired, mcnemar_exact_p, sign_test_p
from skillgym.stats import (
    Interval,
    Summary,
    clip_interval,
    clustered_bootstrap_mean,
    clustered_pass_rate,
    contains_zero,
    interquartile_range,
    mean_interval,
    median,
    normal_quantile,
    paired_bootstrap_diff,
    pass_at_k,
    pass_hat_k,
    spread,
    summarize,
    t_quantile,
    wilson_interval,
)

Z_975 = 1.959963984540054  # published two-sided 95% normal quantile


def _wilson_reference(successes: int, n: int, z: float) -> tuple[float, float]:
    # The textbook form (Wilson 1927), written differently from the module on purpose.
    p = successes / n
    denominator = 1 + z**2 / n
    center = p + z**2 / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return (center - margin) / denominator, (center + margin) / denominator


def _binomial_two_sided(k: int, n: int) -> float:
    # Sum of every outcome no more likely than the observed one: a different definition of two-sided
    # that coincides with tail doubling only because p = 1/2 is symmetric.
    pmf = [Fraction(math.comb(n, i), 2**n) for i in range(n + 1)]
    return float(sum(q for q in pmf if q <= pmf[k]))


# --- Interval -----------------------------------------------------------------------------------


def test_interval_rejects_inverted_bounds_and_bad_level() -> None:
    with pytest.raises(ValueError, match="low must not exceed high"):
        Interval(low=1.0, high=0.0)
    with pytest.raises(ValueError, match="between 0 and 1"):
        Interval(low=0.0, high=1.0, level=1.5)


def test_contains_zero_includes_the_endpoints() -> None:
    assert contains_zero(Interval(low=-1.0, high=1.0))
    assert contains_zero(Interval(low=0.0, high=1.0))
    assert contains_zero(Interval(low=-1.0, high=0.0))
    assert not contains_zero(Interval(low=0.1, high=1.0))
    assert not contains_zero(Interval(low=-1.0, high=-0.1))


def test_structs_are_frozen() -> None:
    interval = Interval(low=0.0, high=1.0)
    with pytest.raises(AttributeError):
        interval.low = 0.5  # type: ignore[misc]


# --- Wilson -------------------------------------------------------------------------------------


def test_normal_quantile_matches_published_value() -> None:
    assert normal_quantile(0.975) == pytest.approx(Z_975, abs=1e-12)
    with pytest.raises(ValueError, match="0 < p < 1"):
        normal_quantile(1.0)


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (5, 10, 0.2366, 0.7634),
    ],
)
def test_wilson_matches_published_values(successes: int, n: int, low: float, high: float) -> None:
    interval = wilson_interval(successes, n)
    assert interval is not None
    assert interval.low == pytest.approx(low, abs=1e-4)
    assert interval.high == pytest.approx(high, abs=1e-4)
    assert interval.level == 0.95


@pytest.mark.parametrize(
    ("successes", "n", "level", "z"),
    [
        (81, 263, 0.95, Z_975),
        (0, 10, 0.95, Z_975),
        (10, 10, 0.95, Z_975),
        (5, 10, 0.95, Z_975),
        (3, 7, 0.99, 2.5758293035489004),
        (1, 2, 0.90, 1.6448536269514722),
    ],
)
def test_wilson_matches_closed_form(successes: int, n: int, level: float, z: float) -> None:
    interval = wilson_interval(successes, n, level)
    assert interval is not None
    low, high = _wilson_reference(successes, n, z)
    assert interval.low == pytest.approx(low, abs=1e-9)
    assert interval.high == pytest.approx(high, abs=1e-9)


def test_wilson_81_of_263() -> None:
    interval = wilson_interval(81, 263)
    assert interval is not None
    assert interval.low == pytest.approx(0.2553, abs=1e-4)
    assert interval.high == pytest.approx(0.3662, abs=1e-4)


def test_wilson_no_trials_is_none() -> None:
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize(("successes", "n"), [(-1, 10), (11, 10), (0, -1)])
def test_wilson_rejects_impossible_counts(successes: int, n: int) -> None:
    with pytest.raises(ValueError, match="wilson_interval needs"):
        wilson_interval(successes, n)


@given(
    n=st.integers(min_value=1, max_value=100_000),
    fraction=st.floats(min_value=0.0, max_value=1.0),
    level=st.floats(min_value=0.5, max_value=0.9999),
)
def test_wilson_is_inside_unit_interval_and_contains_p_hat(n: int, fraction: float, level: float) -> None:
    successes = round(fraction * n)
    interval = wilson_interval(successes, n, level)
    assert interval is not None
    assert 0.0 <= interval.low <= successes / n <= interval.high <= 1.0


@given(n=st.integers(min_value=1, max_value=500), data=st.data())
def test_wilson_widens_with_level(n: int, data: st.DataObject) -> None:
    successes = data.draw(st.integers(min_value=0, max_value=n))
    narrow = wilson_interval(successes, n, 0.80)
    wide = wilson_interval(successes, n, 0.99)
    assert narrow is not None
    assert wide is not None
    assert wide.low <= narrow.low
    assert narrow.high <= wide.high


# --- pass@k and pass^k --------------------------------------------------------------------------


@given(n=st.integers(min_value=1, max_value=8), data=st.data())
def test_pass_at_k_and_pass_hat_k_match_enumeration(n: int, data: st.DataObject) -> None:
    c = data.draw(st.integers(min_value=0, max_value=n))
    k = data.draw(st.integers(min_value=1, max_value=n))
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets), abs=1e-12)
    assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets), abs=1e-12)


def test_pass_at_k_known_values() -> None:
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(10, 0, 5) == 0.0
    assert pass_at_k(10, 6, 5) == 1.0  # every 5-subset must include a pass
    assert pass_hat_k(10, 10, 10) == 1.0
    assert pass_hat_k(10, 3, 4) == 0.0


def test_pass_at_k_stays_accurate_for_large_n_and_tiny_values() -> None:
    # A naive 1 - C(n-c,k)/C(n,k) in floats overflows here or loses every significant digit.
    assert pass_at_k(2000, 1, 1) == pytest.approx(1 / 2000, rel=1e-12, abs=0)
    assert pass_at_k(100_000, 1, 1) == pytest.approx(1e-5, rel=1e-12, abs=0)
    assert pass_at_k(10**9, 1, 1) == pytest.approx(1e-9, rel=1e-12, abs=0)
    assert pass_at_k(10**20, 1, 1) == pytest.approx(1e-20, rel=1e-12, abs=0)
    assert pass_at_k(2000, 1000, 100) == pytest.approx(1.0)
    assert pass_hat_k(2000, 1000, 3) == pytest.approx(1000 * 999 * 998 / (2000 * 1999 * 1998), rel=1e-12)


@pytest.mark.parametrize(("n", "c", "k"), [(5, 2, 0), (5, 2, 6), (5, -1, 2), (5, 6, 2), (0, 0, 1)])
def test_pass_at_k_rejects_bad_arguments(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="must satisfy"):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError, match="must satisfy"):
        pass_hat_k(n, c, k)


# --- Student t ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("df", "expected"),
    [(1, 12.706), (2, 4.303), (5, 2.571), (10, 2.228), (30, 2.042), (10_000_000, 1.960), (10**12, 1.960)],
)
def test_t_quantile_matches_table(df: float, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=5e-4)


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [(0.995, 3, 5.840909309733), (0.95, 20, 1.724718242920787), (0.9995, 1, 636.6192487687)],
)
def test_t_quantile_matches_high_precision_values(p: float, df: float, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, rel=1e-9)


@given(p=st.floats(min_value=0.001, max_value=0.999))
def test_t_quantile_matches_closed_forms_for_one_and_two_df(p: float) -> None:
    assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9, abs=1e-12)
    assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-9, abs=1e-12)


@given(p=st.floats(min_value=0.501, max_value=0.999), df=st.floats(min_value=0.5, max_value=1e7))
def test_t_quantile_is_symmetric_and_heavier_tailed_than_normal(p: float, df: float) -> None:
    q = t_quantile(p, df)
    assert t_quantile(1 - p, df) == pytest.approx(-q)
    assert q >= normal_quantile(p) - 1e-9


def test_t_quantile_is_continuous_across_the_large_df_switch() -> None:
    assert t_quantile(0.975, 999_999) == pytest.approx(t_quantile(0.975, 1_000_001), abs=1e-8)


@pytest.mark.parametrize(("p", "df"), [(0.0, 5), (1.0, 5), (0.9, 0), (0.9, -1)])
def test_t_quantile_rejects_bad_arguments(p: float, df: float) -> None:
    with pytest.raises(ValueError, match="t_quantile needs"):
        t_quantile(p, df)


def test_mean_interval_known_value() -> None:
    interval = mean_interval([1.0, 2.0, 3.0])
    assert interval is not None
    half = 4.302652729749464 / math.sqrt(3)  # sd = 1, t(0.975, df=2)
    assert interval.low == pytest.approx(2.0 - half, abs=1e-9)
    assert interval.high == pytest.approx(2.0 + half, abs=1e-9)


def test_mean_interval_degenerate_inputs() -> None:
    assert mean_interval([]) is None
    assert mean_interval([0.7]) == Interval(low=0.7, high=0.7)
    assert mean_interval([0.4, 0.4, 0.4]) == Interval(low=0.4, high=0.4)


def test_mean_interval_rejects_non_finite_values() -> None:
    with pytest.raises(ValueError, match=r"values\[1\] is nan"):
        mean_interval([1.0, math.nan])


# --- exact tests --------------------------------------------------------------------------------


@given(wins=st.integers(min_value=0, max_value=40), losses=st.integers(min_value=0, max_value=40))
def test_sign_test_matches_brute_force(wins: int, losses: int) -> None:
    expected = 1.0 if wins + losses == 0 else _binomial_two_sided(wins, wins + losses)
    assert sign_test_p(wins, losses) == pytest.approx(expected, rel=1e-12, abs=0)
    assert sign_test_p(wins, losses) == sign_test_p(losses, wins)


@given(b=st.integers(min_value=0, max_value=40), c=st.integers(min_value=0, max_value=40))
def test_mcnemar_matches_brute_force(b: int, c: int) -> None:
    expected = 1.0 if b + c == 0 else _binomial_two_sided(b, b + c)
    assert mcnemar_exact_p(b, c) == pytest.approx(expected, rel=1e-12, abs=0)


def test_exact_tests_known_values() -> None:
    assert sign_test_p(0, 0) == 1.0
    assert sign_test_p(9, 1) == 22 / 1024
    assert sign_test_p(5, 5) == 1.0
    assert sign_test_p(10, 0) == 2 / 1024
    assert mcnemar_exact_p(0, 6) == 2 / 64
    assert 0.0 < sign_test_p(3000, 2000) < 1e-40  # big counts neither overflow nor round to garbage


def test_exact_tests_reject_negative_counts() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        sign_test_p(-1, 3)
    with pytest.raises(ValueError, match="non-negative"):
        mcnemar_exact_p(2, -1)


# --- bootstrap ----------------------------------------------------------------------------------

CLUSTERS = [[0.2, 0.4, 0.3], [0.9, 0.8], [0.5], [0.1, 0.0, 0.2, 0.1], [0.7, 0.6]]
PAIRS = [(0.9, 0.5), (0.7, 0.6), (0.4, 0.5), (0.8, 0.3), (0.6, 0.6), (0.9, 0.2), (0.5, 0.4)]


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    assert clustered_bootstrap_mean(CLUSTERS, seed=7) == clustered_bootstrap_mean(CLUSTERS, seed=7)
    assert paired_bootstrap_diff(PAIRS, seed=7) == paired_bootstrap_diff(PAIRS, seed=7)
    assert clustered_bootstrap_mean(CLUSTERS) == clustered_bootstrap_mean(CLUSTERS)
    assert clustered_bootstrap_mean(CLUSTERS, seed=7) != clustered_bootstrap_mean(CLUSTERS, seed=8)


def test_clustered_bootstrap_contains_the_mean_of_case_means() -> None:
    interval = clustered_bootstrap_mean(CLUSTERS)
    assert interval is not None
    estimate = statistics.fmean(statistics.fmean(c) for c in CLUSTERS)
    assert interval.low < estimate < interval.high
    assert interval.low >= 0.0
    assert interval.high <= 0.85


def test_clustered_bootstrap_weights_cases_not_trials() -> None:
    # Nine passing trials of one case must not outvote a second case that failed its only trial.
    interval = clustered_bootstrap_mean([[1.0] * 9, [0.0]], resamples=4000)
    assert interval is not None
    assert interval == Interval(low=0.0, high=1.0)
    assert clustered_bootstrap_mean([[1.0] * 9, [0.0], [1.0, 0.0]], level=0.5) != Interval(low=0.9, high=0.9)


def test_clustered_bootstrap_degenerate_inputs() -> None:
    assert clustered_bootstrap_mean([]) is None
    single = clustered_bootstrap_mean([[0.2, 0.4]])
    assert single is not None
    assert single.low == single.high == pytest.approx(0.3)
    with pytest.raises(ValueError, match=r"clusters\[1\] is empty"):
        clustered_bootstrap_mean([[1.0], []])
    with pytest.raises(ValueError, match="resamples must be at least 1"):
        clustered_bootstrap_mean(CLUSTERS, resamples=0)


def test_clustered_pass_rate_matches_float_clusters() -> None:
    bools = [[True, False, True], [False], [True, True]]
    floats = [[1.0, 0.0, 1.0], [0.0], [1.0, 1.0]]
    assert clustered_pass_rate(bools, seed=3) == clustered_bootstrap_mean(floats, seed=3)


def test_paired_bootstrap_contains_the_mean_difference() -> None:
    interval = paired_bootstrap_diff(PAIRS)
    assert interval is not None
    estimate = statistics.fmean(t - c for t, c in PAIRS)
    assert interval.low < estimate < interval.high


def test_paired_bootstrap_degenerate_inputs() -> None:
    assert paired_bootstrap_diff([]) is None
    assert paired_bootstrap_diff([(0.75, 0.5)]) == Interval(low=0.25, high=0.25)


def test_bootstrap_level_controls_width() -> None:
    narrow = paired_bootstrap_diff(PAIRS, level=0.5)
    wide = paired_bootstrap_diff(PAIRS, level=0.99)
    assert narrow is not None
    assert wide is not None
    assert wide.low < narrow.low
    assert narrow.high < wide.high


# --- paired comparison --------------------------------------------------------------------------


def test_compare_paired_consistent_improvement_over_ten_pairs_is_improved() -> None:
    pairs = [(0.6 + 0.01 * i, 0.3 + 0.02 * i) for i in range(10)]
    # Rates in hundredths: 100 trials a case. At the default (one trial, the widest spread a rate can
    # have) ten cases at +25 points are not enough for the interval.
    assert compare_paired("self-load vs none", pairs).verdict == "inconclusive"
    result = compare_paired("self-load vs none", pairs, trials=100)
    assert result.verdict == "improved"
    assert result.interval is not None
    assert result.interval.low > 0
    assert (result.wins, result.ties, result.losses) == (10, 0, 0)
    assert result.p_value == sign_test_p(10, 0)
    assert result.mean_diff == pytest.approx(statistics.fmean(t - c for t, c in pairs))


def test_compare_paired_consistent_regression_is_regressed() -> None:
    result = compare_paired("stale vs none", [(0.2, 0.7 + 0.01 * i) for i in range(10)])
    assert result.verdict == "regressed"
    assert result.interval is not None
    assert result.interval.high < 0


def test_compare_paired_interval_crossing_zero_is_inconclusive() -> None:
    pairs = [(1.0, 0.0), (0.0, 1.0)] * 5 + [(0.6, 0.5)]
    result = compare_paired("mixed", pairs)
    assert result.interval is not None
    assert contains_zero(result.interval)
    assert result.verdict == "inconclusive"


def test_compare_paired_single_pair_is_never_conclusive() -> None:
    result = compare_paired("one trial", [(1.0, 0.0)])
    assert result.interval is None  # one case says nothing about how cases spread
    assert result.verdict == "inconclusive"
    assert compare_paired("one trial", [(0.0, 1.0)]).verdict == "inconclusive"


def test_compare_paired_no_pairs() -> None:
    result = compare_paired("empty", [])
    assert result == Comparison(
        name="empty",
        n_pairs=0,
        mean_diff=None,
        interval=None,
        wins=0,
        ties=0,
        losses=0,
        p_value=None,
        verdict="inconclusive",
    )


def test_compare_paired_counts_ties_within_tolerance() -> None:
    pairs = [(0.5, 0.5), (0.5 + 1e-12, 0.5), (0.7, 0.5), (0.5, 0.7), (0.51, 0.5)]
    result = compare_paired("ties", pairs, tie_tolerance=1e-6)
    assert (result.wins, result.ties, result.losses) == (2, 2, 1)
    assert result.p_value == sign_test_p(2, 1)


def test_compare_paired_float_noise_is_not_an_improvement() -> None:
    assert compare_paired("noise", [(0.3 + 1e-12, 0.3)] * 10).verdict == "inconclusive"


def test_comparison_round_trips_through_json() -> None:
    result = compare_paired("json", PAIRS)
    assert msgspec.json.decode(msgspec.json.encode(result), type=Comparison) == result


# --- summaries ----------------------------------------------------------------------------------


def test_summarize_known_values() -> None:
    assert summarize([4.0, 1.0, 3.0, 2.0]) == Summary(n=4, median=2.5, low=1.0, high=4.0, iqr=1.5)
    assert summarize([5.0]) == Summary(n=1, median=5.0, low=5.0, high=5.0, iqr=0.0)
    assert summarize([]) is None


def test_helpers_reject_empty_input() -> None:
    for helper in (median, spread, interquartile_range):
        with pytest.raises(ValueError, match="no values"):
            helper([])


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=2, max_size=50))
def test_iqr_matches_statistics_inclusive_quartiles(values: list[float]) -> None:
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    assert interquartile_range(values) == pytest.approx(q3 - q1, abs=1e-6)
    assert spread(values) == (min(values), max(values))
    assert median(values) == statistics.median(values)


def test_few_agreeing_pairs_stay_inconclusive_until_the_sign_test_agrees() -> None:
    # Bootstrap alone calls three agreeing pairs "improved"; the exact sign test (p = 0.25) does not.
    assert compare_paired("lift", [(1.0, 0.0), (0.8, 0.0), (0.9, 0.0)]).verdict == "inconclusive"
    assert compare_paired("lift", [(1.0, 0.0)] * 6).verdict == "improved"
    assert compare_paired("harm", [(0.0, 1.0)] * 6).verdict == "regressed"


def test_large_samples_use_the_t_interval_which_matches_the_bootstrap() -> None:
    from skillgym.stats import LARGE_SAMPLE

    rng = random.Random(7)
    small = [rng.random() for _ in range(LARGE_SAMPLE)]
    large = [*small, *small[:10]]
    boot = paired_bootstrap_diff([(v, 0.0) for v in small])
    t = mean_interval(small)
    assert boot is not None and t is not None
    assert abs(boot.low - t.low) < 0.01 and abs(boot.high - t.high) < 0.01
    assert paired_bootstrap_diff([(v, 0.0) for v in large]) == mean_interval(large)


def test_clip_interval_cuts_an_interval_to_the_range_its_quantity_lives_in() -> None:
    scores = [0.2, 0.5, 0.9]
    t = mean_interval(scores)
    assert t is not None and t.low < 0.0 and t.high > 1.0  # symmetric, so it reaches past both bounds
    assert clip_interval(t, 0.0, 1.0) == Interval(low=0.0, high=1.0)
    assert clip_interval(Interval(low=0.2, high=0.4), 0.0, 1.0) == Interval(low=0.2, high=0.4)
    assert clip_interval(None, 0.0, 1.0) is None
    with pytest.raises(ValueError, match="low <= high"):
        clip_interval(t, 1.0, 0.0)


def test_large_sample_interval_never_leaves_the_range_of_the_values() -> None:
    from skillgym.stats import LARGE_SAMPLE

    # Nearly every case passes: the t-interval standing in for the bootstrap would reach past 100%.
    diffs = [1.0] * (LARGE_SAMPLE + 10) + [0.0]
    interval = paired_bootstrap_diff([(d, 0.0) for d in diffs])
    unclipped = mean_interval(diffs)
    assert interval is not None and unclipped is not None and unclipped.high > 1.0
    assert interval.high == 1.0 and interval.low == unclipped.low


def test_clustered_pass_rate_is_no_point_when_every_case_agrees() -> None:
    # Resampling six passing cases can only give 100% back; six cases do not make that certain.
    interval = clustered_pass_rate([[True, True]] * 6)
    assert interval == wilson_interval(6, 6)
    assert interval is not None and interval.low < 0.7 and interval.high == 1.0
    failing = clustered_pass_rate([[False]] * 6)
    assert failing is not None and failing.low == 0.0 and failing.high > 0.3
    # Agreeing at a rate between the bounds: the interval is around that rate, not a point.
    halves = clustered_pass_rate([[True, False]] * 6)
    assert halves is not None and halves.low < 0.5 < halves.high
    # Cases that differ keep the case-level bootstrap.
    mixed = [[True, True], [False, True], [True]]
    assert clustered_pass_rate(mixed) == clustered_bootstrap_mean([[1.0, 1.0], [0.0, 1.0], [1.0]])
