"""skillgym benchmarks: print figures (medians of several runs); nothing here asserts on time.

Usage: python benchmarks/run.py [NAME ...] [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
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
