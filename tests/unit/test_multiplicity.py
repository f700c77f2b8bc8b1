"""Tests for skillgym.multiplicity: Fisher's exact test, Holm's step-down, and the family-wise error rate."""

from __future__ import annotations

import random

import pytest

from skillgym.multiplicity import fisher_exact_p, holm_adjust
from skillgym.report import build_report, compare_to_baseline
from skillgym.results import TrialResult
from tests.unit.test_report import _start, _trial


def test_fisher_matches_the_lady_tasting_tea() -> None:
    # Fisher's own example: 3 of 4 right on each side; two-sided p = 34/70.
    assert fisher_exact_p(3, 4, 1, 4) == pytest.approx(34 / 70, rel=1e-12)
    assert fisher_exact_p(5, 5, 0, 5) == pytest.approx(2 / 252, rel=1e-12)
    assert fisher_exact_p(2, 4, 2, 4) == 1.0
    assert fisher_exact_p(0, 0, 3, 5) == 1.0  # no trials on one side: no evidence


def test_fisher_is_symmetric_in_its_sides() -> None:
    for a, n, b, m in [(1, 7, 6, 9), (0, 3, 3, 3), (10, 20, 3, 12)]:
        assert fisher_exact_p(a, n, b, m) == fisher_exact_p(b, m, a, n)


def test_fisher_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError, match="0 <= passed <= trials for side b; found passed=4, trials=3"):
        fisher_exact_p(1, 2, 4, 3)


def test_holm_adjusts_in_the_given_order_and_stays_monotone() -> None:
    assert holm_adjust([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert holm_adjust([]) == []
    assert holm_adjust([0.2]) == [0.2]
    assert holm_adjust([0.6, 0.6]) == [1.0, 1.0]  # capped at 1
    with pytest.raises(ValueError, match=r"p_values\[0\] is 1.5"):
        holm_adjust([1.5])


def _flags_without_change(rng: random.Random, cases: int, trials: int) -> int:
    """Per-case flags of one baseline comparison in which nothing changed: every flag is false."""
    rates = [rng.betavariate(1.0, 1.0) for _ in range(cases)]

    def run() -> list[TrialResult]:
        return [
            _trial(f"c{i}", "none", t, rng.random() < p)
            for i, p in enumerate(rates)
            for t in range(1, trials + 1)
        ]

    old = build_report(_start(run_id="old", conditions=("none",)), run())
    new = build_report(_start(conditions=("none",)), run())
    return sum(r.status in ("improved", "regressed") for r in compare_to_baseline(new, old).rows)


def test_holm_keeps_the_family_wise_false_flag_rate_under_five_percent() -> None:
    # 20 cases at 5 trials with no real change: uncorrected flags caught at least one case in 68% of such
    # comparisons. Holm bounds the chance of any false flag at 5%; 200 seeded runs must show at most 6%.
    rng = random.Random(23)
    runs = 200
    with_a_flag = sum(_flags_without_change(rng, cases=20, trials=5) > 0 for _ in range(runs))
    assert with_a_flag / runs <= 0.06
