"""Power planning: the trials and cases a lift needs to be detected by the report's own verdicts.

The suite-level verdict is ``paired.compare_paired`` over the cases of a lane (each case one pair of pass
rates, ``trials`` trials a side): improved only when its interval excludes zero and the exact sign test
rejects at the same level. Its power has no closed form, so it is simulated exactly as the report computes
it, with cases of a common control rate and treatment rate = control + lift, from a fixed seed (common
random numbers across designs, so a larger design never looks weaker by chance). The per-case adaptive
design (``--trials auto``) is simulated the same way with ``sequential.decide``, futility rule included:
a case with a real lift that starts unluckily can stop futile, and that loss is part of its power.
"""

from __future__ import annotations

import random
from typing import Final

from .model import DEFAULT_FUTILITY, Data
from .paired import compare_paired
from .sequential import decide

SIMULATIONS: Final = 400
PLAN_SEED: Final = 20_261_202
MOST_TRIALS: Final = 50  # past this a plan says "not reachable" rather than search on
MOST_CASES: Final = 400
MOST_CAP: Final = 100  # the largest --max-trials an adaptive plan searches


class Design(Data, frozen=True, kw_only=True):
    """A suite-level design: cases compared, trials per case and side, and its simulated power."""

    cases: int
    trials: int
    power: float


def suite_power(
    cases: int,
    trials: int,
    lift: float,
    *,
    control: float = 0.5,
    alpha: float = 0.05,
    simulations: int = SIMULATIONS,
    seed: int = PLAN_SEED,
) -> float:
    """The chance that the report calls a lane's lift "improved", for ``cases`` cases of ``trials`` a side."""
    _check_rates(control, lift)
    rng = random.Random(seed)
    treated = control + lift
    hits = 0
    for _ in range(simulations):
        pairs = [(_rate(rng, treated, trials), _rate(rng, control, trials)) for _ in range(cases)]
        verdict = compare_paired("plan", pairs, trials=trials, level=1.0 - alpha).verdict
        hits += verdict == "improved"
    return hits / simulations


def _rate(rng: random.Random, p: float, trials: int) -> float:
    return sum(rng.random() < p for _ in range(trials)) / trials


def _check_rates(control: float, lift: float) -> None:
    if not 0.0 <= control <= 1.0 or not 0.0 < control + lift <= 1.0 or lift <= 0.0:
        raise ValueError(
            f"a lift of {lift} over a control pass rate of {control} must be positive and stay within [0, 1]"
        )


def trials_needed(
    cases: int, lift: float, power: float, *, control: float = 0.5, alpha: float = 0.05
) -> Design | None:
    """The fewest trials per case and side reaching ``power`` with ``cases`` cases; None up to MOST_TRIALS."""
    for trials in range(1, MOST_TRIALS + 1):
        got = suite_power(cases, trials, lift, control=control, alpha=alpha)
        if got >= power:
            return Design(cases=cases, trials=trials, power=got)
    return None


def cases_needed(
    trials: int, lift: float, power: float, *, control: float = 0.5, alpha: float = 0.05
) -> Design | None:
    """The fewest cases reaching ``power`` at ``trials`` a side; None up to MOST_CASES (bisection)."""
    low, high = 1, 2
    while suite_power(high, trials, lift, control=control, alpha=alpha) < power:
        low, high = high, high * 2
        if high > MOST_CASES:
            return None
    while high - low > 1:
        mid = (low + high) // 2
        if suite_power(mid, trials, lift, control=control, alpha=alpha) >= power:
            high = mid
        else:
            low = mid
    return Design(
        cases=high, trials=trials, power=suite_power(high, trials, lift, control=control, alpha=alpha)
    )


def smallest_lift(
    cases: int,
    trials: int,
    power: float,
    *,
    control: float = 0.5,
    alpha: float = 0.05,
    step: float = 0.01,
) -> float | None:
    """The smallest lift (to ``step``) that ``cases`` cases of ``trials`` detect with ``power``, or None."""
    best = None
    high = round((1.0 - control) / step)
    low = 1
    if suite_power(cases, trials, high * step, control=control, alpha=alpha) < power:
        return None
    while low <= high:  # power grows with the lift: bisect on the grid of steps
        mid = (low + high) // 2
        if suite_power(cases, trials, mid * step, control=control, alpha=alpha) >= power:
            best, high = mid * step, mid - 1
        else:
            low = mid + 1
    return best


class AdaptiveCase(Data, frozen=True, kw_only=True):
    """One case's adaptive lift decision: how often it is decided "improved", and the trials it takes."""

    power: float  # the share decided improved: futile and undecided-at-the-cap cases are misses
    futile: float  # the share that stopped futile
    mean_trials_per_side: float
    max_trials: int
    futility: float | None  # the rule's k (None: curtailment only)


def adaptive_case(
    lift: float,
    *,
    control: float = 0.5,
    max_trials: int = 20,
    min_trials: int = 3,
    futility: float | None = DEFAULT_FUTILITY,
    alpha: float = 0.05,
    simulations: int = 200,
    seed: int = PLAN_SEED,
) -> AdaptiveCase:
    """Simulate one case's paired lift under ``--trials auto``: its power and mean trials per condition.

    ``lift`` may be 0 here (the runs a case with no effect takes; its "power" is then the rate of false
    "improved" verdicts).
    """
    if lift != 0.0:
        _check_rates(control, lift)
    rng = random.Random(seed)
    hits = futile = used = 0
    for _ in range(simulations):
        diffs: list[float] = []
        while True:
            d = float(rng.random() < control + lift) - float(rng.random() < control)
            diffs.append(d)
            got = decide(
                diffs,
                0.0,
                most=max_trials,
                least=min_trials,
                alpha=alpha,
                paired=True,
                with_interval=False,
                futility=futility,
            )
            if got.settled:
                break
        hits += got.status == "improved"
        futile += got.status == "futile"
        used += len(diffs)
    return AdaptiveCase(
        power=hits / simulations,
        futile=futile / simulations,
        mean_trials_per_side=used / simulations,
        max_trials=max_trials,
        futility=futility,
    )


def adaptive_cap_needed(
    lift: float,
    power: float,
    *,
    control: float = 0.5,
    min_trials: int = 3,
    futility: float | None = DEFAULT_FUTILITY,
    alpha: float = 0.05,
    simulations: int = 200,
) -> AdaptiveCase | None:
    """The smallest ``--max-trials`` (a multiple of 5) with which one case's lift reaches ``power``
    under ``--trials auto`` and the futility rule; None up to MOST_CAP (bisection: power grows with the cap).
    """

    def at(cap: int) -> AdaptiveCase:
        return adaptive_case(
            lift,
            control=control,
            max_trials=cap,
            min_trials=min_trials,
            futility=futility,
            alpha=alpha,
            simulations=simulations,
        )

    low, high = max(1, min_trials // 5), MOST_CAP // 5  # caps in steps: 5 * step
    best = at(5 * high)
    if best.power < power:
        return None
    while low < high:
        mid = (low + high) // 2
        got = at(5 * mid)
        if got.power >= power:
            best, high = got, mid
        else:
            low = mid + 1
    return best
