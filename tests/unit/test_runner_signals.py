"""A run in-process: Ctrl-C stops it, the caller's signal handlers are as they were, its outcome is cheap."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
from pathlib import Path

import anyio

from skillgym.events import Counts, RunFinish
from skillgym.identity import trial_id
from skillgym.loader import load_suite
from skillgym.plan import build_plan
from skillgym.results import TrialPaths, TrialResult
from skillgym.runner import RunOptions, RunOutcome, execute
from tests.conftest import run_files

CASES = """
from skillgym import prompt_case

with prompt_case("slow") as c:
    c.category("trigger")
    c.prompt("answer")
    c.expect_skill(None)
"""


def test_an_interrupted_run_gives_back_the_callers_signal_handlers(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "cases.py").write_text(CASES)
    agent = tmp_path / "agent.py"
    agent.write_text(
        textwrap.dedent(
            """
            import signal, sys, time
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # stopping it takes the whole grace period
            sys.stdin.read()
            open("started", "w").close()  # in its workspace: the sandbox lets it write nowhere else
            time.sleep(30)
            """
        )
    )
    suite = load_suite(tmp_path / "evals")
    plan = build_plan(suite, providers=("command",), conditions=("none",))
    options = RunOptions(output=str(tmp_path / "runs"), agent_command=f"{sys.executable} {agent}")

    async def run_and_interrupt() -> bool:
        async with anyio.create_task_group() as tg:

            async def interrupt() -> None:
                while not any(run_files(tmp_path / "runs", "trials/**/workspace/started")):
                    await anyio.sleep(0.02)
                for _ in range(2):  # the second comes while the first is still stopping the agent
                    os.kill(os.getpid(), signal.SIGINT)
                    await anyio.sleep(0.2)

            tg.start_soon(interrupt)
            outcome = await execute(plan, suite, options, [])
        return outcome.interrupted

    def mine(signum: int, frame: object) -> None:
        raise AssertionError("the caller's handler must not see the run's Ctrl-C")

    previous = signal.signal(signal.SIGINT, mine)
    try:
        assert anyio.run(run_and_interrupt)
        assert signal.getsignal(signal.SIGINT) is mine
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_run_outcomes_repr_stays_short_however_many_trials() -> None:
    # asyncio formats it when it puts its own Ctrl-C handler back after a run: 20,000 results in full
    # made a 60 MB string at the end of every large run.
    result = TrialResult(
        id=trial_id(
            lane="prompt", case_id="a", condition="none", provider="stub", trial=1, fingerprint="f" * 64
        ),
        category="c",
        model=None,
        status="passed",
        started_at=0.0,
        finished_at=1.0,
        duration_s=1.0,
        paths=TrialPaths(dir="d", result="d/result.json"),
    )
    outcome = RunOutcome(
        run_id="r",
        run_dir="/x",
        exit_code=0,
        counts=Counts(total=20_000, passed=20_000),
        interrupted=False,
        results=(result,) * 20_000,
        finish=RunFinish(
            run_id="r", at=1.0, counts=Counts(total=20_000, passed=20_000), exit_code=0, duration_s=1.0
        ),
    )
    assert len(repr(outcome)) < 300
    assert "results=<20000 trials>" in repr(outcome)
