"""Score-type intervals for means of bounded values at small n: a case's score, a suite's pass rate, a lift.

Every value here lies in [0, 1], so its variance is at most mu(1 - mu): the Wilson interval inverts the
score test under that bound. A suite of case means usually spreads less than that, by a dispersion factor
phi = variance / (mu(1 - mu)); the interval for a suite estimates phi from its cases (never above 1, and
never below 1/trials, the least a case mean of that many trials can spread) and uses Student's t with
n - 1 degrees of freedom for the estimated phi. Nothing here resamples, so nothing here is a point that
looks certain: the interval of n values always reflects n, even when all of them are equal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from .stats import (
    Interval,
    _check_finite,
    _check_level,
    fmean,
    normal_quantile,
    t_quantile,
    wilson_around,
    wilson_interval,
)

# The fewest cases at which the simulations (benchmarks/coverage.py) show a suite or lift interval holding
# its level; below it an interval is printed, but marked as resting on no such check.
SMALLEST_CHECKED: Final = 6


def _check_unit(values: Sequence[float], what: str) -> None:
    _check_finite(values, what)
    for index, value in enumerate(values):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{what}[{index}] is {value!r}; a score-type interval needs values in [0, 1]")


def bounded_mean_interval(values: Sequence[float], level: float = 0.95) -> Interval | None:
    """Interval for the mean of scores in [0, 1] (one case's trials); None below two values.

    It assumes the largest spread a [0, 1] score can have (a pass or a fail), so it is Wilson's for
    pass/fail scores and wider than needed for graded ones: never too narrow, and never a point when the
    scores agree. One value says nothing about the spread, so it gets no interval at all.
    """
    _check_level(level)
    _check_unit(values, "scores")
    if len(values) < 2:
        return None
    return wilson_around(fmean(values), len(values), normal_quantile(0.5 + level / 2.0), level)


def dispersion(case_means: Sequence[float], trials: int) -> float:
    """phi: the case means' variance over the largest a [0, 1] mean could have, kept in [1/trials, 1]."""
    mean = fmean(case_means)
    floor = 1.0 / trials
    if mean in (0.0, 1.0) or len(case_means) < 2:
        return floor
    variance = math.fsum((v - mean) ** 2 for v in case_means) / (len(case_means) - 1)
    return min(1.0, max(floor, variance / (mean * (1.0 - mean))))


def _phi_interval(
    case_means: Sequence[float], trials: int, level: float
) -> tuple[Interval, float]:  # the interval and the dispersion it used
    phi = dispersion(case_means, trials)
    quantile = t_quantile(0.5 + level / 2.0, len(case_means) - 1)
    return wilson_around(fmean(case_means), len(case_means) / phi, quantile, level), phi


def suite_pass_interval(case_means: Sequence[float], trials: int, level: float = 0.95) -> Interval | None:
    """Interval for the mean of per-case pass rates, the case the unit; None below two cases.

    ``trials`` is the most trials any case ran: the floor of phi is 1/trials, so the floor stays a lower
    bound when cases ran different numbers of trials.
    """
    _check_level(level)
    _check_unit(case_means, "case means")
    if trials < 1:
        raise ValueError(f"trials must be at least 1; found {trials}")
    if len(case_means) < 2:
        return None
    return _phi_interval(case_means, trials, level)[0]


def _correlation(xs: Sequence[float], ys: Sequence[float], phis: tuple[float, float], trials: int) -> float:
    """The two sides' correlation on the scale of their intervals, a positive one corrected for continuity.

    Newcombe's method 10 for paired pass/fail outcomes takes (AD - BC - N/2) for a positive AD - BC:
    in covariance terms, cov - 1/(2N). A case mean moves in steps of 1/trials, so the correction here is
    cov - 1/(2N trials), over the variances the side intervals assume (phi mu(1 - mu)). Without it, cases
    that all tie yet differ from each other (some always pass, some never) would give a correlation of 1
    and an interval of zero width.
    """
    n = len(xs)
    mx, my = fmean(xs), fmean(ys)
    variances = phis[0] * mx * (1.0 - mx), phis[1] * my * (1.0 - my)
    if variances[0] == 0.0 or variances[1] == 0.0:
        return 0.0  # a side without spread carries no information about the correlation
    cov = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / n
    if cov > 0.0:
        cov = max(0.0, cov - 1.0 / (2.0 * n * trials))
    return max(-1.0, min(1.0, cov / math.sqrt(variances[0] * variances[1])))


def paired_lift_interval(
    pairs: Sequence[tuple[float, float]], trials: int, level: float = 0.95
) -> Interval | None:
    """Interval for the mean of (treatment - control) over paired cases; None below two pairs.

    Newcombe's square-and-add for a paired difference (his method 10), with each side's score interval
    from suite_pass_interval and the correlation of the two sides' case means (see _correlation): each
    side's interval reflects its own number of cases and never collapses, so neither does the difference
    (every case differing by the same amount, or every case tied, still gives an interval of nonzero
    width). A negative correlation widens the interval; a positive one narrows it, as pairing should.
    """
    _check_level(level)
    if trials < 1:
        raise ValueError(f"trials must be at least 1; found {trials}")
    if len(pairs) < 2:
        return None
    treated = [t for t, _ in pairs]
    control = [c for _, c in pairs]
    _check_unit(treated, "treatment case means")
    _check_unit(control, "control case means")
    (it, phi_t), (ic, phi_c) = _phi_interval(treated, trials, level), _phi_interval(control, trials, level)
    mt, mc = fmean(treated), fmean(control)
    r = _correlation(treated, control, (phi_t, phi_c), trials)
    dl_t, du_t, dl_c, du_c = mt - it.low, it.high - mt, mc - ic.low, ic.high - mc
    low = (mt - mc) - math.sqrt(max(0.0, dl_t**2 - 2.0 * r * dl_t * du_c + du_c**2))
    high = (mt - mc) + math.sqrt(max(0.0, du_t**2 - 2.0 * r * du_t * dl_c + dl_c**2))
    return Interval(low=max(-1.0, low), high=min(1.0, high), level=level)


def rate_difference_interval(
    passed_a: int, trials_a: int, passed_b: int, trials_b: int, level: float = 0.95
) -> Interval | None:
    """Interval for rate a minus rate b from two independent sets of trials; None when a side has none.

    Newcombe's hybrid score interval (his method 10 for unpaired rates): square-and-add over each side's
    Wilson interval. It keeps its level at few trials where the Wald interval does not, never leaves
    [-1, 1], and is never a point (two sides that both pass every trial still get width from their counts).
    """
    wilson_a, wilson_b = (
        wilson_interval(passed_a, trials_a, level),
        wilson_interval(passed_b, trials_b, level),
    )
    if wilson_a is None or wilson_b is None:
        return None
    rate_a, rate_b = passed_a / trials_a, passed_b / trials_b
    diff = rate_a - rate_b
    low = diff - math.hypot(rate_a - wilson_a.low, wilson_b.high - rate_b)
    high = diff + math.hypot(wilson_a.high - rate_a, rate_b - wilson_b.low)
    return Interval(low=max(-1.0, low), high=min(1.0, high), level=level)
