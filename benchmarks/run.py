"""skillgym benchmarks: print figures (medians of several runs); nothing here asserts on time.

Usage: python benchmarks/run.py [NAME ...] [--repeat N] [--large-repeat N]

Under `nox -s bench` inspect_ai is installed too, and the stub pipeline is measured side by side with it.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
# Scratch space on the project's own filesystem (where runs/ normally lives), not /tmp, whose speed
# for small files differs a lot between machines.
SCRATCH = REPO / ".bench"
sys.path.insert(0, str(REPO))


class Options(NamedTuple):
    repeat: int  # samples of the quick benchmarks; the median is reported
    large_repeat: int  # samples of the slow ones (20,000 trials, the example suite)


Bench = Callable[[Options], list[tuple[str, str]]]
BENCHMARKS: dict[str, Bench] = {}


def benchmark(func: Bench) -> Bench:
    BENCHMARKS[func.__name__] = func
    return func


def _median_of(repeat: int, body: Callable[[], float]) -> tuple[float, list[float]]:
    samples = [body() for _ in range(repeat)]
    return statistics.median(samples), samples


@benchmark
def compile_cases(opts: Options) -> list[tuple[str, str]]:
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

    med, samples = _median_of(opts.repeat, body)
    return [
        (
            "compile + fingerprint 10,000 cases",
            f"{med:.3f} s median ({', '.join(f'{s:.3f}' for s in samples)})",
        ),
        ("per case", f"{med / 10_000 * 1e6:.1f} µs"),
    ]


@benchmark
def list_cold_start(opts: Options) -> list[tuple[str, str]]:
    """Cold start of `skillgym list` on the example suite, a fresh interpreter each time (target < 0.5 s)."""

    def body() -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "skillgym", "list"], cwd=REPO, check=True, capture_output=True)
        return time.perf_counter() - start

    def bare() -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, capture_output=True)
        return time.perf_counter() - start

    med, samples = _median_of(opts.repeat, body)
    base, _ = _median_of(opts.repeat, bare)
    return [
        ("skillgym list (example suite)", f"{med:.3f} s median ({', '.join(f'{s:.3f}' for s in samples)})"),
        ("bare python startup", f"{base:.3f} s median"),
    ]


def _progress(message: str) -> None:
    print(f"  {message}", file=sys.stderr, flush=True)


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


class Measured(NamedTuple):
    """One timed command in a fresh process: wall and CPU seconds, peak RSS, exit code, output tails."""

    wall: float
    cpu: float
    peak_mb: float
    rc: int
    stdout: str
    stderr: str


# Runs ARGV as a child and reports on it alone: the child's wall time and its own (waited-for) rusage,
# so neither this script's memory nor the interpreter that launches the wrapper counts.
_WRAPPER = """\
import json, resource, subprocess, sys, time
t = time.perf_counter()
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = use.ru_utime + use.ru_stime
peak = use.ru_maxrss / 1024
print(json.dumps([wall, cpu, peak, proc.returncode, proc.stdout[-4000:], proc.stderr[-4000:]]))
"""


def _timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> Measured:
    """Wall seconds, CPU seconds, peak RSS (MB) and exit code of ``argv`` in a fresh process."""
    # As a user's Python runs: with bytecode caching, even where the shell turned it off.
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *argv],
        cwd=cwd,
        env={**base, "PYTHONPATH": str(REPO), **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    return Measured(*json.loads(out.stdout))


def _why(measured: Measured) -> str:
    """The last thing a failed command said (stderr first), for a one-line table entry."""
    for stream in (measured.stderr, measured.stdout):
        lines = [line.strip() for line in stream.splitlines() if line.strip()]
        if lines:
            return lines[-1][-300:]
    return "no output"


def _timed_cli(args: list[str], cwd: Path) -> Measured:
    """``python -m skillgym ARGS`` in a fresh process, timed by ``_timed``."""
    return _timed([sys.executable, "-m", "skillgym", *args], cwd)


def _inspect_version() -> str | None:
    """The installed inspect_ai version; None when this interpreter has none (not under nox -s bench)."""
    try:
        return importlib.metadata.version("inspect_ai")
    except importlib.metadata.PackageNotFoundError:
        return None


def _skillgym_stub(suite: Path, out: Path) -> Measured:
    args = ["run", "--suite", str(suite), "--provider", "stub", "--concurrency", "64", "--output", str(out)]
    measured = _timed_cli(args, cwd=suite.parent)
    if measured.rc != 0:
        raise RuntimeError(f"skillgym stub run exited {measured.rc}: {_why(measured)}")
    return measured


def _inspect_mock(trials: int, scratch: Path) -> Measured:
    """The same trials as inspect_ai samples with ``mockllm/model`` (see peer_inspect.py), offline."""
    scratch.mkdir(parents=True, exist_ok=True)
    env = {
        "INSPECT_LOG_DIR": str(scratch / "logs"),
        "INSPECT_DISPLAY": "none",
        # inspect keeps traces and its live-sample buffer under the user data dir: keep them in the
        # scratch dir (same filesystem as the log) rather than the user's home.
        "XDG_DATA_HOME": str(scratch / "data"),
        "XDG_CACHE_HOME": str(scratch / "cache"),
    }
    argv = [sys.executable, str(REPO / "benchmarks" / "peer_inspect.py"), str(trials), str(scratch / "logs")]
    measured = _timed(argv, cwd=scratch, env=env)
    if measured.rc != 0:
        raise RuntimeError(f"inspect_ai run exited {measured.rc}: {_why(measured)}")
    return measured


def _figures(runs: list[Measured]) -> str:
    wall = statistics.median(m.wall for m in runs)
    cpu = statistics.median(m.cpu for m in runs)
    peak = statistics.median(m.peak_mb for m in runs)
    how = f"median of {len(runs)}: {', '.join(f'{m.wall:.2f}' for m in runs)} s" if len(runs) > 1 else "1 run"
    return f"{wall:.2f} s wall, {cpu:.2f} s CPU, {peak:.0f} MB peak RSS ({how})"


def _ratio(ours: list[Measured], theirs: list[Measured]) -> str:
    """inspect_ai over skillgym, from runs interleaved in this session: of the medians, and per pair."""
    wall = statistics.median(m.wall for m in theirs) / statistics.median(m.wall for m in ours)
    cpu = statistics.median(m.cpu for m in theirs) / statistics.median(m.cpu for m in ours)
    peak = statistics.median(m.peak_mb for m in theirs) / statistics.median(m.peak_mb for m in ours)
    text = f"inspect_ai / skillgym: {wall:.1f}x wall, {cpu:.1f}x CPU, {peak:.1f}x peak RSS"
    if len(ours) > 1:
        pairs = ", ".join(f"{t.wall / o.wall:.1f}" for o, t in zip(ours, theirs, strict=True))
        text += f" (wall ratio per pair: {pairs})"
    return text


@benchmark
def stub_pipeline(opts: Options) -> list[tuple[str, str]]:
    """N prompt-lane stub trials through plan, run, grade and report, side by side with the same N samples
    in inspect_ai with its mock model (targets at 20,000: skillgym < 2 s and < 200 MB; >= 8x faster than
    inspect_ai with less memory). Runs alternate between the two so both see the same machine load."""
    peer = _inspect_version()
    rows: list[tuple[str, str]] = []
    # One scratch dir for everything, removed at the end: on a filesystem where creating files is slow for
    # minutes after mass deletions (see BENCHMARKS.md, "Machine"), deleting the 1,000-trial outputs would
    # slow the 20,000-trial runs. The disk floor goes first, so it sees the same disk as the runs after it.
    with tempfile.TemporaryDirectory(dir=_scratch()) as scratch:
        for trials in (1_000, 20_000):
            runs = opts.repeat if trials <= 1_000 else opts.large_repeat
            ours: list[Measured] = []
            theirs: list[Measured] = []
            tmp = Path(scratch) / f"{trials}"
            tmp.mkdir()
            suite = _generated_suite(tmp / "evals", trials // 4)
            floor = _disk_floor(tmp / "floor", trials)
            for i in range(runs):
                _progress(f"{trials:,} trials, run {i + 1} of {runs}: skillgym")
                ours.append(_skillgym_stub(suite, tmp / "runs"))
                if peer:
                    _progress(f"{trials:,} trials, run {i + 1} of {runs}: inspect_ai")
                    theirs.append(_inspect_mock(trials, tmp / f"inspect-{i}"))
            in_memory = _in_memory(suite, trials) if trials > 1_000 else None
            rows.append((f"skillgym stub pipeline, {trials:,} trials", _figures(ours)))
            rows.append((f"  disk floor at {trials:,}", floor))
            if in_memory is not None:
                rows.append((f"  skillgym at {trials:,}, output on tmpfs", in_memory))
            if peer:
                rows.append((f"inspect_ai {peer} mockllm, {trials:,} samples", _figures(theirs)))
                rows.append((f"  ratio at {trials:,}", _ratio(ours, theirs)))
            else:
                rows.append((f"inspect_ai, {trials:,} samples", "not installed here: run `nox -s bench`"))
    return rows


def _disk_floor(root: Path, trials: int) -> str:
    """What the run's files alone cost on this disk: a plain loop making the same trial folders, two
    small files in each written atomically, and four flushed event lines per trial."""
    start = time.perf_counter()
    root.mkdir()
    payload = b"{" + b'"x":1,' * 60 + b'"y":2}'
    with (root / "events.jsonl").open("ab") as events:
        for n in range(trials):
            folder = root / "trials" / "prompt" / f"case-{n // 4}" / f"condition-{n % 4}" / "stub" / "trial-1"
            folder.mkdir(parents=True)
            for name in ("trace.json", "result.json"):
                tmp = folder / f".{name}.tmp"
                tmp.write_bytes(payload)
                os.replace(tmp, folder / name)
            for _ in range(4):
                events.write(payload + b"\n")
                events.flush()
    took = time.perf_counter() - start
    return f"{took:.2f} s: {trials:,} trial folders and {2 * trials:,} atomic files, nothing else"


def _in_memory(suite: Path, trials: int) -> str | None:
    """The same run with its output on tmpfs (/dev/shm): the pipeline without this disk's cost."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        return None
    with tempfile.TemporaryDirectory(dir=shm) as tmp:
        _progress(f"{trials:,} trials with the output on tmpfs")
        return _figures([_skillgym_stub(suite, Path(tmp) / "runs")])


def _sleeping_agent(folder: Path) -> Path:
    """The concurrency runs' agent: reads the prompt, sleeps 0.25 s, answers."""
    script = folder / "agent.sh"
    script.write_text(
        "cat >/dev/null\nsleep 0.25\n"
        'printf \'%s\\n\' \'{"type":"result","text":"I would wait until it prints Listening"}\'\n'
    )
    return script


@benchmark
def concurrency(opts: Options) -> list[tuple[str, str]]:
    """400 trials of an agent that sleeps 0.25 s, at concurrency 50: measured wall over the ideal 2 s."""
    runs: list[Measured] = []
    with tempfile.TemporaryDirectory(dir=_scratch()) as tmp:
        suite = _generated_suite(Path(tmp) / "evals", 100)
        script = _sleeping_agent(Path(tmp))
        agent = f"sh {script}"
        spans: list[float] = []
        for number in range(opts.repeat):
            out = Path(tmp) / f"runs-{number}"
            args = ["run", "--suite", str(suite), "--provider", "command", "--agent-command", agent]
            # The harness against the bare agent floor: the sandbox's own cost is the `sandbox` benchmark's.
            args += ["--concurrency", "50", "--sandbox", "none", "--output", str(out)]
            measured = _timed_cli(args, Path(tmp))
            if measured.rc != 0:
                raise RuntimeError(f"exit {measured.rc}: {_why(measured)}")
            runs.append(measured)
            spans.append(_run_span(out))
        floors = [_agent_floor(["sh", str(script)], Path(tmp)) for _ in range(opts.repeat)]
    ideal = 400 / 50 * 0.25
    med = statistics.median(m.wall for m in runs)
    span = statistics.median(spans)
    floor = statistics.median(floors)
    return [
        (
            "400 x 0.25 s trials at concurrency 50, command",
            f"{med:.2f} s wall, {med / ideal:.2f}x the ideal {ideal:.1f} s, {_figures(runs)}",
        ),
        (
            "  the same, run.start to run.finish",
            f"{span:.2f} s, {span / ideal:.2f}x the ideal (median of {len(spans)}: "
            f"{', '.join(f'{x:.2f}' for x in spans)} s; without interpreter start-up, suite loading "
            "and the report)",
        ),
        (
            "  agent floor: the same 400 agent runs, no harness",
            f"{floor:.2f} s, {floor / ideal:.2f}x the ideal (median of {len(floors)}: "
            f"{', '.join(f'{x:.2f}' for x in floors)} s; 50 threads each starting the agent 8 times in turn)",
        ),
    ]


def _agent_floor(argv: list[str], cwd: Path, trials: int = 400, concurrency: int = 50) -> float:
    """What the agent alone costs on this machine: ``trials`` runs of ``argv``, ``concurrency`` at a time,
    from plain threads that write the prompt and read the answer, with no workspace, events or grading."""
    pending = iter(range(trials))
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if next(pending, None) is None:
                    return
            subprocess.run(
                argv, cwd=cwd, input=b"Wait until it prints Listening", capture_output=True, check=True
            )

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def _run_span(out: Path) -> float:
    """The trial phase of the one run under ``out``: ``duration_s`` of its run.finish event."""
    (log,) = out.glob("*/events.jsonl")
    last = json.loads(log.read_text().splitlines()[-1])
    if last.get("type") != "run.finish":
        raise RuntimeError(f"{log} does not end with run.finish")
    return float(last["duration_s"])


@benchmark
def example_suite(opts: Options) -> list[tuple[str, str]]:
    """The example suite (evals/) end to end with the default provider, offline replay of its cassettes."""
    runs: list[Measured] = []
    with tempfile.TemporaryDirectory(dir=_scratch()) as tmp:
        for _ in range(max(1, min(opts.repeat, opts.large_repeat))):
            measured = _timed_cli(["run", "--output", str(Path(tmp) / "runs")], REPO)
            runs.append(measured)
            if measured.rc not in (0, 1):  # 1 is "some trials failed": still a complete run
                break
        outcome = _suite_outcome(runs[-1], sorted((Path(tmp) / "runs").glob("*/report.json")))
    label = "example suite (evals/, replay), end to end"
    if runs[-1].rc not in (0, 1):
        return [(label, outcome)]
    return [(label, f"{_figures(runs)}; {outcome}")]


@benchmark
def sandbox(opts: Options) -> list[tuple[str, str]]:
    """What the trial sandbox costs: --sandbox bwrap against --sandbox none, paired and alternating, on the
    concurrency run (400 x 0.25 s command agents at 50) and the example suite (160 replayed trials)."""
    if shutil.which("bwrap") is None:
        return [("sandbox", "bubblewrap is not installed: nothing to compare")]
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(dir=_scratch()) as tmp:
        suite = _generated_suite(Path(tmp) / "evals", 100)
        script = _sleeping_agent(Path(tmp))
        agent = ["--suite", str(suite), "--provider", "command", "--agent-command", f"sh {script}"]
        cases = {
            "400 x 0.25 s at concurrency 50, run.start to run.finish": [*agent, "--concurrency", "50"],
            "example suite (160 replayed trials), run.start to run.finish": [],
        }
        for label, args in cases.items():
            spans: dict[str, list[float]] = {"bwrap": [], "none": []}
            for number in range(opts.repeat):
                for mode in ("bwrap", "none") if number % 2 == 0 else ("none", "bwrap"):
                    out = Path(tmp) / f"runs-{len(rows)}-{mode}-{number}"
                    measured = _timed_cli(["run", *args, "--sandbox", mode, "--output", str(out)], REPO)
                    if measured.rc not in (0, 1):
                        raise RuntimeError(f"--sandbox {mode}: exit {measured.rc}: {_why(measured)}")
                    spans[mode].append(_run_span(out))
            boxed, bare = statistics.median(spans["bwrap"]), statistics.median(spans["none"])
            shown = {mode: ", ".join(f"{x:.2f}" for x in values) for mode, values in spans.items()}
            rows.append(
                (
                    label,
                    f"bwrap {boxed:.2f} s ({shown['bwrap']}), none {bare:.2f} s ({shown['none']}): "
                    f"{boxed / bare:.2f}x",
                )
            )
    return rows


def _suite_outcome(last: Measured, reports: list[Path]) -> str:
    """What the example suite's last run said: its totals, and missing cassettes named as such."""
    if not reports:
        return f"did not run (exit {last.rc}): {_why(last)}"
    report = json.loads(reports[-1].read_text())
    counts = report["counts"]
    text = (
        f"{counts['total']} trials: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['errored']} errored"
    )
    missing = sum(
        1
        for failure in report.get("failures", [])
        if any("no cassette" in reason for reason in failure.get("reasons", []))
    )
    if missing:
        text += f"; {missing} trial(s) have no cassette yet (the suite is still being recorded)"
    return text


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help=f"benchmarks to run (default: all): {', '.join(BENCHMARKS)}")
    parser.add_argument("--repeat", type=int, default=5, help="samples per benchmark (median is reported)")
    parser.add_argument(
        "--large-repeat",
        type=int,
        default=1,
        help="samples of the slow ones: 20,000 trials (both tools), the example suite (default 1)",
    )
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r}; choose from {', '.join(BENCHMARKS)}")
    opts = Options(repeat=max(1, args.repeat), large_repeat=max(1, args.large_repeat))
    rows: list[tuple[str, str]] = []
    started, load = time.perf_counter(), os.getloadavg()[0]
    for name in args.names or list(BENCHMARKS):
        print(f"running {name} ...", file=sys.stderr, flush=True)
        try:
            rows += BENCHMARKS[name](opts)
        except Exception as exc:  # one broken benchmark is a row in the table, not the end of the bench
            rows.append((name, f"FAILED: {type(exc).__name__}: {exc}"))
    # Other work on the machine skews wall times (CPU times less): the load shows how quiet it was.
    rows.append(
        (
            "(this bench)",
            f"{time.perf_counter() - started:.0f} s wall; {os.cpu_count()} cores, "
            f"Python {sys.version.split()[0]}, 1-min load average {load:.1f} at start, "
            f"{os.getloadavg()[0]:.1f} at end",
        )
    )
    width = max(len(label) for label, _ in rows)
    print(f"{'benchmark'.ljust(width)}  result")
    for label, value in rows:
        print(f"{label.ljust(width)}  {value}")
    return 1 if any(value.startswith("FAILED") for _, value in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
