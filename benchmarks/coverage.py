"""Coverage of the report's intervals and the false-flag rate of its per-case flags, by seeded simulation.

Usage: python benchmarks/coverage.py [--reps N] [--resamples N] [--only pass|lift|score|flags]

Prints markdown tables (the ones in BENCHMARKS.md): for every setting, the share of simulated suites whose
95% interval held the true value, with that share's own Wilson interval, before (the percentile bootstrap
and t-intervals the report used to print) and after (the score-type intervals it prints now). Nothing here
asserts; the seeded tests in tests/unit/test_score_intervals.py and test_multiplicity.py do, on a few
settings.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillgym.multiplicity import fisher_exact_p, holm_adjust
from skillgym.score_intervals import bounded_mean_interval, paired_lift_interval, suite_pass_interval
from skillgym.stats import (
    Interval,
    clip_interval,
    clustered_pass_rate,
    mean_interval,
    paired_bootstrap_diff,
    wilson_interval,
)

CASES = (6, 10, 20)
TRIALS = (1, 2, 3, 5)
# Case pass rates: skewed Beta distributions (easy suites, hard suites, U-shaped), and one symmetric.
BETAS = ((0.5, 3.0), (1.0, 4.0), (4.0, 1.0), (3.0, 0.5), (0.5, 0.5), (2.0, 2.0))
# Lifts: control rates from one Beta; in a share `untouched` of the cases the skill changes nothing, in the
# rest the rate is drawn afresh from the other Beta. The last is the hardest: most cases tie, a few collapse.
LIFTS = (
    ((1.0, 4.0), (4.0, 1.0), 0.5),
    ((2.0, 2.0), (2.0, 2.0), 0.0),
    ((4.0, 1.0), (8.0, 1.0), 0.3),
    ((0.5, 3.0), (0.5, 3.0), 0.7),
    ((1.0, 1.0), (3.0, 0.5), 0.0),
    ((3.0, 0.5), (0.5, 3.0), 0.8),
)
SCORES = (
    ("pass/fail at 0.9", {0.0: 0.1, 1.0: 0.9}),
    ("pass/fail at 0.5", {0.0: 0.5, 1.0: 0.5}),
    ("0, 0.5, 1 (mean 0.65)", {0.0: 0.2, 0.5: 0.3, 1.0: 0.5}),
    ("quarters, skewed high", {0.0: 0.05, 0.25: 0.05, 0.75: 0.2, 1.0: 0.7}),
    ("0, 0.5, 1 (mean 0.2)", {0.0: 0.7, 0.5: 0.2, 1.0: 0.1}),
)


def _share(hits: int, reps: int) -> str:
    interval = wilson_interval(hits, reps)
    assert interval is not None
    return f"{100 * hits / reps:.1f}% [{100 * interval.low:.1f}, {100 * interval.high:.1f}]"


def _rates(rng: random.Random, rate: float, trials: int) -> float:
    return sum(rng.random() < rate for _ in range(trials)) / trials


def _coverage(
    reps: int,
    seed: str,
    draw: Callable[[random.Random], tuple[float, object]],
    methods: Sequence[Callable[..., Interval | None]],
) -> list[tuple[int, list[float]]]:
    """Per method: how many intervals held the truth, and their widths."""
    rng = random.Random(seed)
    hits = [0] * len(methods)
    widths: list[list[float]] = [[] for _ in methods]
    for _ in range(reps):
        truth, sample = draw(rng)
        for index, method in enumerate(methods):
            interval = method(sample, rng)
            assert interval is not None
            hits[index] += interval.low - 1e-12 <= truth <= interval.high + 1e-12
            widths[index].append(interval.high - interval.low)
    return list(zip(hits, widths, strict=True))


def _draw_pass(n: int, a: float, b: float, trials: int, rng: random.Random) -> tuple[float, object]:
    rates = [rng.betavariate(a, b) for _ in range(n)]
    return a / (a + b), [[rng.random() < p for _ in range(trials)] for p in rates]


def _bootstrap_pass(resamples: int, cases: list[list[bool]], rng: random.Random) -> Interval | None:
    return clustered_pass_rate(cases, resamples=resamples, seed=rng.randrange(1 << 30))


def _score_pass(trials: int, cases: list[list[bool]], rng: random.Random) -> Interval | None:
    return suite_pass_interval([sum(c) / trials for c in cases], trials)


def _draw_lift(
    n: int,
    control: tuple[float, float],
    changed: tuple[float, float],
    untouched: float,
    trials: int,
    rng: random.Random,
) -> tuple[float, object]:
    pairs = []
    for _ in range(n):
        c = rng.betavariate(*control)
        t = c if rng.random() < untouched else rng.betavariate(*changed)
        pairs.append((_rates(rng, t, trials), _rates(rng, c, trials)))
    delta = (1.0 - untouched) * (changed[0] / sum(changed) - control[0] / sum(control))
    return delta, pairs


def _bootstrap_lift(resamples: int, pairs: list[tuple[float, float]], rng: random.Random) -> Interval | None:
    return paired_bootstrap_diff(pairs, resamples=resamples, seed=rng.randrange(1 << 30))


def _score_lift(trials: int, pairs: list[tuple[float, float]], rng: random.Random) -> Interval | None:
    return paired_lift_interval(pairs, trials)


def _draw_scores(dist: dict[float, float], trials: int, rng: random.Random) -> tuple[float, object]:
    mean = math.fsum(v * w for v, w in dist.items())
    return mean, rng.choices(list(dist), list(dist.values()), k=trials)


def _t_scores(scores: list[float], rng: random.Random) -> Interval | None:
    return clip_interval(mean_interval(scores), 0.0, 1.0)


def _wilson_scores(scores: list[float], rng: random.Random) -> Interval | None:
    return bounded_mean_interval(scores)


def pass_table(reps: int, resamples: int) -> list[str]:
    out = [
        "| cases | case rates | trials | before: bootstrap | after: score-type | width after (median) |",
        "|---|---|---|---|---|---|",
    ]
    for n in CASES:
        for a, b in BETAS:
            for trials in TRIALS:
                draw = partial(_draw_pass, n, a, b, trials)
                methods = (partial(_bootstrap_pass, resamples), partial(_score_pass, trials))
                (hb, _), (ha, wa) = _coverage(reps, f"pass/{n}/{a}/{b}/{trials}", draw, methods)
                out.append(
                    f"| {n} | Beta({a:g}, {b:g}) | {trials} | {_share(hb, reps)} | {_share(ha, reps)} "
                    f"| {100 * statistics.median(wa):.0f} pts |"
                )
    return out


def lift_table(reps: int, resamples: int) -> list[str]:
    out = [
        "| cases | control | changed to | untouched | trials | before: bootstrap | after: Newcombe "
        "| width after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in CASES:
        for (a, b), (a2, b2), untouched in LIFTS:
            for trials in TRIALS:
                draw = partial(_draw_lift, n, (a, b), (a2, b2), untouched, trials)
                methods = (partial(_bootstrap_lift, resamples), partial(_score_lift, trials))
                (hb, _), (ha, wa) = _coverage(reps, f"lift/{n}/{a}/{a2}/{untouched}/{trials}", draw, methods)
                out.append(
                    f"| {n} | Beta({a:g}, {b:g}) | Beta({a2:g}, {b2:g}) | {100 * untouched:.0f}% | {trials} "
                    f"| {_share(hb, reps)} | {_share(ha, reps)} | {100 * statistics.median(wa):.0f} pts |"
                )
    return out


def score_table(reps: int) -> list[str]:
    out = [
        "| scores | trials | before: t-interval | after: Wilson on the mean score | width after |",
        "|---|---|---|---|---|",
    ]
    for name, dist in SCORES:
        for trials in (2, 3, 5, 10):
            draw = partial(_draw_scores, dist, trials)
            (hb, _), (ha, wa) = _coverage(reps, f"score/{name}/{trials}", draw, (_t_scores, _wilson_scores))
            out.append(
                f"| {name} | {trials} | {_share(hb, reps)} | {_share(ha, reps)} "
                f"| {statistics.median(wa):.2f} |"
            )
    return out


def _newcombe_flag(a: int, n: int, b: int, m: int) -> bool:
    # The rule the report used before: a row flagged when Newcombe's interval for its difference excludes 0.
    ia, ib = wilson_interval(a, n), wilson_interval(b, m)
    assert ia is not None and ib is not None
    pa, pb = a / n, b / m
    low = pa - pb - math.sqrt((pa - ia.low) ** 2 + (ib.high - pb) ** 2)
    high = pa - pb + math.sqrt((ia.high - pa) ** 2 + (pb - ib.low) ** 2)
    return low > 0 or high < 0


def flags_table(reps: int) -> list[str]:
    out = [
        "| cases | trials | before: Newcombe per row | raw Fisher p < .05 | after: Fisher + Holm |",
        "|---|---|---|---|---|",
    ]
    for n in (6, 10, 20):
        for trials in (3, 5, 10):
            rng = random.Random(f"flags/{n}/{trials}")
            before = raw = after = 0
            for _ in range(reps):
                rates = [rng.betavariate(1.0, 1.0) for _ in range(n)]
                now = [sum(rng.random() < p for _ in range(trials)) for p in rates]
                old = [sum(rng.random() < p for _ in range(trials)) for p in rates]
                before += any(_newcombe_flag(x, trials, y, trials) for x, y in zip(now, old, strict=True))
                ps = [fisher_exact_p(x, trials, y, trials) for x, y in zip(now, old, strict=True)]
                raw += any(p < 0.05 for p in ps)
                after += any(p < 0.05 for p in holm_adjust(ps))
            out.append(
                f"| {n} | {trials} | {_share(before, reps)} | {_share(raw, reps)} | {_share(after, reps)} |"
            )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000, help="simulated suites per setting (default 2000)")
    parser.add_argument(
        "--resamples", type=int, default=500, help="bootstrap resamples, before (default 500)"
    )
    parser.add_argument("--only", choices=("pass", "lift", "score", "flags"), action="append")
    args = parser.parse_args(argv)
    only = set(args.only or ("pass", "lift", "score", "flags"))
    tables = {
        "pass": (
            "Suite pass rate (mean case pass rate), nominal 95%",
            lambda: pass_table(args.reps, args.resamples),
        ),
        "lift": (
            "Paired lift (treatment minus control), nominal 95%",
            lambda: lift_table(args.reps, args.resamples),
        ),
        "score": ("Per-case mean score, nominal 95%", lambda: score_table(args.reps)),
        "flags": (
            "Runs with at least one false per-case flag (no real change)",
            lambda: flags_table(args.reps),
        ),
    }
    for key, (title, table) in tables.items():
        if key in only:
            print(f"### {title} ({args.reps} simulated suites per row)\n", *table(), "", sep="\n", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
