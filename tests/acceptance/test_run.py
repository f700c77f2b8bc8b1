"""Acceptance: `skillgym run` end to end as a subprocess, for every lane, with real processes and files."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from skillgym.workspaces import layout_for
from tests.conftest import REPO, agent_run, run_agent, run_cli, run_dirs, run_files, running_cli, wait_for

SuiteDir = Callable[[dict[str, str]], Path]

PROMPT_CASES = {
    "cases.py": """
        from skillgym import prompt_case

        with prompt_case("good") as c:
            c.category("trigger")
            c.prompt("wait for the server")
            c.expect_skill(None)
            with c.step("waits") as s:
                s.must_mention("wait")

        with prompt_case("bad") as c:
            c.category("trigger")
            c.prompt("wait for the server")
            c.expect_skill(None)
            with c.step("waits") as s:
                s.must_mention("wait")
                s.must_not_mention(r"\\bsleep\\b")
    """,
    "stubs/good.md": "I would wait for the 'Listening' line instead of sleeping.\n",
    "stubs/bad.md": "Just sleep 5 and then wait.\n",
}


def _events(run_dir: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


def _run_dir(root: Path) -> Path:
    (run_dir,) = run_dirs(root.parent / "runs")
    return run_dir


def test_stub_prompt_lane_pass_and_fail_with_files_and_exit_1(suite_dir: SuiteDir) -> None:
    root = suite_dir(PROMPT_CASES)
    proc = run_cli("run", "--suite", str(root), "--provider", "stub", "--trials", "2", cwd=root.parent)
    assert proc.returncode == 1, proc.stderr
    assert "4 trials: 2 passed, 2 failed, 0 errored" in proc.stdout
    run_dir = _run_dir(root)
    report = json.loads((run_dir / "report.json").read_text())
    assert report["counts"] == {"total": 4, "passed": 2, "failed": 2, "errored": 0}
    by_case = {c["case_id"]: c for c in report["cases"]}
    assert by_case["good"]["pass_rate"] == 1.0
    assert by_case["bad"]["pass_rate"] == 0.0
    (failure,) = [f for f in report["failures"] if f["key"].endswith("trial-1")]
    assert failure["key"] == "prompt/bad/none/stub/trial-1"
    assert any("sleep" in reason for reason in failure["reasons"])
    result = json.loads((run_dir / "trials/prompt/good/none/stub/trial-2/result.json").read_text())
    assert result["status"] == "passed"
    for rel in result["paths"].values():
        if rel is not None:
            assert (run_dir / rel).exists(), rel
    md = (run_dir / "report.md").read_text()
    for heading in (
        "Executive summary",
        "Condition comparison",
        "Lane breakdown",
        "Provider comparison",
        "Failed cases",
        "Trial aggregation",
        "Baseline comparison",
        "Anti-pattern summary",
        "Completeness summary",
    ):
        assert f"## {heading}" in md
    assert "prompt/bad/none/stub/trial-1" in md
    types = [e["type"] for e in _events(run_dir)]
    assert types[0] == "run.start" and types[-1] == "run.finish"
    assert (run_dir / "run.json").exists()


def test_stub_without_canned_output_is_refused_before_the_run(suite_dir: SuiteDir) -> None:
    root = suite_dir({"cases.py": PROMPT_CASES["cases.py"], "stubs/good.md": "wait\n"})
    proc = run_cli("run", "--suite", str(root), "--provider", "stub", "--case", "bad", cwd=root.parent)
    assert proc.returncode == 2, proc.stderr
    assert "stub has nothing to play for prompt case 'bad'" in proc.stderr and "stubs/bad.md" in proc.stderr
    assert not (root.parent / "runs").exists()


def test_a_run_with_errors_ends_by_saying_why(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(PROMPT_CASES)
    agent = tmp_path / "crash.py"
    agent.write_text("import sys\nsys.stdin.read()\nsys.exit(3)\n")
    proc = run_cli(*agent_run(root, f"{sys.executable} {agent}"), "--case", "bad", cwd=root.parent)
    assert proc.returncode == 1, proc.stderr
    result = json.loads((_run_dir(root) / "trials/prompt/bad/none/command/trial-1/result.json").read_text())
    assert result["status"] == "errored" and result["error_class"] == "provider-error"
    # Without --progress the run still ends by saying why: grouped, counted, with a trial to look at.
    assert "why 1 trial(s) errored:\n  1 x provider-error: " in proc.stdout
    assert "(prompt/bad/none/command/trial-1)\nreport: " in proc.stdout


EXECUTION_SUITE = {
    "suite.py": """
        from skillgym import workspace_preset

        workspace_preset("tpl", template="templates/base", env={"GREETING": "hello"})
        workspace_preset("broken", bootstrap=[["python3", "-c", "import sys; print('set up'); sys.exit(4)"]])
    """,
    "templates/base/README.txt": "template file\n",
    "fixtures/echo.py": "print('READY> ')\n",
    "cases.py": """
        from skillgym import execution_case

        with execution_case("make-file") as c:
            c.category("session")
            c.workspace("tpl")
            c.task("Write hello to out.txt")
            with c.assertions() as a:
                a.file_contains("out.txt", r"^hello world$")
                a.file_exists("README.txt")

        with execution_case("miss-file") as c:
            c.category("session")
            c.workspace("tpl")
            c.task("Write hello to other.txt")
            with c.assertions() as a:
                a.file_exists("other.txt")

        with execution_case("bad-bootstrap") as c:
            c.category("session")
            c.workspace("broken")
            c.task("anything")
            with c.assertions() as a:
                a.file_exists("x")
    """,
}


def _cassette(path: Path, lane: str, case: str, condition: str, events: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "cassette": 1,
        "provider": "rec",
        "model": "m1",
        "format": "skillgym-trace",
        "lane": lane,
        "case": case,
        "condition": condition,
        "trial": None,
        "fingerprint": "",
        "recorded_at": "now",
    }
    path.write_text("\n".join(json.dumps(x) for x in [header, *events]) + "\n")


def test_replay_execution_reenacts_commands_so_verifiers_see_real_files(suite_dir: SuiteDir) -> None:
    root = suite_dir(EXECUTION_SUITE)
    base = root / "cassettes/rec/m1/execution"
    write = {
        "type": "tool_call",
        "name": "Bash",
        "command": 'printf "$GREETING world\\n" > out.txt',
        "exit_code": 0,
    }
    usage = {"type": "usage", "input": 100, "output": 20}
    _cassette(base / "make-file/none.jsonl", "execution", "make-file", "none", [write, usage])
    _cassette(base / "miss-file/none.jsonl", "execution", "miss-file", "none", [write])
    _cassette(base / "bad-bootstrap/none.jsonl", "execution", "bad-bootstrap", "none", [write])
    proc = run_cli("run", "--suite", str(root), cwd=root.parent)
    assert proc.returncode == 1, proc.stderr
    run_dir = _run_dir(root)
    trials = run_dir / "trials/execution"
    ok = json.loads((trials / "make-file/none/replay/trial-1/result.json").read_text())
    assert ok["status"] == "passed", ok
    assert ok["usage"]["total"] == 120
    assert ok["paths"]["workspace"] is None  # removed on success
    assert not (trials / "make-file/none/replay/trial-1/workspace").exists()
    usage = json.loads((trials / "make-file/none/replay/trial-1/token-usage.json").read_text())
    assert usage["input"] == 100
    missed = json.loads((trials / "miss-file/none/replay/trial-1/result.json").read_text())
    assert missed["status"] == "failed"
    assert (
        run_dir / missed["paths"]["workspace"] / "out.txt"
    ).read_text() == "hello world\n"  # kept on failure
    assert any("other.txt" in r for r in missed["grade"]["reasons"])
    boot = json.loads((trials / "bad-bootstrap/none/replay/trial-1/result.json").read_text())
    assert boot["status"] == "errored"
    assert boot["error_class"] == "environment-error"
    assert "exit" in boot["error_message"] and "4" in boot["error_message"]


DOGFOOD_SUITE = {
    "fixtures/app.py": "print('READY> ')\n",
    "cases.py": """
        from skillgym import dogfood_case

        with dogfood_case("qa") as c:
            c.category("qa")
            c.fixture("app")
            c.task("QA the app")
            c.pass_threshold(0.3)
            with c.proof_bundle() as b:
                b.requires_notes()
            with c.report() as r:
                r.reproduction_steps()
    """,
}


def test_replay_dogfood_grades_the_bundle_on_disk(suite_dir: SuiteDir) -> None:
    root = suite_dir(DOGFOOD_SUITE)
    script = (
        "mkdir -p bundle && printf '# Notes\\ntried input\\n' > bundle/notes.md && "
        "printf '# Report\\n## Reproduction steps\\n1. run python3 app.py\\n2. type hello\\n"
        "Expected: echo. Actual: echo.\\n' > bundle/report.md"
    )
    events = [{"type": "tool_call", "name": "Bash", "command": script, "exit_code": 0}]
    _cassette(root / "cassettes/rec/m1/dogfood/qa/none.jsonl", "dogfood", "qa", "none", events)
    proc = run_cli("run", "--suite", str(root), "--keep-workspaces", cwd=root.parent)
    run_dir = _run_dir(root)
    result = json.loads((run_dir / "trials/dogfood/qa/none/replay/trial-1/result.json").read_text())
    assert proc.returncode == 0, (proc.stdout, proc.stderr, result["grade"])
    assert result["status"] == "passed"
    assert (run_dir / result["paths"]["bundle"] / "report.md").exists()
    report = json.loads((run_dir / "report.json").read_text())
    assert report["completeness"], "dogfood completeness summary is empty"


# Its command line and its child's carry a marker (argv[1]), so the host can look for them by name: in a
# sandbox, the PIDs the agent sees are its PID namespace's own.
HANG_AGENT = """
import subprocess, sys, time
sys.stdin.read()
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", sys.argv[1]])
open("agent.started", "w").close()  # cwd: the trial workspace
print('{"type": "message", "role": "assistant", "text": "thinking"}', flush=True)
time.sleep(300)
"""

CRASH_AGENT = """
import sys
prompt = sys.stdin.read()
print('{"type": "message", "role": "assistant", "text": "starting"}', flush=True)
if "crash" in prompt:
    print("Traceback: something broke", file=sys.stderr)
    sys.exit(3)
print('{"type": "result", "text": "I would wait for it"}', flush=True)
"""

AGENT_SUITE = {
    "cases.py": """
        from skillgym import prompt_case

        for name, prompt in (("calm", "wait for it"), ("crashy", "please crash")):
            with prompt_case(name) as c:
                c.category("trigger")
                c.prompt(prompt)
                c.expect_skill(None)
                c.budget(timeout_s=3)
                with c.step("waits") as s:
                    s.must_mention("wait")
    """,
}


def _running(marker: str) -> list[str]:
    """The host's live processes whose command line holds ``marker`` (zombies are dead, only unreaped)."""
    found = subprocess.run(
        ["pgrep", "-f", "-r", "R,S,D,T", marker], capture_output=True, text=True, check=False
    )
    return found.stdout.split()


def _marker() -> str:
    return f"skillgym-test-{uuid.uuid4().hex}"


def test_crashing_agent_is_a_provider_error_and_the_run_goes_on(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(AGENT_SUITE)
    agent = tmp_path / "agent.py"
    agent.write_text(CRASH_AGENT)
    proc = run_agent(root, f"{sys.executable} {agent}")
    assert proc.returncode == 1, proc.stderr
    trials = _run_dir(root) / "trials/prompt"
    calm = json.loads((trials / "calm/none/command/trial-1/result.json").read_text())
    crashy = json.loads((trials / "crashy/none/command/trial-1/result.json").read_text())
    assert calm["status"] == "passed"
    assert crashy["status"] == "errored"
    assert crashy["error_class"] == "provider-error"
    assert "exit code 3" in crashy["error_message"]
    assert "something broke" in (trials / "crashy/none/command/trial-1/stderr.txt").read_text()


def test_hanging_agent_is_killed_with_its_whole_process_group(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(AGENT_SUITE)
    agent = tmp_path / "agent.py"
    agent.write_text(HANG_AGENT)
    marker = _marker()
    started = time.monotonic()
    proc = run_agent(root, f"{sys.executable} {agent} {marker}", "--case", "calm")
    assert time.monotonic() - started < 60  # safety net only: the budget is 3 s
    assert proc.returncode == 1, proc.stderr
    run_dir = _run_dir(root)
    result = json.loads((run_dir / "trials/prompt/calm/none/command/trial-1/result.json").read_text())
    assert result["status"] == "errored"
    assert result["error_class"] == "timeout"
    assert (run_dir / result["paths"]["workspace"] / "agent.started").exists()
    assert _running(marker) == []


def test_unavailable_provider_is_one_configuration_error_before_any_trial(suite_dir: SuiteDir) -> None:
    root = suite_dir(AGENT_SUITE)
    proc = run_agent(root, "no-such-agent-program --flag")
    assert proc.returncode == 2
    assert "no-such-agent-program" in proc.stderr
    assert proc.stderr.count("not found") == 1
    assert not (root.parent / "runs").exists()


def test_ctrl_c_stops_cleanly_with_130_and_keeps_finished_trials(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(AGENT_SUITE)
    agent = tmp_path / "agent.py"
    # The interrupted agent leaves a daemon in a session of its own, out of reach of its group kill.
    agent.write_text(
        "import subprocess, sys, time\nprompt = sys.stdin.read()\n"
        "if 'crash' in prompt:\n"
        "    subprocess.Popen(['sleep', '300', sys.argv[1]], start_new_session=True)\n"
        "    open('daemon.pid', 'w').write('started')\n"
        "    time.sleep(300)\n"
        'print(\'{"type": "result", "text": "I would wait"}\', flush=True)\n'
    )
    runs = root.parent / "runs"
    marker = _marker()
    args = agent_run(root, f"{sys.executable} {agent} {marker}")
    with running_cli(*args, "--concurrency", "1", cwd=root.parent) as child:
        calm_result = wait_for(
            lambda: (
                run_files(runs, "trials/prompt/crashy/none/command/trial-1/workspace/daemon.pid")
                and run_files(runs, "trials/prompt/calm/none/command/trial-1/result.json")
            ),
            timeout=60,
            what="the first trial to finish and the second to start",
        )[0]
        time.sleep(0.3)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    assert child.returncode == 130, (out, err)
    run_dir = calm_result.parents[6]
    assert json.loads(calm_result.read_text())["status"] == "passed"
    # A passed trial's workspace is removed in the background; an interrupted run still waits for that.
    assert not (calm_result.parent / "workspace").exists()
    assert not (calm_result.parent / "home").exists()
    # The interrupted trial has no result, but it was cleaned up: its daemon is dead, its workspace kept.
    crashy = run_dir / "trials" / "prompt" / "crashy" / "none" / "command" / "trial-1"
    assert not (crashy / "result.json").exists()
    assert (crashy / "workspace" / "daemon.pid").exists()
    assert _running(marker) == []
    assert not Path(layout_for(crashy).tmux_tmpdir).exists()
    events = _events(run_dir)
    assert events[-1]["type"] == "run.finish"
    assert events[-1]["interrupted"] is True
    assert events[-1]["exit_code"] == 130
    assert (run_dir / "report.md").read_text().count("Interrupted") == 1


def test_more_ctrl_c_while_stopping_still_writes_the_report(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(AGENT_SUITE)
    agent = tmp_path / "agent.py"
    # An agent that shrugs off SIGTERM makes stopping take the whole grace period before SIGKILL.
    agent.write_text(
        "import signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nsys.stdin.read()\n"
        "open('started', 'w').close()\ntime.sleep(300)\n"
    )
    runs = root.parent / "runs"
    args = agent_run(root, f"{sys.executable} {agent}")
    with running_cli(*args, "--concurrency", "2", cwd=root.parent) as child:
        wait_for(
            lambda: len(run_files(runs, "trials/prompt/*/none/command/trial-1/workspace/started")) == 2,
            timeout=60,
            what="both agents to start",
        )
        child.send_signal(signal.SIGINT)
        for _ in range(2):  # impatient: the first one is still stopping the agents
            time.sleep(0.4)
            child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    assert child.returncode == 130, (out, err)
    assert err.count("skillgym: stopping: ending the agents and writing the report") == 2, err
    (run_dir,) = run_dirs(runs)
    assert _events(run_dir)[-1]["type"] == "run.finish"
    assert "Interrupted" in (run_dir / "report.md").read_text()


@pytest.mark.parametrize("lane", ["prompt", "execution", "dogfood"])
def test_example_suite_dry_runs_each_lane(lane: str) -> None:
    proc = run_cli("run", "--dry-run", "--lane", lane, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert f"{lane}/" in proc.stdout


def test_record_with_a_real_agent_then_replay_offline_gives_the_same_outcome(
    suite_dir: SuiteDir, tmp_path: Path
) -> None:
    root = suite_dir(EXECUTION_SUITE)
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import subprocess, sys, json\nsys.stdin.read()\n"
        "cmd = 'printf \"$GREETING world\\\\n\" > out.txt'\n"
        "subprocess.run(['bash', '-c', cmd], check=True)\n"
        "print(json.dumps({'type': 'tool_call', 'name': 'Bash', 'command': cmd, 'exit_code': 0}))\n"
        "print(json.dumps({'type': 'usage', 'input': 7, 'output': 3}))\n"
        "print(json.dumps({'type': 'result', 'text': 'done'}))\n"
    )
    recorded = run_agent(root, f"{sys.executable} {agent}", "--case", "make-file", "--record")
    assert recorded.returncode == 0, recorded.stderr
    cassette = root / "cassettes/command/default/execution/make-file/none/trial-1.jsonl"
    assert cassette.exists()
    header = json.loads(cassette.read_text().splitlines()[0])
    assert (
        header["provider"] == "command" and header["case"] == "make-file" and len(header["fingerprint"]) == 64
    )
    replayed = run_cli(
        "run", "--suite", str(root), "--case", "make-file", "--output", "replays", cwd=root.parent
    )
    assert replayed.returncode == 0, replayed.stderr
    (run_dir,) = run_dirs(root.parent / "replays")
    result = json.loads((run_dir / "trials/execution/make-file/none/replay/trial-1/result.json").read_text())
    assert result["status"] == "passed"
    assert result["usage"]["total"] == 10
    assert result["warnings"] == []
    assert (run_dir / result["paths"]["cassette"]).resolve() == cassette.resolve()
    # The case changes after the recording: the replay still runs, and says it is playing a stale cassette.
    cases = root / "cases.py"
    cases.write_text(cases.read_text().replace("Write hello to out.txt", "Write hello into out.txt"))
    stale = run_cli("run", "--suite", str(root), "--case", "make-file", "--output", "stale", cwd=root.parent)
    assert stale.returncode == 0, stale.stderr
    assert "1 trial(s) finished with warnings: see Warnings in report.md" in stale.stdout
    (stale_dir,) = run_dirs(root.parent / "stale")
    warnings = (stale_dir / "report.md").read_text().split("## Warnings\n", 1)[1].split("\n## ", 1)[0]
    assert "- `execution/make-file/none/replay/trial-1`\n  - cassette recorded for fingerprint" in warnings


def test_compare_baseline_pairs_cases_and_flags_a_changed_one(suite_dir: SuiteDir) -> None:
    root = suite_dir(PROMPT_CASES)
    first = run_cli("run", "--suite", str(root), "--provider", "stub", "--output", "base", cwd=root.parent)
    assert first.returncode == 1
    (base_dir,) = run_dirs(root.parent / "base")
    # The bad case's check changes: a different case now, which must not be compared silently.
    cases = root / "cases.py"
    cases.write_text(
        cases.read_text().replace('s.must_not_mention(r"\\bsleep\\b")', 's.must_not_mention("nap")')
    )
    second = run_cli(
        "run",
        "--suite",
        str(root),
        "--provider",
        "stub",
        "--compare-baseline",
        str(base_dir),
        cwd=root.parent,
    )
    assert second.returncode == 0, second.stderr
    report = json.loads((_run_dir(root) / "report.json").read_text())
    rows = {row["case_id"]: row["status"] for row in report["baseline"]["rows"]}
    assert rows == {"good": "unchanged", "bad": "fingerprint-changed"}
    assert "fingerprint-changed" in (_run_dir(root) / "report.md").read_text()
    missing = run_cli(
        "run",
        "--suite",
        str(root),
        "--provider",
        "stub",
        "--compare-baseline",
        "nowhere.json",
        cwd=root.parent,
    )
    assert missing.returncode == 2
    assert "baseline report nowhere.json does not exist" in missing.stderr
