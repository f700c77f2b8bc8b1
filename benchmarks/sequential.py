# ruff: noqa: E501, B023
"""Adaptive trials (--trials auto) by seeded simulation: error rates, coverage, and runs saved.

Usage: python benchmarks/sequential.py [--reps N] [--max-trials N] [--futility K|none] [--design]

For a grid of true pass rates and lifts, simulates one case's adaptive question exactly as the scheduler
settles it (skillgym.sequential.decide, min 3 trials, the given cap and futility rule) and prints markdown tables (the ones in
BENCHMARKS.md): the share of verdicts that call a difference that is not there (or the wrong way), with
its own Wilson interval; the share of final confidence sequences that hold the true value; the power; the
mean trials per condition; and the trials per condition a fixed design needs for the same power, judged
the way a fixed per-case comparison is (Fisher's exact test at 5% for a lift, Wilson's interval excluding
the threshold for a pass rate), computed exactly by enumeration. Nothing here asserts; the seeded tests in
tests/unit/test_sequential.py do, on a few settings.

Those per-row "fixed n, same power" designs know the true effect of their row, and where the adaptive power
rounds to 1.00 they must reach it too: an oracle, not a design anyone could run. ``--design`` prints the
comparison a design is planned by instead: for a planned lift with power 0.8, the fixed n a side (Fisher,
5%) and the smallest cap (from that n, in steps of --cap-step, 5 unless told) with which the adaptive
design reaches the same power, then the mean trials of both where the true lift is 0, half the planned
lift, and the planned lift (the fixed design runs its n whatever the truth), with the rate of false verdicts at lift 0 and the coverage of the final
confidence sequences (the lowest of the three truths), each with its Wilson interval.
"""

from __future__ import annotations

import argparse
import functools
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillgym.adaptive import futility_value
from skillgym.model import DEFAULT_FUTILITY
from skillgym.multiplicity import fisher_exact_p
from skillgym.sequential import decide, rejects
from skillgym.stats import wilson_interval

SEED = 20_261_202
LEAST = 3
FUTILITY: list[float | None] = [DEFAULT_FUTILITY]  # set from --futility before anything runs


def _ci(hits: int, n: int) -> str:
    iv = wilson_interval(hits, n)
    assert iv is not None
    return f"{hits / n:.1%} [{iv.low:.1%}, {iv.high:.1%}]"


def _pmf(n: int, p: float) -> list[float]:
    return [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


@functools.cache
def _fisher_rejects(n: int) -> tuple[tuple[bool, ...], ...]:
    return tuple(
        tuple(a > b and fisher_exact_p(a, n, b, n) < 0.05 for b in range(n + 1)) for a in range(n + 1)
    )


def fixed_lift_power(n: int, control: float, lift: float) -> float:
    """Exact power of a fixed design of n trials a side, Fisher's exact test at 5%, improved side."""
    table = _fisher_rejects(n)
    pt, pc = _pmf(n, control + lift), _pmf(n, control)
    return sum(pt[a] * pc[b] for a in range(n + 1) for b in range(n + 1) if table[a][b])


def fixed_rate_power(n: int, p: float, threshold: float) -> float:
    """Exact power of a fixed design of n trials, Wilson's interval excluding the threshold (right side)."""
    total = 0.0
    for k, mass in enumerate(_pmf(n, p)):
        iv = wilson_interval(k, n)
        assert iv is not None
        if (p > threshold and iv.low > threshold) or (p < threshold and iv.high < threshold):
            total += mass
    return total


def fixed_n(power: float, curve: object, limit: int = 200) -> int | None:
    for n in range(1, limit + 1):
        if curve(n) >= power:  # type: ignore[operator]
            return n
    return None


def simulate(
    rng: random.Random, draw: object, boundary: float, most: int, paired: bool
) -> tuple[str, int, list[float]]:
    xs: list[float] = []
    while True:
        xs.append(draw())  # type: ignore[operator]
        got = decide(
            xs, boundary, most=most, least=LEAST, paired=paired, with_interval=False, futility=FUTILITY[0]
        )
        if got.settled:
            return got.status, len(xs), xs


def lift_table(reps: int, most: int) -> list[str]:
    rows = [
        "| control | lift | wrong verdicts (95% CI) | coverage (95% CI) | power | mean trials / condition "
        "| fixed n, same power | runs saved |",
        "|---|---|---|---|---|---|---|---|",
    ]
    saved: list[float] = []
    powered: list[float] = []  # rows where the adaptive design has the power a design is sized for
    for control in (0.2, 0.5, 0.8):
        for lift in (0.0, 0.2, 0.4, 0.6, 0.8):
            if control + lift > 1.0:
                continue
            power, wrong, covered, mean = _lift_run(reps, most, control, lift)
            n_fixed = (
                fixed_n(power, lambda n: fixed_lift_power(n, control, lift))
                if lift > 0 and power > 0.05
                else None
            )
            ratio = "-" if n_fixed is None else f"{1 - mean / n_fixed:+.0%}"
            if n_fixed is not None:
                saved.append(1 - mean / n_fixed)
                if power >= 0.8:
                    powered.append(1 - mean / n_fixed)
            rows.append(
                f"| {control:g} | {lift:g} | {_ci(wrong, reps)} | {_ci(covered, reps)} | {power:.2f} | {mean:.1f} "
                f"| {n_fixed or '-'} | {ratio} |"
            )
    rows += [
        "",
        f"Mean runs saved over the rows with a fixed design to compare: {sum(saved) / len(saved):+.0%}.",
    ]
    if powered:
        rows.append(
            f"Over the rows where the adaptive design has power >= 0.8: {sum(powered) / len(powered):+.0%}."
        )
    return rows


def rate_table(reps: int, most: int) -> list[str]:
    rows = [
        "| pass rate | wrong verdicts (95% CI) | coverage (95% CI) | power | mean trials | fixed n, same power "
        "| runs saved |",
        "|---|---|---|---|---|---|---|",
    ]
    saved: list[float] = []
    powered: list[float] = []
    for p in (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0):
        rng = random.Random(SEED)
        wrong = covered = right = used = 0
        for _ in range(reps):
            status, n, xs = simulate(rng, lambda: float(rng.random() < p), 0.5, most, False)
            used += n
            right += (status == "above" and p > 0.5) or (status == "below" and p < 0.5)
            wrong += (status == "above" and p <= 0.5) or (status == "below" and p >= 0.5)
            covered += not rejects(xs, p, horizon=most)
        power, mean = right / reps, used / reps
        n_fixed = fixed_n(power, lambda n: fixed_rate_power(n, p, 0.5)) if p != 0.5 and power > 0.05 else None
        ratio = "-" if n_fixed is None else f"{1 - mean / n_fixed:+.0%}"
        if n_fixed is not None:
            saved.append(1 - mean / n_fixed)
            if power >= 0.8:
                powered.append(1 - mean / n_fixed)
        rows.append(
            f"| {p:g} | {_ci(wrong, reps)} | {_ci(covered, reps)} | {power:.2f} | {mean:.1f} | {n_fixed or '-'} "
            f"| {ratio} |"
        )
    rows += [
        "",
        f"Mean runs saved over the rows with a fixed design to compare: {sum(saved) / len(saved):+.0%}.",
    ]
    if powered:
        rows.append(
            f"Over the rows where the adaptive design has power >= 0.8: {sum(powered) / len(powered):+.0%}."
        )
    return rows


def _lift_run(reps: int, most: int, control: float, lift: float) -> tuple[float, int, int, float]:
    """Power, wrong verdicts, covering sequences and mean trials per condition of the adaptive lift."""
    rng = random.Random(SEED)
    improved = wrong = covered = used = 0
    for _ in range(reps):
        status, n, xs = simulate(
            rng,
            lambda: float(rng.random() < control + lift) - float(rng.random() < control),
            0.0,
            most,
            True,
        )
        used += n
        improved += status == "improved"
        wrong += status == "regressed" or (lift == 0.0 and status == "improved")
        covered += not rejects([(x + 1) / 2 for x in xs], (lift + 1) / 2, horizon=most)
    return improved / reps, wrong, covered, used / reps


DESIGNS = ((0.5, 0.3), (0.5, 0.4), (0.5, 0.5), (0.2, 0.4), (0.2, 0.6))


def design_table(reps: int, step: int = 5, target: float = 0.8) -> list[str]:
    rows = [
        f"| control | planned lift | fixed n (power {target:g}) | adaptive cap | adaptive power "
        "| mean trials at lift 0 | at half | at the planned lift | saved at 0 | at half | at planned "
        "| false verdicts at lift 0 (95% CI) | coverage, lowest (95% CI) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    saved_all: list[list[float]] = [[], [], []]
    for control, lift in DESIGNS:
        n_fixed = fixed_n(target, lambda n: fixed_lift_power(n, control, lift))
        assert n_fixed is not None
        cap = n_fixed
        while True:
            planned = _lift_run(reps, cap, control, lift)
            if planned[0] >= target or cap >= 100:
                break
            cap += step
        zero = _lift_run(reps, cap, control, 0.0)
        half = _lift_run(reps, cap, control, lift / 2)
        means = (zero[3], half[3], planned[3])
        for column, mean in zip(saved_all, means, strict=True):
            column.append(1 - mean / n_fixed)
        saved = [f"{1 - mean / n_fixed:+.0%}" for mean in means]
        coverage = min(run[2] for run in (zero, half, planned))
        rows.append(
            f"| {control:g} | {lift:g} | {n_fixed} | {cap} | {planned[0]:.2f} | {zero[3]:.1f} | {half[3]:.1f} "
            f"| {planned[3]:.1f} | {' | '.join(saved)} | {_ci(zero[1], reps)} | {_ci(coverage, reps)} |"
        )
    mean_saved = [f"{sum(c) / len(c):+.0%}" for c in saved_all]
    rows += [
        "",
        f"Mean runs saved over the designs: {mean_saved[0]} at lift 0, {mean_saved[1]} at half the lift, "
        f"{mean_saved[2]} at the planned lift.",
    ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--max-trials", type=int, default=20)
    parser.add_argument(
        "--futility",
        type=futility_value,
        default=DEFAULT_FUTILITY,
        help=f"the futility rule's k, or none: curtailment only (default {DEFAULT_FUTILITY:g})",
    )
    parser.add_argument(
        "--design", action="store_true", help="the planned-design comparison (see the docstring) only"
    )
    parser.add_argument(
        "--cap-step", type=int, default=5, help="--design: the adaptive caps tried (default 5)"
    )
    args = parser.parse_args()
    FUTILITY[0] = args.futility
    rule = "none" if args.futility is None else f"{args.futility:g}"
    if args.design:
        print(
            f"### Planned designs: power 0.8 for a per-case lift (futility {rule}, {args.reps} runs per "
            "setting)\n"
        )
        print("\n".join(design_table(args.reps, args.cap_step)))
        return
    print(
        f"### Paired lift per case (max {args.max_trials} trials per condition, futility {rule}, "
        f"{args.reps} runs per row)\n"
    )
    print("\n".join(lift_table(args.reps, args.max_trials)))
    print(
        f"\n### Pass rate against the threshold 0.5 (max {args.max_trials} trials, futility {rule}, "
        f"{args.reps} runs per row)\n"
    )
    print("\n".join(rate_table(args.reps, args.max_trials)))


if __name__ == "__main__":
    main()
