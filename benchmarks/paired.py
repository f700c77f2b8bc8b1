"""Before and after, paired: this checkout against another, run alternately on the same generated suites.

Usage: python benchmarks/paired.py OTHER_CHECKOUT [--pairs N] [--only NAME,...]

OTHER_CHECKOUT is "before" (for example `git worktree add ../base <commit>`), this checkout is "after".
Each pair runs both sides back to back, the order alternating from pair to pair, so both see the same
minutes of a noisy machine; both use this interpreter and its installed dependencies, each importing its
own skillgym. Only skillgym's figures (no inspect_ai). Prints every run, the medians, and after/before.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # the harness next to this file: suites, timing wrapper, run spans


class Sample(NamedTuple):
    value: float  # the figure compared: seconds
    cpu: float  # the skillgym process's own CPU seconds (user + system), its children not included
    peak_mb: float
    agents: int = 0  # the most agents running at once, where the benchmark counts them


# skillgym's CLI in this interpreter, printing its own CPU time as the last line of stderr when it exits:
# the agents' CPU (three programs per trial) would hide the harness's in the children's total.
_OWN_CPU = """\
import atexit, resource, runpy, sys
def _report():
    use = resource.getrusage(resource.RUSAGE_SELF)
    sys.stderr.write(f"\\nown-cpu {use.ru_utime + use.ru_stime:.6f}\\n")
atexit.register(_report)
sys.argv = ["skillgym", *sys.argv[1:]]
runpy.run_module("skillgym", run_name="__main__", alter_sys=True)
"""


Side = Callable[[Path, Path, int], Sample]  # (checkout, scratch, run number) -> one sample


def _cli(checkout: Path, args: list[str], cwd: Path) -> tuple[run.Measured, float]:
    """``skillgym ARGS`` from ``checkout``, timed; and the skillgym process's own CPU seconds."""
    argv = [sys.executable, "-c", _OWN_CPU, *args]
    measured = run._timed(argv, cwd, env={"PYTHONPATH": str(checkout)})
    if measured.rc != 0:
        raise RuntimeError(f"{checkout}: exit {measured.rc}: {run._why(measured)}")
    own = measured.stderr.rstrip().rsplit("\n", 1)[-1]
    if not own.startswith("own-cpu "):
        raise RuntimeError(f"{checkout}: no CPU figure at the end of stderr: {own[-200:]!r}")
    return measured, float(own.split()[1])


def _stub(trials: int) -> tuple[Callable[[Path], None], Side]:
    """N stub trials (the stub pipeline benchmark's run), output on tmpfs; its figure is wall seconds.

    Not on ext4: there, creating files right after a run deleted its folders costs kernel time (so CPU
    time too) that swings several-fold from run to run (BENCHMARKS.md, "Machine").
    """
    suite: dict[str, Path] = {}

    def setup(scratch: Path) -> None:
        suite["path"] = run._generated_suite(scratch / f"evals-{trials}", trials // 4)

    def side(checkout: Path, scratch: Path, number: int) -> Sample:
        with tempfile.TemporaryDirectory(dir="/dev/shm") as out:
            args = ["run", "--suite", str(suite["path"]), "--provider", "stub", "--concurrency", "64"]
            measured, own = _cli(checkout, [*args, "--output", str(Path(out) / "runs")], scratch)
        return Sample(measured.wall, own, measured.peak_mb)

    return setup, side


def _concurrency() -> tuple[Callable[[Path], None], Side]:
    """400 x 0.25 s command-agent trials at concurrency 50; its figure is run.start to run.finish."""
    made: dict[str, Path] = {}

    def setup(scratch: Path) -> None:
        made["suite"] = run._generated_suite(scratch / "evals-concurrency", 100)
        script = scratch / "agent.sh"
        script.write_text(
            "cat >/dev/null\nsleep 0.25\n"
            'printf \'%s\\n\' \'{"type":"result","text":"I would wait until it prints Listening"}\'\n'
        )
        made["script"] = script

    def side(checkout: Path, scratch: Path, number: int) -> Sample:
        out = scratch / f"runs-concurrency-{checkout.name}-{number}"
        args = ["run", "--suite", str(made["suite"]), "--provider", "command"]
        args += ["--agent-command", f"sh {made['script']}", "--concurrency", "50", "--output", str(out)]
        measured, own = _cli(checkout, args, scratch)
        return Sample(run._run_span(out), own, measured.peak_mb)

    return setup, side


# A prompt-lane agent that answers after 0 to 50 ms (by its PID), marking its start and end by the mtimes
# of two empty files: shell builtins and one sleep, so the agents cost next to nothing and the harness is
# what limits how many run at once (counted from the marks).
_QUICK_AGENT = """\
cat >/dev/null
: > "$1/$$.start"
sleep "0.$(printf %02d $(( $$ % 50 )))"
: > "$1/$$.end"
printf '%s\\n' '{"type":"result","text":"I would wait until it prints Listening"}'
"""


def _most_at_once(folder: Path) -> int:
    changes = []
    for mark in folder.glob("*.start"):
        end = mark.with_suffix(".end")
        changes += [(mark.stat().st_mtime_ns, 1), (end.stat().st_mtime_ns, -1)]
    running = most = 0
    for _, change in sorted(changes):
        running += change
        most = max(most, running)
    return most


def _load_figure() -> tuple[Callable[[Path], None], Side]:
    """2,000 trials of a 0-50 ms agent at concurrency 64, no sandbox; its figure is run.start to
    run.finish, and the most agents running at once is counted."""
    made: dict[str, Path] = {}

    def setup(scratch: Path) -> None:
        made["suite"] = run._generated_suite(scratch / "evals-load", 500)
        made["script"] = scratch / "quick_agent.sh"
        made["script"].write_text(_QUICK_AGENT)

    def side(checkout: Path, scratch: Path, number: int) -> Sample:
        out = scratch / f"runs-load-{checkout.name}-{number}"
        logs = scratch / f"agents-{checkout.name}-{number}"
        logs.mkdir()
        args = ["run", "--suite", str(made["suite"]), "--provider", "command", "--sandbox", "none"]
        agent = f"sh {made['script']} {logs}"
        args += ["--agent-command", agent, "--concurrency", "64", "--output", str(out)]
        measured, own = _cli(checkout, args, scratch)
        return Sample(run._run_span(out), own, measured.peak_mb, _most_at_once(logs))

    return setup, side


# Grades the example suite's recorded traces (of one replay run) in a loop, in this checkout's skillgym
# with this checkout's suite: the time of one pass over every trial, median of the passes. Verifiers see
# an empty workspace and fail at once; what is measured is reading the traces with the cases' patterns.
_GRADE_ALL = """\
import pathlib, statistics, sys, time
import anyio, msgspec
from skillgym.grading import GradeContext, grade
from skillgym.grading import grader
from skillgym.loader import load_suite
from skillgym.trace import Trace

suite = load_suite(pathlib.Path(sys.argv[1]))
cases = {(case.lane, case.id): case for case in suite.cases}
trials = []
for path in sorted(pathlib.Path(sys.argv[2]).glob("trials/*/*/*/*/trial-*/trace.json")):
    lane, case = path.parts[-6], path.parts[-5]
    trace = msgspec.json.decode(path.read_bytes(), type=Trace)
    empty = path.parent / "nothing-here"
    ctx = GradeContext(
        provider_ok=True, workspace=str(empty), trial_dir=str(empty), fixture_log_dir=str(empty),
        tmux_tmpdir=str(empty), skills=tuple(s.name for s in suite.skills), suite_rules=suite.anti_patterns,
        suite_root=str(suite.root),
    )
    trials.append((cases[(lane, case)], trace, ctx))

async def one_pass() -> float:
    grader._recent.clear()  # the prompt lane's cache of equal traces: every pass grades afresh
    started = time.perf_counter()
    for case, trace, ctx in trials:
        await grade(case, trace, ctx)
    return time.perf_counter() - started

passes = [anyio.run(one_pass) for _ in range(int(sys.argv[3]))]
print(f"{len(trials)} trials", file=sys.stderr)
print(statistics.median(passes[1:]))  # the first pass compiles every pattern
"""


def _grading() -> tuple[Callable[[Path], None], Side]:
    """The example suite's 160 replayed traces graded, 21 passes; its figure is one pass's median."""
    made: dict[str, Path] = {}

    def setup(scratch: Path) -> None:
        out = scratch / "runs-grading"
        measured = run._timed_cli(["run", "--output", str(out), "--concurrency", "8"], run.REPO)
        if measured.rc not in (0, 1):
            raise RuntimeError(f"the replay run for the grading benchmark: {run._why(measured)}")
        (made["run"],) = out.iterdir()

    def side(checkout: Path, scratch: Path, number: int) -> Sample:
        argv = [sys.executable, "-c", _GRADE_ALL, str(checkout / "evals"), str(made["run"]), "21"]
        measured = run._timed(argv, scratch, env={"PYTHONPATH": str(checkout)})
        if measured.rc != 0:
            raise RuntimeError(f"{checkout}: exit {measured.rc}: {run._why(measured)}")
        return Sample(float(measured.stdout.split()[-1]), measured.cpu, measured.peak_mb)

    return setup, side


BENCHES: dict[str, Callable[[], tuple[Callable[[Path], None], Side]]] = {
    "concurrency": _concurrency,
    "grading": _grading,
    "load": _load_figure,
    "stub_1000_tmpfs": lambda: _stub(1_000),
    "stub_20000_tmpfs": lambda: _stub(20_000),
}


def _line(samples: list[Sample]) -> str:
    values = ", ".join(f"{s.value:.4g}" for s in samples)
    cpus = ", ".join(f"{s.cpu:.2f}" for s in samples)
    cpu = statistics.median(s.cpu for s in samples)
    peak = statistics.median(s.peak_mb for s in samples)
    agents = (
        f"; most agents at once: median {statistics.median(s.agents for s in samples):g} "
        f"({', '.join(str(s.agents) for s in samples)})"
        if any(s.agents for s in samples)
        else ""
    )
    return (
        f"median {statistics.median(s.value for s in samples):.4f} s ({values}); "
        f"skillgym's own CPU median {cpu:.2f} s ({cpus}); {peak:.0f} MB peak RSS{agents}"
    )


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"1/5/15-min load average {one:.2f} {five:.2f} {fifteen:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("before", type=Path, help="the other checkout (before)")
    parser.add_argument("--pairs", type=int, default=5, help="pairs per benchmark (default 5)")
    parser.add_argument("--only", default=",".join(BENCHES), help=f"comma-separated: {', '.join(BENCHES)}")
    args = parser.parse_args()
    before, after = args.before.resolve(), run.REPO
    if not (before / "skillgym" / "__init__.py").is_file():
        parser.error(f"{before} is not a skillgym checkout (no skillgym/__init__.py)")
    names = [name for name in args.only.split(",") if name]
    if unknown := [name for name in names if name not in BENCHES]:
        parser.error(f"unknown benchmark {unknown[0]!r}; choose from {', '.join(BENCHES)}")
    started = time.perf_counter()
    print(f"before: {before}\nafter:  {after}\nat start: {_load()}")
    with tempfile.TemporaryDirectory(dir=run._scratch()) as tmp:
        scratch = Path(tmp)
        for name in names:
            setup, side = BENCHES[name]()
            setup(scratch)
            results: dict[Path, list[Sample]] = {before: [], after: []}
            wins = 0
            for number in range(args.pairs):
                order = (before, after) if number % 2 == 0 else (after, before)
                for checkout in order:
                    run._progress(f"{name}, pair {number + 1} of {args.pairs}: {checkout.name}")
                    results[checkout].append(side(checkout, scratch, number))
                wins += results[after][-1].value <= results[before][-1].value
            ratio = statistics.median(s.value for s in results[after]) / statistics.median(
                s.value for s in results[before]
            )
            cpu_ratio = statistics.median(s.cpu for s in results[after]) / statistics.median(
                s.cpu for s in results[before]
            )
            print(f"\n{name} ({args.pairs} pairs, order alternating)")
            print(f"  before: {_line(results[before])}")
            print(f"  after:  {_line(results[after])}")
            print(
                f"  after / before: {ratio:.3f} of the medians, {cpu_ratio:.3f} of the own-CPU medians; "
                f"after faster or equal in {wins} of {args.pairs} pairs"
            )
    print(f"\n{time.perf_counter() - started:.0f} s; at end: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
