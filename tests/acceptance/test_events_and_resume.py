"""Acceptance: event order under concurrency, report rebuild, resume after SIGINT/SIGKILL, junit, secrets."""

from __future__ import annotations

import json
import signal
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import agent_run, run_agent, run_cli, run_dirs, run_files, running_cli, wait_for

SuiteDir = Callable[[dict[str, str]], Path]

# Prompt cases whose agent answers after a short, varying delay, so trials really interleave.
SUITE = {
    "suite.py": """
        from skillgym import condition, prompt_case

        condition("none")
        condition("hinted", inject_text="Use the wait skill.")
        for i in range(6):
            with prompt_case(f"case-{i}") as c:
                c.category("trigger")
                c.prompt(f"question {i}: should we wait?")
                c.expect_skill(None)
                c.budget(timeout_s=60)
                with c.step("waits") as s:
                    s.must_mention("wait")
    """,
}

AGENT = """
import json, os, random, sys, time
prompt = sys.stdin.read()
counter, hang_flag = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
with open(counter, "a") as f:
    f.write(prompt.split(":")[0].split()[-1] + "\\n")
if hang_flag and os.path.exists(hang_flag) and "question 4" in prompt:
    time.sleep(300)
time.sleep(random.random() * 0.05)
answer = "no" if "question 3" in prompt else "I would wait"
print(json.dumps({"type": "usage", "input": 50, "output": 5}))
print(json.dumps({"type": "result", "text": answer}))
"""


def _agent(tmp_path: Path) -> tuple[str, Path]:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    counter = state / "calls.txt"
    return f"{sys.executable} {script} {counter}", counter


def _events(run_dir: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


def _only_run(root: Path, output: str = "runs") -> Path:
    (run_dir,) = run_dirs(root.parent / output)
    return run_dir


def check_order(events: list[dict[str, object]]) -> None:
    """The order contract: groups bracket their trials, lanes bracket their groups, run.finish is last."""
    assert events[0]["type"] == "run.start"
    assert events[-1]["type"] == "run.finish"
    where: dict[tuple[object, ...], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for index, e in enumerate(events):
        kind = str(e["type"])
        if kind in ("trial.start", "trial.finish", "case.start", "case.finish"):
            result = e.get("result")
            source = result["id"] if isinstance(result, dict) else e.get("id", e)
            assert isinstance(source, dict)
            group = (source["lane"], source["case_id"], source["condition"], source["provider"])
            where[group][kind].append(index)
        if kind in ("lane.start", "lane.finish"):
            where[("lane", e["lane"])][kind].append(index)
    lanes: dict[object, list[tuple[int, int]]] = defaultdict(list)
    for group, seen in where.items():
        if group[0] == "lane":
            continue
        (start,), (finish,) = seen["case.start"], seen["case.finish"]
        assert start < min(seen["trial.start"]), group
        assert finish == max(seen["trial.finish"]) + 1, group  # right after its last trial
        assert len(seen["trial.start"]) == len(seen["trial.finish"])
        lanes[group[0]].append((start, finish))
    for lane, spans in lanes.items():
        (lane_start,), (lane_finish,) = (
            where[("lane", lane)]["lane.start"],
            where[("lane", lane)]["lane.finish"],
        )
        assert lane_start < min(s for s, _ in spans)
        assert lane_finish > max(f for _, f in spans)


def test_order_contract_holds_under_concurrency(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent, _ = _agent(tmp_path)
    proc = run_agent(root, agent, "--trials", "4", "--concurrency", "8")
    assert proc.returncode == 1, proc.stderr  # case-3 answers "no": it fails
    events = _events(_only_run(root))
    assert sum(e["type"] == "trial.finish" for e in events) == 6 * 2 * 4
    starts = [i for i, e in enumerate(events) if e["type"] == "trial.start"]
    finishes = [i for i, e in enumerate(events) if e["type"] == "trial.finish"]
    assert starts[7] < finishes[0], "trials did not overlap: the test did not exercise concurrency"
    check_order(events)
    assert events[0]["schema"] == 4


def test_report_rebuild_from_the_event_log_is_byte_identical(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent, _ = _agent(tmp_path)
    run_agent(root, agent, "--trials", "2")
    run_dir = _only_run(root)
    original = {name: (run_dir / name).read_bytes() for name in ("report.json", "report.md")}
    for name in original:
        (run_dir / name).unlink()
    proc = run_cli("report", str(run_dir), cwd=root.parent)
    assert proc.returncode == 0, proc.stderr
    for name, data in original.items():
        assert (run_dir / name).read_bytes() == data, name


def _strip_volatile(report: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in report.items() if k != "run_id"}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_run_resumes_without_losing_or_repeating_trials(
    suite_dir: SuiteDir, tmp_path: Path, signum: int
) -> None:
    root = suite_dir(SUITE)
    agent, counter = _agent(tmp_path)
    # First a clean reference run of the same plan.
    run_agent(root, agent, "--trials", "2", "--output", "reference")
    reference = json.loads((_only_run(root, "reference") / "report.json").read_text())
    counter.unlink()
    # Then the same run, with case-4 hanging while a flag file exists, stopped once all else finished.
    hang_flag = tmp_path / "hang"
    hang_flag.write_text("")
    args = agent_run(root, f"{agent} {hang_flag}")
    with running_cli(*args, "--trials", "2", "--concurrency", "8", cwd=root.parent) as child:
        results = "trials/prompt/*/*/command/trial-*/result.json"
        wait_for(  # 24 trials, 4 of them (case-4) hang
            lambda: len(run_files(root.parent / "runs", results)) >= 20,
            timeout=90,
            what="the run to get to where only case-4 hangs",
            every=0.1,
        )
        child.send_signal(signum)
        out, err = child.communicate(timeout=60)
    assert child.returncode == (130 if signum == signal.SIGINT else -signal.SIGKILL), (out, err)
    run_dir = _only_run(root)
    if signum == signal.SIGINT:  # the way back names this run, as it can be typed
        assert f"continue with: skillgym run --resume {run_dir}" in out
    calls_before = counter.read_text().split()
    # Resume once the agent behaves (the flag is gone): only the unfinished trials run.
    hang_flag.unlink()
    proc = run_cli("run", "--resume", str(run_dir), cwd=root.parent)
    assert proc.returncode == 1, proc.stderr
    calls_after = counter.read_text().split()[len(calls_before) :]
    assert sorted(calls_after) == ["4"] * 4, calls_after  # exactly the four unfinished trials
    resumed = json.loads((run_dir / "report.json").read_text())
    assert _strip_volatile(resumed) == _strip_volatile(reference)
    segment = _events_after_last_start(run_dir)
    check_order(segment)
    # The results kept from before are re-announced as kept; only case-4's four ran here.
    kept = {e["result"]["id"]["case_id"] for e in segment if e["type"] == "trial.finish" and e["kept"]}
    new = [e["result"]["id"]["case_id"] for e in segment if e["type"] == "trial.finish" and not e["kept"]]
    assert new == ["case-4"] * 4 and "case-4" not in kept and len(kept) == 5
    assert sum(e["type"] == "trial.finish" for e in segment) == 24
    first = [e for e in _events(run_dir)[: _last_start(run_dir)] if e["type"] == "trial.finish"]
    assert first and not any(e["kept"] for e in first)  # the first run's own results are new there


def test_a_run_that_is_still_going_cannot_be_resumed_alongside(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent, _ = _agent(tmp_path)
    hang_flag = tmp_path / "hang"
    hang_flag.write_text("")
    args = agent_run(root, f"{agent} {hang_flag}")
    with running_cli(*args, "--concurrency", "8", cwd=root.parent) as child:
        wait_for(
            lambda: run_files(root.parent / "runs", "trials/prompt/*/*/command/trial-1/result.json"),
            timeout=90,
            what="the first trial to finish",
        )
        run_dir = _only_run(root)
        before = (run_dir / "events.jsonl").read_bytes()
        proc = run_cli("run", "--resume", str(run_dir), cwd=root.parent)
        assert proc.returncode == 2, proc.stderr
        assert "is still going in another skillgym process" in proc.stderr
        assert (run_dir / "events.jsonl").read_bytes().startswith(before)  # nothing of its own written
        # Nor is its report rebuilt half-way: the run writes it when it ends.
        rebuilt = run_cli("report", str(run_dir), cwd=root.parent)
        assert rebuilt.returncode == 2, rebuilt.stderr
        assert "is still going in another skillgym process" in rebuilt.stderr
        assert not (run_dir / "report.md").exists()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    assert child.returncode == 130, (out, err)
    assert [e["type"] for e in _events(run_dir)].count("run.start") == 1
    hang_flag.unlink()
    resumed = run_cli("run", "--resume", str(run_dir), cwd=root.parent)  # once it has stopped: fine
    assert resumed.returncode == 1, resumed.stderr


def _last_start(run_dir: Path) -> int:
    return max(i for i, e in enumerate(_events(run_dir)) if e["type"] == "run.start")


def _events_after_last_start(run_dir: Path) -> list[dict[str, object]]:
    return _events(run_dir)[_last_start(run_dir) :]


def test_resuming_a_finished_run_writes_nothing_and_keeps_its_verdict(
    suite_dir: SuiteDir, tmp_path: Path
) -> None:
    root = suite_dir(SUITE)
    agent, counter = _agent(tmp_path)
    first = run_agent(root, agent)
    assert first.returncode == 1, first.stderr  # case-3 fails
    run_dir = _only_run(root)
    files = {name: (run_dir / name).read_bytes() for name in ("events.jsonl", "run.json", "report.json")}
    calls = counter.read_text()
    for _ in range(2):
        proc = run_cli("run", "--resume", str(run_dir), cwd=root.parent)
        assert proc.returncode == 1, proc.stderr  # the run's own verdict
        assert proc.stdout.splitlines() == [
            f"skillgym: run {run_dir.name} already finished (12 trials: 10 passed, 2 failed, 0 errored); "
            f"nothing to resume in {run_dir}"
        ]
        for name, data in files.items():
            assert (run_dir / name).read_bytes() == data, name
        assert counter.read_text() == calls  # no agent ran


def test_resuming_a_finished_run_that_passed_exits_0(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent, _ = _agent(tmp_path)
    assert run_agent(root, agent, "--case", "case-0").returncode == 0
    run_dir = _only_run(root)
    before = (run_dir / "events.jsonl").read_bytes()
    proc = run_cli("run", "--resume", str(run_dir), cwd=root.parent)
    assert proc.returncode == 0, proc.stderr
    assert "(2 trials: 2 passed, 0 failed, 0 errored); nothing to resume" in proc.stdout
    assert (run_dir / "events.jsonl").read_bytes() == before


def test_resume_tolerates_a_truncated_last_line(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent, _ = _agent(tmp_path)
    run_cli("run", "--suite", str(root), "--provider", "command", "--agent-command", agent, cwd=root.parent)
    run_dir = _only_run(root)
    log = run_dir / "events.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    # Keep run.start and the first few events, then half of the next line: a crash mid-write.
    log.write_text("".join(lines[:6]) + lines[6][: len(lines[6]) // 2])
    proc = run_cli("run", "--resume", str(run_dir), cwd=root.parent)
    assert proc.returncode == 1, proc.stderr
    events = _events(run_dir)  # every line parses again
    assert events[-1]["type"] == "run.finish"
    assert json.loads((run_dir / "report.json").read_text())["counts"]["total"] == 12


def test_resume_refuses_flags_that_change_the_plan(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent, _ = _agent(tmp_path)
    run_cli("run", "--suite", str(root), "--provider", "command", "--agent-command", agent, cwd=root.parent)
    proc = run_cli(
        "run", "--resume", str(_only_run(root)), "--lane", "prompt", "--trials", "3", cwd=root.parent
    )
    assert proc.returncode == 2
    assert "drop --lane, --trials" in proc.stderr


def test_junit_parses_back_with_one_testcase_per_trial(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent, _ = _agent(tmp_path)
    run_agent(root, agent, "--trials", "2", "--reporter", "junit")
    tree = ET.parse(_only_run(root) / "junit.xml")
    suites = tree.getroot()
    assert suites.get("tests") == "24" and suites.get("failures") == "4"
    names = {s.get("name") for s in suites.iter("testsuite")}
    assert names == {f"prompt/case-{i}" for i in range(6)}
    (failing,) = [s for s in suites.iter("testsuite") if s.get("name") == "prompt/case-3"]
    cases = list(failing.iter("testcase"))
    assert len(cases) == 4
    failure = cases[0].find("failure")
    assert failure is not None and "waits" in (failure.get("message") or "")


def test_jsonl_reporter_copies_the_stream_to_stdout(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent, _ = _agent(tmp_path)
    proc = run_agent(root, agent, "--reporter", "jsonl", "--reporter-output", "-", "--case", "case-0")
    streamed = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [e["type"] for e in streamed] == [e["type"] for e in _events(_only_run(root))]
    assert (_only_run(root) / "report.md").exists()  # naming a reporter never replaces the final report


def test_reporter_flags_are_checked_before_anything_runs(suite_dir: SuiteDir) -> None:
    root = suite_dir(SUITE)
    for flags, message in (
        (["--reporter", "xml"], "unknown reporter 'xml'"),
        (["--reporter", "jsonl"], "needs --reporter-output"),
        (["--reporter-output", "x.jsonl"], "add --reporter jsonl"),
        (["--reporter", "final"], "the report (report.json, report.md, report.html) is always written"),
        (["--reporter", "events"], "the event log (events.jsonl) is always written"),
    ):
        proc = run_cli("run", "--suite", str(root), "--provider", "stub", *flags, cwd=root.parent)
        assert proc.returncode == 2, flags
        assert message in proc.stderr
        assert not (root.parent / "runs").exists()


def test_no_secret_value_anywhere_in_the_run_or_console(suite_dir: SuiteDir, tmp_path: Path) -> None:
    secret, token = "sk-fake-0123456789abcdef", "ghp_fakeTOKENvalue42"
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(f"{secret} {token}")
    agent = tmp_path / "leaky.py"
    agent.write_text(
        "import json, sys\nsys.stdin.read()\nvalue = open(sys.argv[1]).read()\n"
        "print(value, file=sys.stderr)\nopen('notes.txt', 'w').write('saved ' + value)\n"
        "print(json.dumps({'type': 'tool_call', 'name': 'Bash', 'command': 'echo ' + value, 'output': value,"
        " 'exit_code': 0}))\n"
        "print(json.dumps({'type': 'result', 'text': 'the key is ' + value}))\n"
    )
    root = suite_dir(SUITE)
    proc = run_agent(
        root,
        f"{sys.executable} {agent} {secret_file}",
        "--case",
        "case-1",
        "--progress",
        "--reporter",
        "junit",
        "--reporter",
        "jsonl",
        "--reporter-output",
        "-",
        env={"FAKE_API_KEY": secret, "GITHUB_TOKEN": token},
    )
    assert proc.returncode == 1, proc.stderr  # "the key is ..." does not mention waiting
    for stream in (proc.stdout, proc.stderr):
        assert secret not in stream and token not in stream
    scanned = 0
    for path in _only_run(root).rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            scanned += 1
            assert secret.encode() not in data, path
            assert token.encode() not in data, path
    assert scanned >= 8
    assert (
        "<redacted>" in (_only_run(root) / "trials/prompt/case-1/none/command/trial-1/trace.json").read_text()
    )


def _damage_three_results(run_dir: Path) -> dict[Path, bytes]:
    """Truncate one trial's result.json, replace one with garbage, and edit one's status; the originals."""
    paths = sorted(run_dir.glob("trials/prompt/*/none/command/trial-1/result.json"))[:3]
    originals = {p: p.read_bytes() for p in paths}
    truncated, garbage, edited = paths
    truncated.write_bytes(originals[truncated][: len(originals[truncated]) // 2])
    garbage.write_bytes(b"\x00\x01not json")
    record = json.loads(originals[edited])
    record["status"] = "passed" if record["status"] != "passed" else "failed"
    edited.write_text(json.dumps(record))
    return originals


@pytest.mark.parametrize("command", ["report", "resume"])
def test_trial_files_that_disagree_with_the_event_log_are_named_and_rewritten_from_it(
    suite_dir: SuiteDir, tmp_path: Path, command: str
) -> None:
    root = suite_dir(SUITE)
    agent, _ = _agent(tmp_path)
    run_agent(root, agent)
    run_dir = _only_run(root)
    report = (run_dir / "report.json").read_bytes()
    originals = _damage_three_results(run_dir)
    args = ("report", str(run_dir)) if command == "report" else ("run", "--resume", str(run_dir))
    proc = run_cli(*args, cwd=root.parent)
    assert proc.returncode == (0 if command == "report" else 1), proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("skillgym: warning:")]
    truncated, garbage, edited = (p.relative_to(run_dir) for p in originals)
    rewrote = "rewrote it from events.jsonl, the run's record"
    assert sorted(warnings) == [  # one line per file (in log order)
        f"skillgym: warning: {truncated} is truncated or not JSON; {rewrote}",
        f"skillgym: warning: {garbage} is truncated or not JSON; {rewrote}",
        f"skillgym: warning: {edited} disagrees with events.jsonl (status differ); {rewrote}",
    ], proc.stderr
    for path, data in originals.items():
        assert path.read_bytes() == data, path
    assert (run_dir / "report.json").read_bytes() == report  # the report came from the log all along
    again = run_cli(*args, cwd=root.parent)
    assert "warning" not in again.stderr, again.stderr
