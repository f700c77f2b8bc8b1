"""Paired comparisons over cases: a lift interval and an exact sign test that together decide a verdict."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import msgspec

from .score_intervals import paired_lift_interval
from .stats import Interval, _check_finite, fmean

Verdict = Literal["improved", "regressed", "inconclusive"]


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    n_pairs: int
    mean_diff: float | None
    interval: Interval | None
    wins: int
    ties: int
    losses: int
    p_value: float | None
    verdict: Verdict


def sign_test_p(wins: int, losses: int) -> float:
    """Two-sided exact binomial sign test of wins against losses at p = 1/2 (ties already dropped)."""
    if wins < 0 or losses < 0:
        raise ValueError(f"wins and losses must be non-negative; found wins={wins}, losses={losses}")
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1))
    # Exact integer ratio: the doubled tail is correctly rounded even for thousands of pairs.
    return min(1.0, 2 * tail / (1 << n))


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar test: a binomial test on the b and c discordant pairs at p = 1/2."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative; found b={b}, c={c}")
    return sign_test_p(b, c)


def compare_paired(
    name: str,
    pairs: Sequence[tuple[float, float]],
    *,
    trials: int = 1,
    tie_tolerance: float = 1e-9,
    level: float = 0.95,
) -> Comparison:
    """Compare treatment with control over paired cases and give a verdict only the interval supports.

    Each pair is one case's two pass rates; ``trials`` is the most trials behind any one rate (1, the
    default, assumes the widest spread). The interval is paired_lift_interval's: it reflects the number of
    cases even when every case differs by the same amount or every case ties. A single pair always reads
    "inconclusive": one case has no interval, and treating a point as evidence is how a predecessor
    reported any --trials 1 delta as "improved". Interval bounds within tie_tolerance of zero count as
    touching zero, so float noise is never a verdict. A verdict also needs the exact sign test to reject
    "no difference" at the same level: two or three agreeing cases stay "inconclusive".
    """
    if tie_tolerance < 0.0:
        raise ValueError(f"tie_tolerance must be non-negative; found {tie_tolerance!r}")
    diffs = [treatment - control for treatment, control in pairs]
    _check_finite(diffs, f"{name} differences")
    wins = sum(1 for d in diffs if d > tie_tolerance)
    losses = sum(1 for d in diffs if d < -tie_tolerance)
    interval = paired_lift_interval(pairs, trials, level)
    p_value = sign_test_p(wins, losses) if diffs else None
    verdict: Verdict = "inconclusive"
    if interval is not None and p_value is not None and p_value < 1.0 - level:
        if interval.low > tie_tolerance:
            verdict = "improved"
        elif interval.high < -tie_tolerance:
            verdict = "regressed"
    return Comparison(
        name=name,
        n_pairs=len(diffs),
        mean_diff=fmean(diffs) if diffs else None,
        interval=interval,
        wins=wins,
        ties=len(diffs) - wins - losses,
        losses=losses,
        p_value=p_value,
        verdict=verdict,
    )
