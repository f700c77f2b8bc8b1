"""Tests for the execution lane: real effects gate, commands (not prose) are scanned, score only ranks."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from skillgym.grading import GradeContext, grade
from skillgym.grading.execution import efficiency
from skillgym.model import (
    ArtifactRequirement,
    Budget,
    ExecutionCase,
    FileContains,
    FileExists,
    FixtureLogContains,
    NoLiveSessions,
    Pattern,
    WorkflowCheck,
)
from skillgym.trace import ToolCall, Trace

pytestmark = pytest.mark.anyio

MakeCtx = Callable[..., GradeContext]
FIXTURE = Path(__file__).resolve().parents[2] / "evals" / "fixtures" / "hello-prompt.py"


def chain(*steps: tuple[str, str]) -> tuple[WorkflowCheck, ...]:
    """Optional steps, each depending on the one before, as the workflow sugar builds them."""
    checks: list[WorkflowCheck] = []
    for step_id, regex in steps:
        depends = (checks[-1].id,) if checks else ()
        checks.append(
            WorkflowCheck(
                id=step_id, required=False, required_patterns=(Pattern(regex=regex),), depends_on=depends
            )
        )
    return tuple(checks)


HELLO = ExecutionCase(
    id="hello-prompt",
    category="session",
    task="Send 'hello world', wait for READY>, save a snapshot to snapshot.txt, end the session",
    fixture="hello-prompt",
    expected_skill="tmux-tui",
    workflow=chain(
        ("create-session", r"\btmux\b.*\bnew(?:-session)?(?:[^\w-]|$)"),
        ("input", r"\btmux\b.*\bsend-keys\b.*hello\ world"),
        (
            "wait-for",
            r"(?:(?:\bcapture-pane\b|\bwait[-_]?(?:for|until)\w*).*READY>"
            r"|READY>.*(?:\bcapture-pane\b|\bwait[-_]?(?:for|until)\w*))",
        ),
        ("snapshot", r"\bcapture-pane\b"),
        ("destroy", r"\bkill-(?:session|server)\b"),
    ),
    verifiers=(
        FileContains(
            id="file-contains-1", path="snapshot.txt", pattern=Pattern(regex=r"ECHO:\s*hello world")
        ),
        FixtureLogContains(
            id="fixture-received-1",
            fixture="hello-prompt",
            event="input",
            pattern=Pattern(regex="hello world"),
        ),
        NoLiveSessions(id="no-live-sessions"),
    ),
    reference_steps=5,
    budget=Budget(timeout_s=120),
)


def shell_trace(commands: Sequence[str], final_text: str = "Done.") -> Trace:
    return Trace(
        final_text=final_text,
        tool_calls=tuple(ToolCall(name="Bash", command=c, input=c, exit_code=0) for c in commands),
    )


def act(commands: Sequence[str], ctx: GradeContext) -> None:
    """Really run the agent's commands in the workspace, as the agent would have."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": ctx.trial_dir,
        "TMUX_TMPDIR": ctx.tmux_tmpdir,
        "SKILLGYM_FIXTURE_LOG_DIR": ctx.fixture_log_dir,
    }
    for command in commands:
        subprocess.run(["sh", "-c", command], cwd=ctx.workspace, env=env, check=True, timeout=20)


def good_commands() -> list[str]:
    tmux = "tmux -f /dev/null -L grading-test"
    program = shlex.quote(f"{sys.executable} {FIXTURE}")
    return [
        f"{tmux} new-session -d -s app -x 100 -y 30 {program}",
        f"until {tmux} capture-pane -p -t app | grep -q 'READY>'; do sleep 0.05; done",
        f"{tmux} send-keys -t app 'hello world' Enter",
        f"until {tmux} capture-pane -p -t app | grep -q 'ECHO: hello world'; do sleep 0.05; done",
        f"{tmux} capture-pane -p -t app > snapshot.txt",
        f"{tmux} kill-session -t app",
    ]


@pytest.mark.integration
async def test_a_real_run_that_does_the_task_passes(make_ctx: MakeCtx, tmux_tmpdir: Path) -> None:
    ctx = make_ctx(tmux_tmpdir=str(tmux_tmpdir), agent_started_at=time.time() - 1)
    commands = good_commands()
    act(commands, ctx)
    result = await grade(HELLO, shell_trace(commands), ctx)
    assert result.passed, result.reasons
    assert [c.id for c in result.checks if not c.passed] == []
    assert [f.rule_id for f in result.findings] == []
    items = {i.name: i.score for i in result.items}
    assert items == {
        "provider": 1.0,
        "required-verifiers": 1.0,
        "workflow-compliance": 1.0,
        "anti-pattern-avoidance": 1.0,
        "efficiency": pytest.approx(5 / 6),
    }
    assert result.score == pytest.approx((4 + 5 / 6) / 5)


@pytest.mark.integration
async def test_a_real_run_that_sleeps_and_leaves_the_session_fails(
    make_ctx: MakeCtx, tmux_tmpdir: Path
) -> None:
    ctx = make_ctx(tmux_tmpdir=str(tmux_tmpdir))
    tmux = "tmux -f /dev/null -L grading-test"
    program = shlex.quote(f"{sys.executable} {FIXTURE}")
    commands = [
        f"{tmux} new-session -d -s app {program}",
        "sleep 1",
        f"{tmux} send-keys -t app 'hello world' Enter",
        "sleep 1",
        f"{tmux} capture-pane -p -t app > snapshot.txt",
    ]
    act(commands, ctx)
    result = await grade(HELLO, shell_trace(commands), ctx)
    assert not result.passed
    assert result.reasons[0].startswith(
        "required verifier 'no-live-sessions' failed: tmux session still running: 'app' (socket "
    )
    assert result.reasons[1].startswith("error-level anti-pattern 'blind-sleep' fired at line 2: 'sleep 1'")
    assert [(f.rule_id, f.line) for f in result.findings] == [
        ("orphaned-session", 1),
        ("blind-sleep", 2),
        ("blind-sleep", 4),
    ]


@pytest.mark.integration
async def test_a_session_whose_program_exited_is_no_orphan(make_ctx: MakeCtx, tmux_tmpdir: Path) -> None:
    ctx = make_ctx(tmux_tmpdir=str(tmux_tmpdir))
    tmux = "tmux -f /dev/null -L grading-test"
    program = shlex.quote(f"{sys.executable} {FIXTURE}")
    commands = [
        f"{tmux} new-session -d -s app {program}",
        f"until {tmux} capture-pane -p -t app | grep -q 'READY>'; do sleep 0.05; done",
        f"{tmux} send-keys -t app 'hello world' Enter",
        f"until {tmux} capture-pane -p -t app | grep -q 'ECHO: hello world'; do sleep 0.05; done",
        f"{tmux} capture-pane -p -t app > snapshot.txt",
        f"{tmux} send-keys -t app exit Enter",  # the program exits, and its session with it
        f"while {tmux} has-session -t app 2>/dev/null; do sleep 0.05; done",
    ]
    act(commands, ctx)
    result = await grade(HELLO, shell_trace(commands), ctx)
    assert result.passed, result.reasons
    assert [f.rule_id for f in result.findings] == []


async def test_prose_and_tool_output_are_never_scanned(make_ctx: MakeCtx) -> None:
    case = ExecutionCase(id="e", category="c", task="t", budget=Budget(timeout_s=10))
    trace = Trace(
        final_text="I ran sleep 5 and used scrot.\nsleep 5",
        tool_calls=(ToolCall(name="Bash", command="ls", output="sleep 5\nscrot a.png"),),
    )
    result = await grade(case, trace, make_ctx())
    assert result.findings == ()
    assert result.passed


async def test_doing_nothing_is_not_efficient(make_ctx: MakeCtx) -> None:
    case = ExecutionCase(id="e", category="c", task="t", reference_steps=4, budget=Budget(timeout_s=10))
    result = await grade(case, Trace(final_text="Done."), make_ctx())
    efficiency_item = next(i for i in result.items if i.name == "efficiency")
    assert (efficiency_item.score, efficiency_item.reason) == (0.0, "no command ran")
    assert efficiency(4, 2) == (1.0, "2 command(s) run for a reference of 4")
    assert efficiency(4, 8)[0] == 0.5


async def test_no_reference_steps_means_no_efficiency_item(make_ctx: MakeCtx) -> None:
    case = ExecutionCase(id="e", category="c", task="t", budget=Budget(timeout_s=10))
    result = await grade(case, shell_trace(["ls"]), make_ctx())
    assert "efficiency" not in [i.name for i in result.items]


async def test_provider_failure_fails_the_trial(make_ctx: MakeCtx) -> None:
    case = ExecutionCase(id="e", category="c", task="t", budget=Budget(timeout_s=10))
    result = await grade(case, shell_trace(["ls"]), make_ctx(provider_ok=False))
    assert not result.passed
    assert result.reasons == ("the provider did not succeed (the trial's error says why)",)


async def test_a_missing_required_artifact_fails(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    (Path(ctx.workspace) / "snapshot.txt").write_text("ECHO: hello world", encoding="utf-8")
    case = ExecutionCase(
        id="e",
        category="c",
        task="t",
        verifiers=(FileExists(id="snap", path="snapshot.txt"),),
        artifacts=(
            ArtifactRequirement(artifact="notes"),
            ArtifactRequirement(artifact="screenshot", description="a picture of the pane"),
            ArtifactRequirement(artifact="recording", required=False),
        ),
        budget=Budget(timeout_s=10),
    )
    result = await grade(case, shell_trace(["ls"]), ctx)
    assert not result.passed
    assert result.reasons == (
        "required artifact 'artifact-screenshot' is missing: a picture of the pane: found 0 screenshot "
        "(png, svg, jpg, jpeg, html) file(s), need 1",
    )
    assert result.score == 1.0  # artifacts are shown and gate; they are not scored


async def test_high_score_with_a_failed_required_verifier_still_fails(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    for name in ("a", "b", "c", "d"):
        (Path(ctx.workspace) / name).write_text("x", encoding="utf-8")
    case = ExecutionCase(
        id="e",
        category="c",
        task="t",
        verifiers=tuple(FileExists(id=f"file-{n}", path=n) for n in ("a", "b", "c", "d", "e")),
        reference_steps=1,
        budget=Budget(timeout_s=10),
    )
    result = await grade(case, shell_trace(["touch a"]), ctx)
    assert result.score == pytest.approx((1 + 0.8 + 1 + 1) / 4)
    assert not result.passed
    assert result.reasons == ("required verifier 'file-e' failed: e does not exist in the workspace",)


async def test_optional_verifiers_and_workflow_never_gate(make_ctx: MakeCtx) -> None:
    case = ExecutionCase(
        id="e",
        category="c",
        task="t",
        verifiers=(FileExists(id="nice", path="nope", required=False),),
        workflow=(WorkflowCheck(id="step", required_patterns=(Pattern(regex="never-run"),)),),
        budget=Budget(timeout_s=10),
    )
    result = await grade(case, shell_trace(["ls"]), make_ctx())
    assert result.passed
    assert {i.name: i.score for i in result.items}["workflow-compliance"] == 0.0
