"""Faults: what survives a broken agent, a huge or garbage stream, and an output dir that goes away."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO, agent_run, run_agent, run_cli, run_dirs, run_files, running_cli, wait_for

SuiteDir = Callable[[dict[str, str]], Path]

SUITE = {
    "cases.py": """
        from skillgym import prompt_case

        for i in range(4):
            with prompt_case(f"case-{i}") as c:
                c.category("trigger")
                c.prompt(f"question {i}")
                c.expect_skill(None)
                c.budget(timeout_s=60)
                with c.step("waits") as s:
                    s.must_mention("wait")
    """,
}


def _agent(tmp_path: Path, body: str) -> str:
    script = tmp_path / "agent.py"
    script.write_text("import json, os, sys, time\nsys.stdin.read()\n" + body)
    return f"{sys.executable} {script}"


def _result(root: Path, case: str = "case-0") -> dict[str, object]:
    (run_dir,) = run_dirs(root.parent / "runs")
    data: dict[str, object] = json.loads(
        (run_dir / f"trials/prompt/{case}/none/command/trial-1/result.json").read_text()
    )
    return data


def test_garbage_output_is_a_provider_error_naming_the_line(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent = _agent(
        tmp_path,
        'print(\'{"type": "message", "role": "assistant", "text": "hi"}\')\n'
        "print('Segmentation fault (core dumped) <<garbage>>')\n",
    )
    proc = run_agent(root, agent, "--case", "case-0")
    assert proc.returncode == 1
    result = _result(root)
    assert result["error_class"] == "provider-error"
    assert "unparseable agent output" in str(result["error_message"])
    assert "line 2" in str(result["error_message"])


def test_crash_mid_stream_keeps_what_was_said(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent = _agent(
        tmp_path,
        "print(json.dumps({'type': 'message', 'role': 'assistant', 'text': 'I would wait'}),"
        " flush=True)\nimport signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
    )
    proc = run_agent(root, agent, "--case", "case-0")
    assert proc.returncode == 1
    result = _result(root)
    assert result["status"] == "errored"
    assert "signal 11" in str(result["error_message"])
    (run_dir,) = run_dirs(root.parent / "runs")
    trace = json.loads((run_dir / "trials/prompt/case-0/none/command/trial-1/trace.json").read_text())
    assert trace["messages"][0]["text"] == "I would wait"


def test_a_100_mb_stream_is_capped_with_bounded_memory(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent = _agent(
        tmp_path,
        "chunk = ('x' * 1023 + '\\n') * 1024\nfor _ in range(100):\n"
        "    sys.stdout.write(chunk)\nsys.stdout.flush()\n",
    )
    code = (
        "import resource, subprocess, sys\n"
        "rc = subprocess.run(sys.argv[1:]).returncode\n"
        "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            sys.executable,
            "-m",
            "skillgym",
            "run",
            "--suite",
            str(root),
            "--case",
            "case-0",
            "--provider",
            "command",
            "--agent-command",
            agent,
        ],
        cwd=root.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    rc, peak_mb = (int(x) for x in out.stdout.split()[-2:])
    assert rc == 1
    assert peak_mb < 250, f"peak RSS {peak_mb} MB: output was not streamed with bounded memory"
    result = _result(root)
    assert result["error_class"] == "provider-error"
    assert "more than the" in str(result["error_message"])  # the truncation is noted
    (run_dir,) = run_dirs(root.parent / "runs")
    stored = (run_dir / "trials/prompt/case-0/none/command/trial-1/stdout.txt").stat().st_size
    assert 0 < stored <= 64 * 1024 * 1024


def test_an_output_path_that_cannot_be_created_is_exit_2(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir({**SUITE, **{f"stubs/case-{i}.md": "I would wait.\n" for i in range(4)}})
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the output folder should go")
    proc = run_cli(
        "run", "--suite", str(root), "--provider", "stub", "--output", str(blocker / "runs"), cwd=root.parent
    )
    assert proc.returncode == 2
    assert "cannot create the run directory" in proc.stderr and "--output" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert blocker.read_text() == "a file where the output folder should go"


def test_an_output_dir_removed_mid_run_stops_with_exit_2(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent = _agent(
        tmp_path, "time.sleep(0.5)\nprint(json.dumps({'type': 'result', 'text': 'I would wait'}))\n"
    )
    runs = root.parent / "runs"
    args = agent_run(root, agent)
    with running_cli(*args, "--concurrency", "1", cwd=root.parent) as child:
        wait_for(lambda: run_files(runs, "trials/*/*/*/*/*/result.json"), timeout=60, what="a first result")
        (run_dir,) = run_dirs(runs)
        # The run keeps writing while we delete: retry until the folder is really gone.
        deadline = time.monotonic() + 60
        while run_dir.exists() and time.monotonic() < deadline:
            shutil.rmtree(run_dir, ignore_errors=True)
        out, err = child.communicate(timeout=60)
    assert child.returncode == 2, (out, err)
    assert "the run directory stopped being writable" in err and "--output" in err
    assert "Traceback" not in err
    assert not run_dir.exists(), "the run must not quietly recreate a half-empty run directory"


def test_a_workspace_that_cannot_be_removed_is_a_warning_naming_it(
    suite_dir: SuiteDir, tmp_path: Path
) -> None:
    # An immutable file (chattr +i) resists removal even by root; where that is not possible, skip.
    probe = tmp_path / "probe"
    probe.touch()
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", probe], check=False).returncode:
        pytest.skip("chattr +i is not available on this filesystem or for this user")
    subprocess.run(["chattr", "-i", probe], check=True)
    root = suite_dir(SUITE)
    agent = _agent(
        tmp_path,
        "import subprocess\n"
        "if 'question 0' in open(os.environ['SKILLGYM_WORKSPACE'] + '/../prompt.txt').read():\n"
        "    open('stuck.txt', 'w').close()\n"
        "    subprocess.run(['chattr', '+i', 'stuck.txt'], check=True)\n"
        'print(json.dumps({"type": "result", "text": "I would wait"}))\n',
    )
    try:
        proc = run_agent(root, agent, "--case", "case-0", "--case", "case-1", "--condition", "none")
        assert proc.returncode == 0, proc.stdout + proc.stderr  # a cleanup problem never fails a trial
        warnings = [line for line in proc.stderr.splitlines() if line.startswith("skillgym: warning: ")]
        assert len(warnings) == 1, proc.stderr
        assert "could not remove " in warnings[0] and "case-0" in warnings[0], warnings
        assert warnings[0].endswith("; delete it by hand")
        (run_dir,) = run_dirs(root.parent / "runs")
        assert (
            run_dir / "trials" / "prompt" / "case-0" / "none" / "command" / "trial-1" / "workspace"
        ).is_dir()
        assert not list(run_dir.glob("trials/prompt/case-1/*/*/*/workspace"))  # the other one is gone
    finally:
        for stuck in run_files(root.parent / "runs", "trials/prompt/case-0/*/*/*/workspace/stuck.txt"):
            subprocess.run(["chattr", "-i", stuck], check=False)


BROKEN_CHECKS = {
    "cases.py": """
        from skillgym import execution_case

        for name in ("leaves", "blocks", "fine"):
            with execution_case(name) as c:
                c.category("session")
                c.task("make done.txt")
                c.budget(timeout_s=30, max_wall_clock_s=4)
                with c.assertions() as a:
                    a.custom(f"_checks:{name}")
    """,
    "_checks.py": """
        import sys, time

        def leaves(ctx, config):
            sys.exit(3)

        def blocks(ctx, config):
            time.sleep(60)
            return True

        def fine(ctx, config):
            return True
    """,
}


def test_a_broken_verifier_is_a_grader_error_and_the_run_goes_on(suite_dir: SuiteDir, tmp_path: Path) -> None:
    # One calls sys.exit, one blocks for a minute in plain Python: neither may end or stall the run.
    root = suite_dir(BROKEN_CHECKS)
    agent = _agent(tmp_path, 'print(json.dumps({"type": "result", "text": "done"}))\n')
    started = time.monotonic()
    proc = run_agent(root, agent, "--condition", "none", "--concurrency", "1")
    assert time.monotonic() - started < 40
    # Every trial that did not pass is the suite's bug (grader-error), not the agent's: inconclusive.
    assert proc.returncode == 3, proc.stderr
    (run_dir,) = run_dirs(root.parent / "runs")
    assert (run_dir / "report.md").is_file()

    def result(case: str) -> dict[str, object]:
        path = run_dir / f"trials/execution/{case}/none/command/trial-1/result.json"
        data: dict[str, object] = json.loads(path.read_text())
        return data

    leaves = result("leaves")
    assert (leaves["status"], leaves["error_class"]) == ("errored", "grader-error")
    assert "custom verifier '_checks:leaves' called sys.exit(3)" in str(leaves["error_message"])
    blocks = result("blocks")  # the suite's slow check, not the agent's time: not a timeout
    assert (blocks["status"], blocks["error_class"]) == ("errored", "grader-error")
    assert "grading ran past the case's max_wall_clock_s of 4s" in str(blocks["error_message"])
    assert result("fine")["status"] == "passed"


def test_a_relative_agent_path_is_the_one_where_skillgym_runs(suite_dir: SuiteDir) -> None:
    # The agent runs in each trial's workspace; ./agent.sh still means the script beside the user.
    root = suite_dir(SUITE)
    script = root.parent / "agent.sh"
    script.write_text('#!/bin/sh\ncat >/dev/null\necho \'{"type": "result", "text": "I would wait"}\'\n')
    script.chmod(0o755)
    proc = run_agent(root, "./agent.sh", "--case", "case-0", "--condition", "none")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _result(root)["status"] == "passed"
    # Recorded absolute, so a --resume from another directory runs the same program.
    (run_dir,) = run_dirs(root.parent / "runs")
    assert json.loads((run_dir / "run.json").read_text())["settings"]["agent_command"] == str(script)


SLOW_SETUP = {
    "suite.py": """
        from skillgym import workspace_preset

        workspace_preset("slow", bootstrap=[["sleep", "30"]])
    """,
    "cases.py": """
        from skillgym import execution_case

        with execution_case("slow-setup") as c:
            c.category("session")
            c.workspace("slow")
            c.task("make done.txt")
            c.budget(timeout_s=30, max_wall_clock_s=1)
            with c.assertions() as a:
                a.file_exists("done.txt")
    """,
}


def test_a_setup_past_the_wall_clock_limit_is_an_environment_error(
    suite_dir: SuiteDir, tmp_path: Path
) -> None:
    # The agent never ran: the limit ran out on the suite's bootstrap, which is not the agent's timeout.
    root = suite_dir(SLOW_SETUP)
    agent = _agent(tmp_path, 'print(json.dumps({"type": "result", "text": "done"}))\n')
    proc = run_agent(root, agent, "--condition", "none")
    assert proc.returncode == 3, proc.stderr  # only environment errors: inconclusive, not the agent's fail
    (run_dir,) = run_dirs(root.parent / "runs")
    path = run_dir / "trials/execution/slow-setup/none/command/trial-1/result.json"
    result = json.loads(path.read_text())
    assert (result["status"], result["error_class"]) == ("errored", "environment-error")
    assert "the workspace setup ran past the case's max_wall_clock_s of 1s" in result["error_message"]
