"""Per-case flags over many cases: an exact two-sample test per case and Holm's step-down over the family."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

# Hypergeometric probabilities within this relative distance of the observed one count as "as extreme":
# the two-sided p-value must not depend on how a float happened to round a tie.
_RELATIVE_TIE = Fraction(1, 10**7)


def fisher_exact_p(passed_a: int, trials_a: int, passed_b: int, trials_b: int) -> float:
    """Two-sided Fisher exact test that two pass rates are equal, from each side's passes and trials.

    The p-value sums every table with the same margins that is no more likely than the observed one,
    computed in exact integers: conservative at few trials, as an exact test is, and never below its size.
    """
    for what, passed, trials in (("a", passed_a, trials_a), ("b", passed_b, trials_b)):
        if trials < 0 or not 0 <= passed <= trials:
            raise ValueError(
                f"fisher_exact_p needs 0 <= passed <= trials for side {what}; found passed={passed}, "
                f"trials={trials}"
            )
    passes = passed_a + passed_b
    total = trials_a + trials_b
    if total == 0:
        return 1.0
    low, high = max(0, passes - trials_b), min(passes, trials_a)
    weights = {k: math.comb(trials_a, k) * math.comb(trials_b, passes - k) for k in range(low, high + 1)}
    observed = weights[passed_a]
    limit = observed + observed * _RELATIVE_TIE
    tail = sum(w for w in weights.values() if w <= limit)
    return min(1.0, float(Fraction(tail, math.comb(total, passes))))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: reject where adjusted p < alpha.

    Holm controls the family-wise error rate (the chance of even one false flag among all the cases) at
    alpha under any dependence between the cases, and rejects everything Bonferroni does and more.
    """
    for index, p in enumerate(p_values):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p_values[{index}] is {p!r}; a p-value lies in [0, 1]")
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
