"""The Ray executor against one machine and two merged shards, on a two-node Ray cluster on this machine.

Usage: python benchmarks/ray_cluster.py [--pairs N] [--concurrency C]   (root; needs the ray extra)

Every run happens inside the test cluster's namespaces (tests/executors/cluster.py: loopback only, and a
PID namespace that ends every process with it), in rounds whose order rotates so each setup sees the same
minutes of a busy machine:
- the example suite, every lane, replay (160 trials): one machine at --concurrency C; two Ray nodes of
  C/2 CPUs each (--executor ray, C trials in flight); two shards at C/2 each, at the same time, merged;
- 400 trials of an agent that sleeps 0.25 s (the `concurrency` benchmark's), `--sandbox none`, the same
  three ways.
Both nodes share this machine's cores, so the cluster cannot be faster here: what it measures is what
the executor costs. Overhead per trial is (wall - ideal) x C / trials: the slot time a trial takes beyond
its agent's sleep. Prints every round, medians, paired ratios and the load average before each round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # the harness next to this file: generated suites, the sleeping agent

from tests.executors.cluster import launch  # the tests' cluster (the harness put the repository on the path)

TRIALS, SLEEP_S = 400, 0.25
SETUPS = ("one", "ray", "shards")


def _steps(tmp: Path, name: str, base: list[str], concurrency: int, n: int) -> list[dict[str, object]]:
    out = tmp / f"{name}-{n}"
    half = str(max(1, concurrency // 2))
    steps = {
        "one": [{"args": [*base, "--concurrency", str(concurrency), "--output", f"{out}/one"]}],
        "ray": [
            {
                "args": [
                    *base,
                    "--executor",
                    "ray",
                    "--concurrency",
                    str(concurrency),
                    "--output",
                    f"{out}/ray",
                ]
            }
        ],
        "shards": [
            {
                "parallel": [
                    [*base, "--concurrency", half, "--shard", f"{i}/2", "--output", f"{out}/s{i}"]
                    for i in (1, 2)
                ]
            },
            {"args": ["merge", f"{out}/merged", f"@run:{out}/s1", f"@run:{out}/s2"]},
        ],
    }
    order = SETUPS[n % 3 :] + SETUPS[: n % 3]
    return [dict(step, setup=setup) for setup in order for step in steps[setup]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="rounds of the three setups (default 3)")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    c = args.concurrency
    with tempfile.TemporaryDirectory(dir=run._scratch()) as name:
        tmp = Path(name)
        suite = run._generated_suite(tmp / "sleepy", TRIALS // 4)
        agent = f"sh {run._sleeping_agent(tmp)}"
        example = ["run", "--suite", str(run.REPO / "evals")]
        sleepy = ["run", "--suite", str(suite), "--provider", "command", "--agent-command", agent]
        sleepy += ["--sandbox", "none"]
        steps: list[dict[str, object]] = []
        for n in range(args.pairs):
            steps += [dict(s, work="example", round=n) for s in _steps(tmp, "example", example, c, n)]
            steps += [dict(s, work="sleeping", round=n) for s in _steps(tmp, "sleeping", sleepy, c, n)]
        spec = {
            "temp": str(tmp / "raytmp"),
            "cwd": str(run.REPO),
            "env": {"PYTHONPATH": str(run.REPO)},
            "nodes": {"A": {"cpus": max(1, c // 2)}, "B": {"cpus": max(1, c // 2)}},
            "steps": steps,
        }
        load = os.getloadavg()
        report = launch(spec, tmp)
    _print(spec["steps"], report["steps"], c, args.pairs, load)


def _print(
    specs: list[dict[str, object]],
    steps: list[dict[str, object]],
    c: int,
    pairs: int,
    load: tuple[float, ...],
) -> None:
    walls: dict[tuple[str, str, int], float] = {}
    for spec, step in zip(specs, steps, strict=True):
        rc = step["rc"] if isinstance(step["rc"], list) else [step["rc"]]
        if any(code not in (0, 1) for code in rc):  # type: ignore[union-attr]
            raise SystemExit(f"{spec['work']} {spec['setup']} exited {rc}: {step['stderr']}")
        key = (str(spec["work"]), str(spec["setup"]), int(spec["round"]))  # type: ignore[call-overload]
        walls[key] = walls.get(key, 0.0) + float(step["seconds"])  # type: ignore[arg-type]
    print(
        f"load average at the start {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
        f"concurrency {c}; {pairs} rounds"
    )
    for work, trials, ideal in (("example", 160, None), ("sleeping", TRIALS, TRIALS / c * SLEEP_S)):
        print(f"{work}: {trials} trials" + (f", ideal {ideal:.2f} s" if ideal else ""))
        for n in range(pairs):
            row = ", ".join(f"{s} {walls[(work, s, n)]:.2f} s" for s in SETUPS)
            print(f"  round {n + 1}: {row}")
        for setup in SETUPS:
            wall = statistics.median(walls[(work, setup, n)] for n in range(pairs))
            extra = f", overhead {(wall - ideal) * c / trials * 1000:.0f} ms a trial" if ideal else ""
            ratio = statistics.median(walls[(work, setup, n)] / walls[(work, "one", n)] for n in range(pairs))
            print(f"  {setup:7} median {wall:.2f} s{extra}; paired ratio to one machine {ratio:.2f}")


if __name__ == "__main__":
    main()
