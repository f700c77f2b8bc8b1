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


def _run_to_a_stop(
    rng: random.Random, control: float, lift: float, most: int, futility: float | None
) -> tuple[str, int, list[float]]:
    diffs: list[float] = []
    while True:
        diffs.append(float(rng.random() < control + lift) - float(rng.random() < control))
        got = decide(diffs, 0.0, most=most, paired=True, with_interval=False, futility=futility)
        if got.settled:
            return got.status, got.n, diffs


def test_the_futility_rule_stops_a_case_with_no_effect_early() -> None:
    used: dict[float | None, float] = {}
    futile: dict[float | None, float] = {}
    for k in (None, 1.5):
        rng = random.Random(5)
        runs = [_run_to_a_stop(rng, 0.5, 0.0, 30, k) for _ in range(200)]
        used[k] = sum(n for _, n, _ in runs) / 200
        futile[k] = sum(status == "futile" for status, _, _ in runs) / 200
    # Curtailment alone runs a no-effect case for about 70% of its cap; the rule stops most of them
    # as futile well before, at under half the cap.
    assert used[None] > 0.6 * 30 and used[1.5] < 0.5 * 30
    assert futile[1.5] > 0.85
    # Seven ties of 30 pairs: curtailment keeps going (23 wins in a row would decide it); the rule stops.
    assert decide([0.0] * 6, 0.0, most=30, paired=True).status == "open"
    assert decide([0.0] * 7, 0.0, most=30, paired=True).status == "futile"
    assert decide([0.0] * 7, 0.0, most=30, paired=True, futility=None).status == "open"


def test_the_futility_rule_only_withholds_verdicts() -> None:
    # The same data, with and without the rule: every verdict the rule reaches, curtailment reaches at the
    # same trial, and the rule never turns an inconclusive run into a verdict.
    for lift in (0.0, 0.2, 0.4):
        with_rule, without = random.Random(8), random.Random(8)
        for _ in range(150):
            status, n, diffs = _run_to_a_stop(with_rule, 0.5, lift, 25, 0.5)
            plain_status, plain_n, plain = _run_to_a_stop(without, 0.5, lift, 25, None)
            assert diffs == plain[:n]
            if status in ("improved", "regressed"):
                assert (plain_status, plain_n) == (status, n)
            if plain_status not in ("improved", "regressed"):
                assert status not in ("improved", "regressed")
            # The rule stops no later; keep the two streams aligned by drawing what it left out.
            for _ in range(plain_n - n):
                with_rule.random(), with_rule.random()


@pytest.mark.parametrize(("control", "futility"), [(0.2, 1.5), (0.5, 1.5), (0.8, 1.5), (0.5, 0.0)])
def test_false_positive_rate_with_the_futility_rule_stays_at_or_below_nominal(
    control: float, futility: float
) -> None:
    rng = random.Random(13)
    called = 0
    for _ in range(400):
        status, _, _ = _run_to_a_stop(rng, control, 0.0, 30, futility)
        called += status in ("improved", "regressed")
    # Nominal 5%; 400 runs put the bound at ~8%.
    assert called / 400 <= 0.08


def test_a_rate_on_the_threshold_is_rarely_called_either_side_with_the_futility_rule() -> None:
    rng = random.Random(17)
    called = 0
    for _ in range(400):
        xs: list[float] = []
        while not (got := decide(xs, 0.5, most=30, with_interval=False)).settled or not xs:
            xs.append(float(rng.random() < 0.5))
        called += got.status in ("above", "below")
    assert called / 400 <= 0.08


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
