"""Console reporter in a capture console: plain lines in a pipe, a live view in a terminal, same summary."""

from __future__ import annotations

import io

import anyio
import pytest
from rich.console import Console

from skillgym.events import Counts, Event, LaneFinish, LaneStart, RunFinish, RunStart, TrialFinish, TrialStart
from skillgym.reporters.console import ConsoleReporter
from skillgym.results import Grade, TrialResult
from tests.results import result_for


def _result(key: str, status: str, **extra: object) -> TrialResult:
    return result_for(key, status, finished_at=1.5, duration_s=1.5, **extra)


def _run(*, warnings: tuple[str, ...] = ()) -> list[Event]:
    start = RunStart(
        run_id="r1",
        at=0.0,
        argv=(),
        suite="evals",
        suite_dir="/x/evals",
        run_dir="/x/runs/r1",
        lanes=("prompt",),
        conditions=("none",),
        providers=("stub",),
        model=None,
        trials=1,
        concurrency=2,
        total_trials=2,
        skill_hash="h",
    )
    ok = _result(
        "prompt/a/none/stub/trial-1", "passed", grade=Grade(passed=True, score=1.0), warnings=warnings
    )
    bad = _result(
        "prompt/b/none/stub/trial-1",
        "failed",
        grade=Grade(passed=False, score=0.4, reasons=("required workflow step 'waits' failed: x", "y")),
    )
    return [
        start,
        LaneStart(run_id="r1", at=0.0, lane="prompt", total_trials=2),
        TrialStart(
            run_id="r1",
            at=0.0,
            id=ok.id,
            model=None,
        ),
        TrialFinish(run_id="r1", at=0.0, result=ok),
        TrialStart(
            run_id="r1",
            at=0.0,
            id=bad.id,
            model=None,
        ),
        TrialFinish(run_id="r1", at=0.0, result=bad),
        LaneFinish(run_id="r1", at=0.0, lane="prompt", counts=Counts(total=2, passed=1, failed=1)),
        RunFinish(
            run_id="r1", at=0.0, counts=Counts(total=2, passed=1, failed=1), exit_code=1, duration_s=3.0
        ),
    ]


async def _feed(reporter: ConsoleReporter, *, warnings: tuple[str, ...] = ()) -> None:
    for event in _run(warnings=warnings):
        await reporter.on_event(event)
    await reporter.finish()


SUMMARY = [
    "skillgym summary",
    "┏━━━━━━━━┳━━━━━━━━┳━━━━━━━━┳━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━━┓",
    "┃ lane   ┃ trials ┃ passed ┃ failed ┃ errored ┃ pass rate ┃",
    "┡━━━━━━━━╇━━━━━━━━╇━━━━━━━━╇━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━┩",
    "│ prompt │      2 │      1 │      1 │       0 │       50% │",
    "│ all    │      2 │      1 │      1 │       0 │       50% │",
    "└────────┴────────┴────────┴────────┴─────────┴───────────┘",
]


@pytest.mark.anyio
async def test_plain_mode_prints_one_line_per_meaningful_event_then_the_summary() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=120, color_system=None)
    reporter = ConsoleReporter(console, report_path="runs/r1/report.md")
    assert not reporter.live_mode
    await _feed(reporter)
    assert [line.rstrip() for line in buffer.getvalue().splitlines()] == [
        "skillgym run r1: 2 trials; lanes prompt; conditions none; providers stub",
        "PASS  prompt/a/none/stub/trial-1  1.5s  score 1.00",
        "FAIL  prompt/b/none/stub/trial-1  1.5s  score 0.40  "
        "required workflow step 'waits' failed: x (+1 more)",
        "lane prompt: 1 passed, 1 failed, 0 errored of 2",
        *SUMMARY,
        "report: runs/r1/report.md",
    ]


@pytest.mark.anyio
async def test_a_trials_warnings_follow_its_line_and_are_counted_at_the_end() -> None:
    buffer = io.StringIO()
    reporter = ConsoleReporter(Console(file=buffer, force_terminal=False, width=200, color_system=None))
    stale = "cassette recorded for fingerprint aaa, case is now bbb: re-record with --record (x.jsonl)"
    await _feed(reporter, warnings=(stale, "processes [42] survived SIGKILL"))
    lines = [line.rstrip() for line in buffer.getvalue().splitlines()]
    at = lines.index("PASS  prompt/a/none/stub/trial-1  1.5s  score 1.00")
    assert lines[at + 1 : at + 3] == [
        f"      warning: {stale}",
        "      warning: processes [42] survived SIGKILL",
    ]
    assert lines[-1] == "1 trial(s) finished with warnings (shown above, and under Warnings in report.md)"


@pytest.mark.anyio
async def test_live_mode_in_a_terminal_ends_with_the_same_summary() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120, color_system=None)
    reporter = ConsoleReporter(console)
    assert reporter.live_mode
    await _feed(reporter)
    text = buffer.getvalue()
    plain_lines = [line.rstrip() for line in text.splitlines()]
    assert any("PASS  prompt/a/none/stub/trial-1" in line for line in plain_lines)
    tail = [line for line in plain_lines if line][-len(SUMMARY) :]
    assert [line.split("\x1b")[-1] if "\x1b[?25h" in line else line for line in tail][1:] == SUMMARY[1:]


def test_dumb_terminal_and_no_color_are_respected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "dumb")
    assert not ConsoleReporter(Console(file=io.StringIO(), force_terminal=True, width=80)).live_mode
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("NO_COLOR", "1")
    assert Console(file=io.StringIO(), force_terminal=True).no_color


@pytest.mark.anyio
async def test_heartbeat_in_plain_mode_while_a_trial_runs() -> None:
    buffer = io.StringIO()
    reporter = ConsoleReporter(Console(file=buffer, force_terminal=False, width=120), heartbeat_s=0.0)
    for event in _run()[:3]:
        await reporter.on_event(event)
    await anyio.sleep(0.01)
    await reporter.tick()
    assert (
        "... 1 running, 0/2 done (0 passed, 0 failed, 0 errored), longest running"
        in (buffer.getvalue().splitlines()[-1])
    )
    for event in _run()[3:5]:  # the first trial passes, the second starts
        await reporter.on_event(event)
    await reporter.tick()
    last = buffer.getvalue().splitlines()[-1]
    assert "... 1 running, 1/2 done (1 passed, 0 failed, 0 errored), about " in last
    assert "s left, longest running" in last


@pytest.mark.anyio
async def test_the_live_bar_shows_each_lane_s_tally_and_an_eta() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=160, color_system=None)
    reporter = ConsoleReporter(console)
    for event in _run()[:4]:  # one trial of two passed
        await reporter.on_event(event)
    reporter._progress.refresh()
    reporter._stop_live()
    assert "1/2 1 passed 0 failed 0 errored" in " ".join(buffer.getvalue().split())
    assert "eta" in buffer.getvalue()
