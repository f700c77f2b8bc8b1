"""Betting confidence sequences: coverage and error rates under repeated looks, by seeded simulation."""

from __future__ import annotations

import random

import pytest

from skillgym.sequential import confidence_sequence, decide, lift_sequence, rejects
from skillgym.stats import wilson_interval


def _bernoulli(rng: random.Random, p: float, n: int) -> list[float]:
    return [float(rng.random() < p) for _ in range(n)]


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_the_sequence_covers_the_true_rate_at_every_look_at_least_nominally(p: float) -> None:
    rng = random.Random(7)
    misses = sum(rejects(_bernoulli(rng, p, 30), p, horizon=30) for _ in range(600))
    # Ever excluding the truth, at any of 30 looks: at most alpha (5%); 600 runs put the bound at ~8%.
    assert misses / 600 <= 0.08


def test_stopping_when_wilson_excludes_the_truth_is_what_the_sequence_prevents() -> None:
    # The same data looked at after every trial: Wilson's interval misses far more often than 5%.
    rng = random.Random(11)
    wilson_misses = seq_misses = 0
    for _ in range(400):
        xs = _bernoulli(rng, 0.5, 30)
        looks = [wilson_interval(int(sum(xs[:n])), n) for n in range(1, 31)]
        wilson_misses += any(iv is not None and not iv.low <= 0.5 <= iv.high for iv in looks)
        seq_misses += rejects(xs, 0.5, horizon=30)
    assert wilson_misses / 400 > 0.15
    assert seq_misses / 400 <= 0.08


def test_false_positive_rate_of_paired_verdicts_stays_at_or_below_nominal() -> None:
    rng = random.Random(3)
    called = 0
    for _ in range(400):
        diffs: list[float] = []
        while True:
            diffs.append(float(rng.random() < 0.4) - float(rng.random() < 0.4))
            got = decide(diffs, 0.0, most=20, paired=True, with_interval=False)
            if got.settled:
                break
        called += got.status in ("improved", "regressed")
    assert called / 400 <= 0.08


def test_a_strong_lift_is_decided_early_and_reads_improved() -> None:
    got = decide([1.0] * 8, 0.0, most=20, paired=True)
    assert got.status == "improved" and got.n == 8
    assert got.interval is not None and got.interval.low > 0.0


def test_a_rate_far_from_the_threshold_is_decided_on_the_right_side() -> None:
    assert decide([1.0] * 8, 0.5, most=20).status == "above"
    assert decide([0.0] * 8, 0.5, most=20).status == "below"


def test_min_trials_holds_back_a_decision() -> None:
    assert decide([1.0] * 8, 0.5, most=20, least=10).status == "open"


def test_futility_when_no_continuation_can_decide_and_max_trials_at_the_cap() -> None:
    assert decide([1.0, 0.0] * 4, 0.5, most=10).status == "futile"
    assert decide([1.0, 0.0] * 2, 0.5, most=20).status == "open"
    assert decide([1.0, 0.0] * 5, 0.5, most=10).status == "max-trials"


def test_the_interval_is_nested_inside_the_unit_range_and_contains_the_mean() -> None:
    xs = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    interval = confidence_sequence(xs, horizon=20)
    assert interval is not None and 0.0 <= interval.low < 0.75 < interval.high <= 1.0
    lift = lift_sequence([1.0, 0.0, 1.0, -1.0], horizon=20)
    assert lift is not None and -1.0 <= lift.low < 0.25 < lift.high <= 1.0


def test_values_outside_the_range_are_refused() -> None:
    with pytest.raises(ValueError, match=r"values\[0\] is 2.0"):
        confidence_sequence([2.0])
    with pytest.raises(ValueError, match=r"differences\[0\]"):
        lift_sequence([3.0])
