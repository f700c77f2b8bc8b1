"""Honest statistics for trial outcomes: intervals, pass@k, paired comparisons and exact tests."""

from __future__ import annotations

import functools
import math
import random
import statistics
from collections.abc import Sequence
from typing import Final

import msgspec

# A fixed default so two reports over the same trials print the same intervals.
DEFAULT_SEED: Final = 20_240_601
DEFAULT_RESAMPLES: Final = 2000


class Interval(msgspec.Struct, frozen=True, kw_only=True):
    low: float
    high: float
    level: float = 0.95

    def __post_init__(self) -> None:
        if not self.low <= self.high:
            raise ValueError(f"Interval low must not exceed high; found low={self.low!r}, high={self.high!r}")
        _check_level(self.level)


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    n: int
    median: float
    low: float
    high: float
    iqr: float


def contains_zero(interval: Interval) -> bool:
    return interval.low <= 0.0 <= interval.high


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be strictly between 0 and 1; found {level!r} (e.g. 0.95)")


def _check_finite(values: Sequence[float], what: str) -> None:
    for index, value in enumerate(values):
        if not math.isfinite(value):
            raise ValueError(f"{what}[{index}] is {value!r}; statistics need finite numbers")


@functools.lru_cache(maxsize=64)  # a report asks for the same level once per case and condition
def normal_quantile(p: float) -> float:
    """The standard normal quantile (inverse CDF) at probability ``p``."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"normal_quantile needs 0 < p < 1; found {p!r}")
    return statistics.NormalDist().inv_cdf(p)


@functools.lru_cache(maxsize=1024)  # a report asks once per case and condition, for a few distinct counts
def wilson_interval(successes: int, n: int, level: float = 0.95) -> Interval | None:
    """Wilson score interval for a binomial proportion; None when there are no trials."""
    _check_level(level)
    if n < 0:
        raise ValueError(f"wilson_interval needs n >= 0; found n={n}")
    if not 0 <= successes <= n:
        raise ValueError(f"wilson_interval needs 0 <= successes <= n; found successes={successes}, n={n}")
    if n == 0:
        return None
    return _wilson(successes / n, n, level)


def _wilson(p_hat: float, n: int, level: float) -> Interval:
    return wilson_around(p_hat, n, normal_quantile(0.5 + level / 2.0), level)


def wilson_around(mean: float, n: float, quantile: float, level: float) -> Interval:
    """Wilson's score interval around ``mean`` with ``n`` observations (possibly an effective, fractional
    number) and the given quantile (a normal one for Wilson's own, a t one for small-sample variants)."""
    q2n = quantile * quantile / n
    center = (mean + q2n / 2.0) / (1.0 + q2n)
    half = quantile / (1.0 + q2n) * math.sqrt(mean * (1.0 - mean) / n + q2n / (4.0 * n))
    # At 0 and 1 the bound is exactly the mean; pin it so rounding never excludes the estimate.
    low = 0.0 if mean == 0.0 else max(0.0, min(mean, center - half))
    high = 1.0 if mean == 1.0 else min(1.0, max(mean, center + half))
    return Interval(low=low, high=high, level=level)


def _check_k(n: int, c: int, k: int) -> None:
    if not 1 <= k <= n:
        raise ValueError(f"k must satisfy 1 <= k <= n; found k={k}, n={n} (run at least k trials)")
    if not 0 <= c <= n:
        raise ValueError(f"c (passing trials) must satisfy 0 <= c <= n; found c={c}, n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): the chance that at least one of k of the n trials passes."""
    _check_k(n, c, k)
    total = math.comb(n, k)
    # Exact integers then one correctly rounded division: no overflow, and no cancellation in
    # 1 - ratio when pass@k is tiny, which the float product form suffers from.
    return (total - math.comb(n - c, k)) / total


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k = C(c,k)/C(n,k): the chance that k trials drawn without replacement all pass."""
    _check_k(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


_BETA_EPS: Final = 1e-15
_BETA_TINY: Final = 1e-300
_BETA_MAX_ITER: Final = 10_000
_LARGE_DF: Final = 1e6


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    # Lentz's method for the continued fraction of the incomplete beta (Numerical Recipes 6.4).
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _BETA_TINY else _BETA_TINY)
    result = d
    for m in range(1, _BETA_MAX_ITER + 1):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _BETA_TINY else _BETA_TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _BETA_TINY else _BETA_TINY
            result *= c * d
        if abs(c * d - 1.0) < _BETA_EPS:
            return result
    raise ArithmeticError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")


def _regularized_beta(a: float, b: float, x: float, y: float) -> float:
    # I_x(a, b), with y = 1 - x passed in so callers can supply it without cancellation.
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, y) / b


def _t_upper_tail(t: float, df: float) -> float:
    # P(T > t) for t >= 0, written so the small tail is computed directly rather than as 1 - cdf.
    return 0.5 * _regularized_beta(df / 2.0, 0.5, df / (df + t * t), t * t / (df + t * t))


@functools.lru_cache(maxsize=256)  # a report asks for the same few (level, df) pairs once per case
def t_quantile(p: float, df: float) -> float:
    """Student-t quantile: bisection on the exact CDF (a regularized incomplete beta), accurate to about 1e-9.

    df may be fractional; above 1e6 the Cornish-Fisher expansion takes over, which is exact to float
    precision there.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"t_quantile needs 0 < p < 1; found {p!r}")
    if not df > 0.0:
        raise ValueError(f"t_quantile needs df > 0; found {df!r}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    if df > _LARGE_DF:
        # lgamma of huge arguments loses digits; the Cornish-Fisher series (A&S 26.7.5) errs by O(df^-3).
        z = normal_quantile(p)
        return z + (z**3 + z) / (4.0 * df) + (5.0 * z**5 + 16.0 * z**3 + 3.0 * z) / (96.0 * df * df)
    tail = 1.0 - p
    low, high = 0.0, max(1.0, normal_quantile(p))
    while _t_upper_tail(high, df) > tail:
        low, high = high, high * 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if mid in (low, high):
            break
        if _t_upper_tail(mid, df) > tail:
            low = mid
        else:
            high = mid
    return (low + high) / 2.0


def fmean(values: Sequence[float]) -> float:
    """The mean, correctly rounded sum over n; constant input gives exactly that constant."""
    first = values[0]
    if all(v == first for v in values):
        return float(first)
    return math.fsum(values) / len(values)


def clip_interval(interval: Interval | None, low: float, high: float) -> Interval | None:
    """The interval cut to [low, high], the range the quantity cannot leave (a score or a pass rate: [0, 1]).

    A t-interval is symmetric, so near a bound it reaches past it; the true value lies inside the range
    anyway, so cutting there loses no coverage and stops the report printing impossible values.
    """
    if interval is None:
        return None
    if not low <= high:
        raise ValueError(f"clip_interval needs low <= high; found low={low!r}, high={high!r}")
    clipped_low, clipped_high = min(max(interval.low, low), high), max(min(interval.high, high), low)
    return Interval(low=clipped_low, high=clipped_high, level=interval.level)


def mean_interval(values: Sequence[float], level: float = 0.95) -> Interval | None:
    """Student-t interval for the mean; None when empty, the point [v, v] for a single value."""
    _check_level(level)
    _check_finite(values, "values")
    if not values:
        return None
    mean = fmean(values)
    if len(values) == 1:
        return Interval(low=mean, high=mean, level=level)
    spread = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))
    half = t_quantile(0.5 + level / 2.0, len(values) - 1) * spread / math.sqrt(len(values))
    return Interval(low=mean - half, high=mean + half, level=level)


def _quantile(ordered: Sequence[float], q: float) -> float:
    # Linear interpolation between order statistics (Hyndman-Fan type 7, numpy's default).
    position = q * (len(ordered) - 1)
    index = math.floor(position)
    if index + 1 >= len(ordered):
        return ordered[-1]
    return ordered[index] + (position - index) * (ordered[index + 1] - ordered[index])


# Above this many units the bootstrap distribution of a mean is normal to within its own Monte Carlo
# noise, and resampling costs O(n x resamples) in pure Python; the t-interval is used instead.
LARGE_SAMPLE: Final = 400


def _bootstrap_mean(values: Sequence[float], resamples: int, level: float, seed: int) -> Interval | None:
    _check_level(level)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1; found {resamples}")
    if not values:
        return None
    if len(values) > LARGE_SAMPLE:
        # A bootstrap mean never leaves the range of the values; neither may the interval standing in for it.
        return clip_interval(mean_interval(values, level), min(values), max(values))
    rng = random.Random(seed)
    size = len(values)
    means = sorted(math.fsum(rng.choices(values, k=size)) / size for _ in range(resamples))
    alpha = 1.0 - level
    return Interval(low=_quantile(means, alpha / 2.0), high=_quantile(means, 1.0 - alpha / 2.0), level=level)


def clustered_bootstrap_mean(
    clusters: Sequence[Sequence[float]],
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> Interval | None:
    """Percentile bootstrap for the mean of per-case means, resampling whole cases with replacement.

    Too narrow at a handful of cases: the report uses score_intervals instead, and benchmarks/coverage.py
    keeps this as the method it measures that against.

    The case is the unit: trials of one case are correlated, so resampling trials would overstate
    the evidence, and averaging case means weights every case equally however many trials it ran.
    """
    cluster_means: list[float] = []
    for index, cluster in enumerate(clusters):
        if not cluster:
            raise ValueError(f"clusters[{index}] is empty; drop cases without trials before aggregating")
        _check_finite(cluster, f"clusters[{index}]")
        cluster_means.append(fmean(cluster))
    return _bootstrap_mean(cluster_means, resamples, level, seed)


def clustered_pass_rate(
    clusters: Sequence[Sequence[bool]],
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> Interval | None:
    """Interval for the mean per-case pass rate, resampling cases (see clustered_bootstrap_mean).

    When every case has the same pass rate (all pass, say), resampling cases can only give that rate
    back: a point that looks certain. Then the Wilson interval over the cases stands in: it assumes
    the largest spread a rate in [0, 1] can have, so it is never too narrow.
    """
    as_floats = [[1.0 if passed else 0.0 for passed in cluster] for cluster in clusters]
    interval = clustered_bootstrap_mean(as_floats, resamples, level, seed)
    rates = {fmean(cluster) for cluster in as_floats}
    if interval is None or len(rates) > 1:
        return interval
    return _wilson(rates.pop(), len(as_floats), level)


def paired_bootstrap_diff(
    pairs: Sequence[tuple[float, float]],
    resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = DEFAULT_SEED,
) -> Interval | None:
    """Percentile bootstrap for the mean of (treatment - control), resampling pairs.

    Too narrow at a handful of pairs, and a point when every pair differs alike: the report uses
    score_intervals.paired_lift_interval instead (benchmarks/coverage.py compares the two).
    """
    diffs = [treatment - control for treatment, control in pairs]
    _check_finite(diffs, "differences")
    return _bootstrap_mean(diffs, resamples, level, seed)


def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("median of no values is undefined; check for empty input first")
    return statistics.median(values)


def spread(values: Sequence[float]) -> tuple[float, float]:
    """The (min, max) range of the values."""
    if not values:
        raise ValueError("spread of no values is undefined; check for empty input first")
    return min(values), max(values)


def interquartile_range(values: Sequence[float]) -> float:
    """Q3 - Q1 with linear interpolation between order statistics (0 for a single value)."""
    if not values:
        raise ValueError("interquartile range of no values is undefined; check for empty input first")
    ordered = sorted(values)
    return _quantile(ordered, 0.75) - _quantile(ordered, 0.25)


def summarize(values: Sequence[float]) -> Summary | None:
    """Median, range and IQR of the values; None when there are none."""
    if not values:
        return None
    _check_finite(values, "values")
    low, high = spread(values)
    return Summary(
        n=len(values),
        median=float(median(values)),
        low=float(low),
        high=float(high),
        iqr=float(interquartile_range(values)),
    )
