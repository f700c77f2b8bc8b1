"""Flaky cases: a run's cases whose trials disagree, with their flip rate and pass^k."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..stats import pass_hat_k
from .aggregate import CaseStats, FlakyCase

_KS: Final = (1, 3, 5, 10)


def flip_rate(passed: int, trials: int) -> float:
    """The chance that two of ``trials`` outcomes, drawn without replacement, disagree (0 below two)."""
    if not 0 <= passed <= trials:
        raise ValueError(f"flip_rate needs 0 <= passed <= trials; found passed={passed}, trials={trials}")
    if trials < 2:
        return 0.0
    # Exactly the share of unordered pairs of trials with one pass and one fail: order-free, because
    # concurrent trials have no order worth reading transitions from.
    return 2 * passed * (trials - passed) / (trials * (trials - 1))


def flaky_case(stats: CaseStats) -> FlakyCase | None:
    """The case as a flaky one when some of its trials for verdicts pass and some fail; else None."""
    n, c = stats.verdict_trials, stats.passed
    if not 0 < c < n:
        return None
    return FlakyCase(
        lane=stats.lane,
        case_id=stats.case_id,
        condition=stats.condition,
        provider=stats.provider,
        trials=n,
        passed=c,
        flip_rate=flip_rate(c, n),
        pass_hat_k={str(k): pass_hat_k(n, c, k) for k in _KS if k <= n},
    )


def flaky_cases(stats: Iterable[CaseStats]) -> tuple[FlakyCase, ...]:
    """Every flaky case of a run, most flips first, then in report order."""
    found = [f for s in stats if (f := flaky_case(s)) is not None]
    return tuple(sorted(found, key=lambda f: -f.flip_rate))  # sorted is stable: report order within ties


def telling_k(case: FlakyCase) -> int:
    """The k whose pass^k says most: the largest below the case's trials (pass^n of a flaky case is 0)."""
    ks = [int(k) for k in case.pass_hat_k if int(k) < case.trials]
    return max(ks, default=1)
