"""skillgym benchmarks: print figures (medians of several runs); nothing here asserts on time.

Usage: python benchmarks/run.py [NAME ...] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Scratch space on the project's own filesystem (where runs/ normally lives), not /tmp, whose speed
# for small files differs a lot between machines.
SCRATCH = REPO / ".bench"
sys.path.insert(0, str(REPO))

BENCHMARKS: dict[str, Callable[[int], list[tuple[str, str]]]] = {}


def benchmark(func: Callable[[int], list[tuple[str, str]]]) -> Callable[[int], list[tuple[str, str]]]:
    BENCHMARKS[func.__name__] = func
    return func


def _median_of(repeat: int, body: Callable[[], float]) -> tuple[float, list[float]]:
    samples = [body() for _ in range(repeat)]
    return statistics.median(samples), samples


@benchmark
def compile_cases(repeat: int) -> list[tuple[str, str]]:
    """Compile and fingerprint 10,000 generated cases through the public DSL (target < 1 s)."""
    from skillgym import execution_case, prompt_case
    from skillgym.registry import Registry, use_registry

    def body() -> float:
        start = time.perf_counter()
        with use_registry(Registry()) as registry:
            for i in range(5_000):
                with prompt_case(f"p-{i}") as c:
                    c.category("trigger")
                    c.prompt(f"Wait until the server prints 'Listening on port {i}'")
                    c.expect_skill(None)
                    with c.step("observe") as s:
                        s.must_mention("wait", f"port {i}")
                        s.must_not_mention(r"\bsleep\b")
                with execution_case(f"e-{i}") as e:
                    e.category("session")
                    e.task(f"Write {i} to out.txt")
                    with e.workflow() as w:
                        w.create_session().input(f"value {i}").wait_for("READY>").snapshot().destroy()
                    with e.assertions() as a:
                        a.file_contains("out.txt", str(i))
                        a.no_live_sessions()
            assert len(registry.cases) == 10_000
        return time.perf_counter() - start

    med, samples = _median_of(repeat, body)
    return [
        (
            "compile + fingerprint 10,000 cases",
            f"{med:.3f} s median ({', '.join(f'{s:.3f}' for s in samples)})",
        ),
        ("per case", f"{med / 10_000 * 1e6:.1f} µs"),
    ]


@benchmark
def list_cold_start(repeat: int) -> list[tuple[str, str]]:
    """Cold start of `skillgym list` on the example suite, a fresh interpreter each time (target < 0.5 s)."""

    def body() -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "skillgym", "list"], cwd=REPO, check=True, capture_output=True)
        return time.perf_counter() - start

    def bare() -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, capture_output=True)
        return time.perf_counter() - start

    med, samples = _median_of(repeat, body)
    base, _ = _median_of(repeat, bare)
    return [
        ("skillgym list (example suite)", f"{med:.3f} s median ({', '.join(f'{s:.3f}' for s in samples)})"),
        ("bare python startup", f"{base:.3f} s median"),
    ]


def _scratch() -> Path:
    SCRATCH.mkdir(exist_ok=True)
    return SCRATCH


def _generated_suite(root: Path, cases: int) -> Path:
    """A prompt-lane suite of ``cases`` cases (a parametrized family) with a canned stub answer each."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "stubs").mkdir(exist_ok=True)
    (root / "suite.py").write_text(
        "from skillgym import condition, prompt_case\n"
        "for cid in ('none', 'self-load', 'preloaded', 'stale'):\n"
        "    condition(cid)\n"
        f"for i in range({cases}):\n"
        "    with prompt_case(f'wait-{i}') as c:\n"
        "        c.category('trigger')\n"
        "        c.prompt(f'Wait until server {i} prints Listening before running tests')\n"
        "        c.expect_skill(None)\n"
        "        with c.step('observe') as s:\n"
        "            s.must_mention('wait', 'Listening')\n"
        "            s.must_not_mention(r'\\bsleep\\b')\n"
    )
    for i in range(cases):
        (root / "stubs" / f"wait-{i}.md").write_text(f"I would wait until server {i} prints Listening.\n")
    return root


def _timed_cli(args: list[str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MB) and exit code of ``python -m skillgym ARGS`` in a fresh process."""
    code = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "argv = [sys.executable, '-m', 'skillgym', *sys.argv[1:]]\n"
        "rc = subprocess.run(argv, capture_output=True).returncode\n"
        "wall = time.perf_counter() - t\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(wall, peak, rc)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    wall, peak, rc = out.stdout.split()
    return float(wall), float(peak), int(rc)


@benchmark
def stub_pipeline(repeat: int) -> list[tuple[str, str]]:
    """N prompt-lane stub trials through plan, run, grade and report (target at 20,000: < 2 s, < 200 MB)."""
    rows: list[tuple[str, str]] = []
    for trials in (1_000, 20_000):
        cases = trials // 4
        with tempfile.TemporaryDirectory(dir=_scratch()) as tmp:
            suite = _generated_suite(Path(tmp) / "evals", cases)
            walls, peaks = [], []
            for _ in range(max(1, repeat if trials <= 1_000 else min(repeat, 3))):
                wall, peak, rc = _timed_cli(
                    [
                        "run",
                        "--suite",
                        str(suite),
                        "--provider",
                        "stub",
                        "--concurrency",
                        "64",
                        "--output",
                        str(Path(tmp) / "runs"),
                    ],
                    cwd=Path(tmp),
                )
                assert rc == 0, f"benchmark run failed with exit code {rc}"
                walls.append(wall)
                peaks.append(peak)
            rows.append(
                (
                    f"stub pipeline, {trials:,} trials",
                    f"{statistics.median(walls):.2f} s wall, "
                    f"{statistics.median(peaks):.0f} MB peak RSS (median of {len(walls)})",
                )
            )
    return rows


@benchmark
def concurrency(repeat: int) -> list[tuple[str, str]]:
    """400 trials of an agent that sleeps 0.25 s, at concurrency 50: measured wall over the ideal 2 s."""
    agent = 'sh -c \'cat >/dev/null; sleep 0.25; echo {"type":"result","text":"wait"}\''
    with tempfile.TemporaryDirectory(dir=_scratch()) as tmp:
        suite = _generated_suite(Path(tmp) / "evals", 100)
        walls = []
        for _ in range(repeat):
            start = time.perf_counter()
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "skillgym",
                    "run",
                    "--suite",
                    str(suite),
                    "--provider",
                    "command",
                    "--agent-command",
                    agent,
                    "--concurrency",
                    "50",
                    "--output",
                    str(Path(tmp) / "runs"),
                ],
                cwd=tmp,
                env={**os.environ, "PYTHONPATH": str(REPO)},
                capture_output=True,
                text=True,
            )
            walls.append(time.perf_counter() - start)
            assert proc.returncode == 0, proc.stderr[-2000:]
    ideal = 400 / 50 * 0.25
    med = statistics.median(walls)
    return [
        (
            "400 x 0.25 s trials at concurrency 50",
            f"{med:.2f} s wall, {med / ideal:.2f}x the ideal {ideal:.1f} s",
        )
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", help=f"benchmarks to run (default: all): {', '.join(BENCHMARKS)}")
    parser.add_argument("--repeat", type=int, default=5, help="samples per benchmark (median is reported)")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r}; choose from {', '.join(BENCHMARKS)}")
    rows: list[tuple[str, str]] = []
    for name in args.names or list(BENCHMARKS):
        print(f"running {name} ...", file=sys.stderr, flush=True)
        rows += BENCHMARKS[name](args.repeat)
    width = max(len(label) for label, _ in rows)
    print(f"{'benchmark'.ljust(width)}  result")
    for label, value in rows:
        print(f"{label.ljust(width)}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
