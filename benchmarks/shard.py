"""Shards: how balanced the placement is, what it moves when a case is added, and what sharding costs.

Usage: python benchmarks/shard.py [--pairs N] [--only balance|sleeping]

balance: the example suite's plan placed in 2-4 shards by the hash alone and with cost balancing (the
committed token snapshots give the costs): each shard's expected cost over the mean, and how many other
trials move when one case is added (each case in turn, taken out of the plan and put back).

sleeping: 400 trials of an agent that sleeps 0.25 s (the `concurrency` benchmark's agent and suite), as
one run at --concurrency 50 and as two shards at --concurrency 25 each, run at the same time on this
machine, then merged. Pairs alternate which goes first, so both see the same minutes of a busy machine.
Prints every pair, the medians, the paired ratio, and the load average before each pair.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # the harness next to this file: generated suites, the sleeping agent, timed CLI runs

TRIALS, SLEEP_S, CONCURRENCY = 400, 0.25, 50


def balance() -> None:
    import msgspec

    from skillgym.loader import load_suite
    from skillgym.plan import build_plan
    from skillgym.shard import SLACK, expected_costs, place, unit_costs

    plan = build_plan(load_suite(run.REPO / "evals"))
    costs = expected_costs(plan, str(run.REPO / "snapshots"))
    units = unit_costs(plan, "trial", costs)
    print(
        f"example suite: {len(plan.items)} trials; snapshot costs for {len(costs)} of "
        f"{len({k.rsplit('/', 1)[0] for k in units})} case/condition pairs; slack {SLACK:.0%}"
    )
    cases = list(dict.fromkeys(i.id.case_id for i in plan.items))
    for count in (2, 3, 4):
        for name, slack in (("hash alone", float("inf")), ("balanced", SLACK)):
            placed = place(units, count, slack=slack)
            totals = [0.0] * count
            sizes = [0] * count
            for unit, shard in placed.items():
                totals[shard] += units[unit]
                sizes[shard] += 1
            mean = sum(totals) / count
            moved: list[float] = []
            for case in cases:  # the plan without this case, then with it again: who else moved
                rest = msgspec.structs.replace(
                    plan, items=tuple(i for i in plan.items if i.id.case_id != case)
                )
                before = place(unit_costs(rest, "trial", costs), count, slack=slack)
                others = [u for u in before if before[u] != placed[u]]
                moved.append(len(others) / len(before))
            print(
                f"  {count} shards, {name:10}: max/mean cost {max(totals) / mean:.3f}, "
                f"min/mean {min(totals) / mean:.3f}; trials per shard {sizes}; adding a case moves "
                f"{statistics.median(moved):.1%} of the other trials (median over {len(cases)} cases, "
                f"max {max(moved):.1%}, zero for {sum(m == 0 for m in moved)})"
            )


def _cli(suite: Path, agent: str, out: Path, *extra: str) -> list[str]:
    return [
        "run", "--suite", str(suite), "--provider", "command", "--agent-command", agent,
        "--sandbox", "none", "--output", str(out), *extra,
    ]  # fmt: skip


def _one(tmp: Path, suite: Path, agent: str, n: int) -> tuple[float, float]:
    out = tmp / f"one-{n}"
    measured = run._timed_cli(_cli(suite, agent, out, "--concurrency", str(CONCURRENCY)), tmp)
    if measured.rc != 0:
        raise RuntimeError(f"exit {measured.rc}: {run._why(measured)}")
    return measured.wall, run._run_span(out)


def _sharded(tmp: Path, suite: Path, agent: str, n: int) -> tuple[float, float, float, list[float]]:
    """Two shards at once, then the merge: (shards' wall, merge wall, total, each shard's trial phase)."""
    outs = [tmp / f"shard{i}-{n}" for i in (1, 2)]
    got: dict[int, run.Measured] = {}

    def shard(i: int) -> None:
        args = _cli(suite, agent, outs[i - 1], "--concurrency", str(CONCURRENCY // 2), "--shard", f"{i}/2")
        got[i] = run._timed_cli(args, tmp)

    start = time.perf_counter()
    threads = [threading.Thread(target=shard, args=(i,)) for i in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    shards_wall = time.perf_counter() - start
    for measured in got.values():
        if measured.rc != 0:
            raise RuntimeError(f"exit {measured.rc}: {run._why(measured)}")
    dirs = [str(next(o.iterdir())) for o in outs]
    merged = run._timed_cli(["merge", str(tmp / f"merged-{n}"), *dirs], tmp)
    if merged.rc != 0:
        raise RuntimeError(f"merge exit {merged.rc}: {run._why(merged)}")
    return shards_wall, merged.wall, shards_wall + merged.wall, [run._run_span(o) for o in outs]


def sleeping(pairs: int) -> None:
    ideal = TRIALS / CONCURRENCY * SLEEP_S
    ones: list[float] = []
    totals: list[float] = []
    merges: list[float] = []
    ratios: list[float] = []
    with tempfile.TemporaryDirectory(dir=run._scratch()) as name:
        tmp = Path(name)
        suite = run._generated_suite(tmp / "evals", TRIALS // 4)
        agent = f"sh {run._sleeping_agent(tmp)}"
        for n in range(pairs):
            load = os.getloadavg()
            first_one = n % 2 == 0
            if first_one:
                one, one_span = _one(tmp, suite, agent, n)
            shards_wall, merge_wall, total, spans = _sharded(tmp, suite, agent, n)
            if not first_one:
                one, one_span = _one(tmp, suite, agent, n)
            ones.append(one)
            totals.append(total)
            merges.append(merge_wall)
            ratios.append(total / one)
            print(
                f"pair {n + 1} (load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
                f"{'one first' if first_one else 'shards first'}): one run {one:.2f} s "
                f"(trials {one_span:.2f} s); two shards {shards_wall:.2f} s (trials "
                f"{spans[0]:.2f} s, {spans[1]:.2f} s) + merge {merge_wall:.2f} s = {total:.2f} s"
            )
    one_m, total_m = statistics.median(ones), statistics.median(totals)

    def per_trial(wall: float) -> str:
        return f"{(wall - ideal) / TRIALS * 1000:.1f} ms"

    print(f"medians of {pairs} pairs; ideal {ideal:.1f} s ({TRIALS} x {SLEEP_S} s, {CONCURRENCY} at once)")
    print(f"  one run:            {one_m:.2f} s wall, overhead {per_trial(one_m)} per trial")
    print(
        f"  two shards + merge: {total_m:.2f} s wall, overhead {per_trial(total_m)} per trial "
        f"(merge alone {statistics.median(merges):.2f} s)"
    )
    listed = ", ".join(f"{r:.2f}" for r in ratios)
    print(f"  paired ratio sharded/one: median {statistics.median(ratios):.2f} ({listed})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--only", choices=("balance", "sleeping"))
    args = parser.parse_args()
    if args.only in (None, "balance"):
        balance()
    if args.only in (None, "sleeping"):
        sleeping(args.pairs)


if __name__ == "__main__":
    main()
