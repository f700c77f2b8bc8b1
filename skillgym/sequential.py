"""Anytime-valid confidence sequences for bounded means, by betting, and the stopping rules built on them.

Method: Waudby-Smith and Ramdas (2023), "Estimating means of bounded random variables by betting",
JRSS-B 86(1): the hedged capital process with the predictable plug-in bet (their PrPl, eqs. 26-27).
For observations x_1, x_2, ... in [0, 1] with mean mu, and a candidate mean m, two gamblers bet on
"x is above m" and "x is below m":

    K+_t(m) = prod_{i<=t} (1 + l+_i(m) (x_i - m)),   K-_t(m) = prod_{i<=t} (1 - l-_i(m) (x_i - m)),
    K_t(m)  = max(theta K+_t(m), (1 - theta) K-_t(m)),  theta = 1/2,

where each bet l_i uses only x_1..x_{i-1} (predictable): l_i = sqrt(2 log(2/alpha) / (s2_{i-1} h_i)),
s2 a regularised running variance, h_i the planned horizon (the most trials) or i log(1 + i) without
one, and l+_i(m) <= c/m, l-_i(m) <= c/(1 - m) with c = 3/4 so no bet can lose everything.

Guarantee: under mu = m, K_t(m) is a non-negative martingale with K_0 = 1, so by Ville's inequality
P(exists t: K_t(mu) >= 1/alpha) <= alpha. The set {m : K_s(m) < 1/alpha for every s <= t} is therefore
a (1 - alpha) confidence sequence: it covers mu at every t at once, so at any stopping time, however
the decision to stop was made, with as many looks as the data allow. "Stop when the interval excludes
the threshold" is valid here, as it is not for a Wilson interval looked at after every trial.

A paired lift compares two conditions trial by trial: pair i is (treatment trial i, control trial i),
independent pairs with mean difference delta = p_t - p_c. The difference d_i in [-1, 1] is mapped to
(d_i + 1) / 2 in [0, 1], whose mean is (delta + 1) / 2; the same confidence sequence then covers delta.

Everything here is pure: lists in, numbers out, no randomness, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, Literal

from .model import DEFAULT_FUTILITY, Data
from .stats import Interval

DEFAULT_ALPHA: Final = 0.05
_CAP: Final = 0.75  # c: the largest fraction of capital a bet may stake
_THETA: Final = 0.5  # the hedge between the upward and downward gamblers
_GRID: Final = 400  # candidate means per confidence sequence: bounds are exact to 1/400, outward


def _bets(xs: Sequence[float], alpha: float, horizon: int | None) -> list[float]:
    """The predictable plug-in bets l_1..l_n (before the per-m caps); l_i sees x_1..x_{i-1} only."""
    log_term = 2.0 * math.log(2.0 / alpha)
    bets: list[float] = []
    total, squares = 0.5, 0.25  # the regularised running mean numerator and variance numerator
    for i, x in enumerate(xs, start=1):
        variance = squares / i  # s2_{i-1}: (1/4 + sum of squared deviations) / i
        spread = horizon if horizon is not None else i * math.log(1.0 + i)
        bets.append(math.sqrt(log_term / (variance * spread)))
        mean = (total + x) / (i + 1)  # mu-hat_i, which includes x_i
        total += x
        squares += (x - mean) ** 2
    return bets


def _log_capital_path(xs: Sequence[float], bets: Sequence[float], m: float) -> list[float]:
    """log K_t(m) for t = 1..n (the hedged capital, see the module docstring)."""
    up_cap = _CAP / m if m > 0.0 else math.inf
    down_cap = _CAP / (1.0 - m) if m < 1.0 else math.inf
    log_up = log_down = 0.0
    path: list[float] = []
    for x, bet in zip(xs, bets, strict=True):
        # A bet stakes at most c < 1 of the capital, so neither factor reaches zero.
        log_up += math.log1p(min(bet, up_cap) * (x - m))
        log_down += math.log1p(-min(bet, down_cap) * (x - m))
        path.append(max(math.log(_THETA) + log_up, math.log(1.0 - _THETA) + log_down))
    return path


def rejects(
    xs: Sequence[float], m: float, *, alpha: float = DEFAULT_ALPHA, horizon: int | None = None
) -> bool:
    """Whether the confidence sequence over ``xs`` has excluded ``m`` (at any time so far)."""
    if not xs:
        return False
    bound = math.log(1.0 / alpha)
    return max(_log_capital_path(xs, _bets(xs, alpha, horizon), m)) >= bound


def confidence_sequence(
    xs: Sequence[float], *, alpha: float = DEFAULT_ALPHA, horizon: int | None = None
) -> Interval | None:
    """The (1 - alpha) confidence sequence for the mean of ``xs`` in [0, 1] at its last time; None if empty.

    The running intersection over every time so far, computed on a grid of candidate means and widened
    outward to the next grid point, so rounding never narrows it.
    """
    _check_unit(xs)
    if not xs:
        return None
    bets = _bets(xs, alpha, horizon)
    bound = math.log(1.0 / alpha)
    kept = [k for k in range(_GRID + 1) if max(_log_capital_path(xs, bets, k / _GRID)) < bound]
    level = 1.0 - alpha
    if not kept:  # every candidate excluded cannot happen with probability above alpha; say "nothing"
        mean = math.fsum(xs) / len(xs)
        return Interval(low=mean, high=mean, level=level)
    return Interval(low=max(0.0, (kept[0] - 1) / _GRID), high=min(1.0, (kept[-1] + 1) / _GRID), level=level)


def lift_sequence(
    diffs: Sequence[float], *, alpha: float = DEFAULT_ALPHA, horizon: int | None = None
) -> Interval | None:
    """The confidence sequence for the mean paired difference (each in [-1, 1]); None if empty."""
    inner = confidence_sequence(_to_unit(diffs), alpha=alpha, horizon=horizon)
    if inner is None:
        return None
    return Interval(low=2.0 * inner.low - 1.0, high=2.0 * inner.high - 1.0, level=inner.level)


Status = Literal["open", "above", "below", "improved", "regressed", "futile", "max-trials"]


class Decision(Data, frozen=True, kw_only=True):
    """Where one question stands: decided (a side of its boundary), futile, at its cap, or open."""

    status: Status
    n: int  # observations so far
    estimate: float | None
    interval: Interval | None  # the confidence sequence at n (on the question's own scale)

    @property
    def settled(self) -> bool:
        return self.status != "open"


def decide(
    xs: Sequence[float],
    boundary: float,
    *,
    most: int,
    least: int = 1,
    alpha: float = DEFAULT_ALPHA,
    paired: bool = False,
    with_interval: bool = True,
    futility: float | None = DEFAULT_FUTILITY,
) -> Decision:
    """Settle "is the mean of ``xs`` above or below ``boundary``?" with at most ``most`` observations.

    ``paired``: ``xs`` are differences in [-1, 1] and the answers read "improved"/"regressed"; else they
    are outcomes in [0, 1] and read "above"/"below". Decided once the confidence sequence excludes the
    boundary (and at least ``least`` observations are in); at its cap at ``most``. The horizon of the bets
    is ``most``.

    Futile (at least ``least`` observations in) once the rest of the trials up to ``most`` could not
    decide it even if they went on at an optimistic value: the mean so far plus ``futility`` standard
    errors (towards deciding above), and minus them (towards below), each every remaining observation,
    clipped to [0, 1]. The standard error is the regularised one of the bets, sqrt(v / n) with
    v = (1/4 + sum of squared deviations) / (n + 1), so a few equal values do not read as certainty.
    ``futility=None`` (k infinite) projects the extremes instead, every further value at the top or
    every one at the bottom: curtailment, futile only when no continuation at all could decide it; a
    finite k also stops at curtailment. The rule is fixed before the run (the trial policy carries k),
    and stopping for futility can only withhold a verdict ("inconclusive"), so it never raises the
    error rate of "improved"/"regressed": the confidence sequence holds at every stopping time.
    Its cost is power (a case with a real effect that starts unluckily stops unanswered), which
    ``skillgym.power`` simulates with the rule.
    """
    unit = _to_unit(xs) if paired else [float(x) for x in xs]
    _check_unit(unit)
    m = (boundary + 1.0) / 2.0 if paired else boundary
    n = len(unit)
    estimate = math.fsum(xs) / n if n else None
    interval = None
    if with_interval and n:
        interval = (
            lift_sequence(xs, alpha=alpha, horizon=most)
            if paired
            else confidence_sequence(unit, alpha=alpha, horizon=most)
        )
    status: Status = "open"
    if n >= least and rejects(unit, m, alpha=alpha, horizon=most):
        above = math.fsum(unit) / n > m
        status = ("improved" if above else "regressed") if paired else ("above" if above else "below")
    elif n >= most:
        status = "max-trials"
    elif n >= least and (
        _futile(unit, m, most, alpha, (0.0, 1.0))
        or (futility is not None and _futile(unit, m, most, alpha, _projection(unit, futility)))
    ):
        status = "futile"
    return Decision(status=status, n=n, estimate=estimate, interval=interval)


def _projection(unit: Sequence[float], k: float) -> tuple[float, float]:
    """The values the futility rule continues with: the mean minus and plus ``k`` standard errors."""
    n = len(unit)
    mean = math.fsum(unit) / n
    variance = (0.25 + math.fsum((x - mean) ** 2 for x in unit)) / (n + 1)
    spread = k * math.sqrt(variance / n)
    return max(0.0, mean - spread), min(1.0, mean + spread)


def _futile(unit: Sequence[float], m: float, most: int, alpha: float, values: Sequence[float]) -> bool:
    """Continuing up to ``most`` with every further observation at one of ``values`` never excludes ``m``."""
    rest = most - len(unit)
    return not any(rejects([*unit, *([v] * rest)], m, alpha=alpha, horizon=most) for v in values)


def _to_unit(diffs: Sequence[float]) -> list[float]:
    for index, d in enumerate(diffs):
        if not -1.0 <= d <= 1.0:
            raise ValueError(f"differences[{index}] is {d!r}; a paired difference lies in [-1, 1]")
    return [(d + 1.0) / 2.0 for d in diffs]


def _check_unit(xs: Sequence[float]) -> None:
    for index, x in enumerate(xs):
        if not 0.0 <= x <= 1.0:
            raise ValueError(
                f"values[{index}] is {x!r}; a confidence sequence by betting needs values in [0, 1]"
            )
