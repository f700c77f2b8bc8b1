"""Tests for skillgym.score_intervals: closed forms, edge cases, and coverage by seeded simulation."""

from __future__ import annotations

import math
import random

import pytest

from skillgym.score_intervals import (
    bounded_mean_interval,
    dispersion,
    paired_lift_interval,
    suite_pass_interval,
)
from skillgym.stats import Interval, clustered_pass_rate, paired_bootstrap_diff, wilson_interval


def test_one_score_has_no_interval_and_agreeing_scores_are_not_a_point() -> None:
    assert bounded_mean_interval([]) is None
    assert bounded_mean_interval([1.0]) is None
    for score in (0.0, 0.5, 1.0):
        interval = bounded_mean_interval([score] * 3)
        assert interval is not None and interval.high - interval.low > 0.3


def test_pass_fail_scores_get_wilsons_interval() -> None:
    assert bounded_mean_interval([1.0, 1.0, 0.0, 1.0]) == wilson_interval(3, 4)


def test_scores_outside_zero_and_one_are_refused_with_where() -> None:
    with pytest.raises(
        ValueError, match=r"scores\[1\] is 1.5; a score-type interval needs values in \[0, 1\]"
    ):
        bounded_mean_interval([0.5, 1.5])


def test_dispersion_stays_between_one_over_trials_and_one() -> None:
    assert dispersion([1.0] * 6, trials=4) == 0.25  # no spread seen: the least a 4-trial mean spreads
    assert dispersion([0.0, 1.0] * 3, trials=4) == 1.0  # the most a [0, 1] value can spread
    assert 0.25 < dispersion([0.5, 0.75, 1.0, 0.25], trials=4) < 1.0


def test_suite_interval_reflects_the_number_of_cases_when_every_case_agrees() -> None:
    six, twenty = suite_pass_interval([1.0] * 6, trials=1), suite_pass_interval([1.0] * 20, trials=1)
    assert six is not None and twenty is not None
    assert six.high == twenty.high == 1.0 and six.low < twenty.low < 1.0
    # More trials per case leave less room for a case's rate to hide below 1.
    five = suite_pass_interval([1.0] * 6, trials=5)
    assert five is not None and six.low < five.low < 1.0
    assert suite_pass_interval([0.4], trials=3) is None


def test_a_lift_never_collapses_to_a_point() -> None:
    for pairs in ([(1.0, 0.0)] * 6, [(0.0, 0.0)] * 6, [(1.0, 1.0)] * 6, [(0.0, 0.0), (1.0, 1.0)] * 3):
        interval = paired_lift_interval(pairs, trials=1)
        assert interval is not None and interval.high - interval.low > 0.2, pairs
    every_case_gains = paired_lift_interval([(1.0, 0.0)] * 6, trials=1)
    assert every_case_gains is not None and 0.0 < every_case_gains.low < 1.0 == every_case_gains.high
    tied = paired_lift_interval([(0.5, 0.5)] * 6, trials=2)
    assert tied is not None and tied.low < 0.0 < tied.high
    assert math.isclose(-tied.low, tied.high)
    assert paired_lift_interval([(1.0, 0.0)], trials=1) is None


def _case_rates(rng: random.Random, n: int, a: float, b: float, trials: int) -> list[list[bool]]:
    return [[rng.random() < p for _ in range(trials)] for p in (rng.betavariate(a, b) for _ in range(n))]


def _pass_coverage(method: str, n: int, a: float, b: float, trials: int, reps: int) -> float:
    rng = random.Random(f"{method}/{n}/{a}/{b}/{trials}")
    hits = 0
    for _ in range(reps):
        cases = _case_rates(rng, n, a, b, trials)
        if method == "score":
            interval = suite_pass_interval([sum(c) / trials for c in cases], trials)
        else:
            interval = clustered_pass_rate(cases, resamples=200, seed=rng.randrange(1 << 30))
        assert interval is not None
        hits += interval.low <= a / (a + b) <= interval.high
    return hits / reps


# Settings of the benchmark grid (benchmarks/coverage.py) where the percentile bootstrap falls short.
PASS_SETTINGS = [(6, 0.5, 3.0, 5), (6, 3.0, 0.5, 1), (10, 1.0, 4.0, 3), (20, 4.0, 1.0, 2)]


@pytest.mark.parametrize(("n", "a", "b", "trials"), PASS_SETTINGS)
def test_suite_pass_interval_covers_the_population_mean(n: int, a: float, b: float, trials: int) -> None:
    # 300 suites: the binomial noise of the estimate is about 1.3 points at 95%, so 92% is three below.
    assert _pass_coverage("score", n, a, b, trials, reps=300) >= 0.92


def test_the_percentile_bootstrap_it_replaces_undercovers() -> None:
    assert _pass_coverage("bootstrap", 6, 0.5, 3.0, 5, reps=300) < 0.92


def _lift_coverage(method: str, n: int, trials: int, reps: int) -> float:
    # Control rates from Beta(1, 4); in half the cases the skill changes the rate to one from Beta(4, 1).
    rng = random.Random(f"{method}/{n}/{trials}")
    delta = 0.5 * (0.8 - 0.2)
    hits = 0
    for _ in range(reps):
        pairs = []
        for _ in range(n):
            control = rng.betavariate(1.0, 4.0)
            treated = control if rng.random() < 0.5 else rng.betavariate(4.0, 1.0)
            t = sum(rng.random() < treated for _ in range(trials)) / trials
            pairs.append((t, sum(rng.random() < control for _ in range(trials)) / trials))
        interval = (
            paired_lift_interval(pairs, trials)
            if method == "score"
            else paired_bootstrap_diff(pairs, resamples=200, seed=rng.randrange(1 << 30))
        )
        assert isinstance(interval, Interval)
        hits += interval.low <= delta <= interval.high
    return hits / reps


@pytest.mark.parametrize(("n", "trials"), [(6, 1), (6, 5), (10, 3), (20, 2)])
def test_paired_lift_interval_covers_the_population_lift(n: int, trials: int) -> None:
    assert _lift_coverage("score", n, trials, reps=300) >= 0.92


def test_the_paired_bootstrap_it_replaces_undercovers() -> None:
    assert _lift_coverage("bootstrap", 6, 1, reps=300) < 0.90


DISCRETE = [
    ({0.0: 0.1, 1.0: 0.9}, 10),
    ({0.0: 0.2, 0.5: 0.3, 1.0: 0.5}, 3),
    ({0.0: 0.05, 0.25: 0.05, 0.75: 0.2, 1.0: 0.7}, 5),
    ({0.0: 0.7, 0.5: 0.2, 1.0: 0.1}, 2),
]


@pytest.mark.parametrize(("scores", "trials"), DISCRETE)
def test_per_case_score_interval_covers_discrete_scores(scores: dict[float, float], trials: int) -> None:
    rng = random.Random(f"{sorted(scores.items())}/{trials}")
    values, weights = list(scores), list(scores.values())
    mean = sum(v * w for v, w in scores.items())
    hits = 0
    for _ in range(400):
        interval = bounded_mean_interval(rng.choices(values, weights, k=trials))
        assert interval is not None
        hits += interval.low <= mean <= interval.high
    assert hits / 400 >= 0.91
