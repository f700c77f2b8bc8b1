"""Acceptance: gates and every exit code, dollars per trial, budgets and their resume, the step summary and
the dry run's estimate, each from the CLI on a suite in tmp_path with the stub and command providers."""

from __future__ import annotations

import json
import signal
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from tests.conftest import agent_run, run_agent, run_cli, run_dirs, run_files, running_cli, wait_for

SuiteDir = Callable[[dict[str, str]], Path]

# Eight prompt cases: under self-load the stub waits (passes), under none it sleeps (fails).
CASES = 8
STUB_SUITE: dict[str, str] = {
    "cases.py": f"""
        from skillgym import prompt_case

        for i in range({CASES}):
            with prompt_case(f"c{{i}}") as c:
                c.category("trigger")
                c.prompt("wait for the server")
                c.expect_skill(None)
                with c.step("waits") as s:
                    s.must_mention("wait")
                    s.must_not_mention(r"\\bsleep\\b")
    """,
    **{f"stubs/c{i}/self-load.md": "I would wait for the 'Listening' line.\n" for i in range(CASES)},
    **{f"stubs/c{i}/none.md": "Just sleep 5.\n" for i in range(CASES)},
}
SUITE_WITH_CONDITIONS = """
    from skillgym import condition

    condition("self-load", description="the agent finds it itself")
"""


def _stub_run(
    root: Path, *args: str, env: dict[str, str] | None = None, output: str = "runs"
) -> tuple[int, str, str, Path | None]:
    """The run's exit code, output and folder; one run per ``output`` (same-second run ids sort at random)."""
    proc = run_cli(
        "run", "--suite", str(root), "--provider", "stub", "--output", output, *args, cwd=root.parent, env=env
    )
    runs = root.parent / output
    found = run_dirs(runs) if runs.is_dir() else []
    assert len(found) <= 1, found
    return proc.returncode, proc.stdout, proc.stderr, found[0] if found else None


def _stub_suite(suite_dir: SuiteDir, **extra: str) -> Path:
    return suite_dir({**STUB_SUITE, "suite.py": SUITE_WITH_CONDITIONS, **extra})


def test_exit_0_when_every_gate_passes_even_though_baseline_trials_fail(suite_dir: SuiteDir) -> None:
    root = _stub_suite(suite_dir)
    code, out, err, run_dir = _stub_run(
        root,
        "--trials",
        "2",
        "--gate",
        "lift(self-load, none) > 0",
        "--gate",
        "pass_rate(prompt, self-load) >= 50%",
    )
    assert code == 0, (out, err)
    assert "gate PASS: lift(self-load, none) > 0" in out
    assert "gate PASS: pass_rate(prompt, self-load) >= 50%" in out
    assert run_dir is not None
    report = json.loads((run_dir / "report.json").read_text())
    assert [(g["expression"], g["status"]) for g in report["gates"]] == [
        ("lift(self-load, none) > 0", "passed"),
        ("pass_rate(prompt, self-load) >= 50%", "passed"),
    ]
    assert report["gates"][0]["parts"][0]["interval"]["low"] > 0
    assert "## Gates" in (run_dir / "report.md").read_text()
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert events[-1]["exit_code"] == 0
    assert [g["status"] for g in events[-1]["gates"]] == ["passed", "passed"]
    # The report rebuilt from the event log alone has the same gates.
    rebuilt = run_cli("report", str(run_dir), cwd=root.parent)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads((run_dir / "report.json").read_text())["gates"] == report["gates"]


def test_exit_1_when_a_gate_fails_or_is_not_shown(suite_dir: SuiteDir) -> None:
    root = _stub_suite(
        suite_dir, **{"gates.py": 'from skillgym import gate\n\ngate("pass_rate(prompt, none) >= 0.5")\n'}
    )
    code, out, _, run_dir = _stub_run(root, "--trials", "2", "--reporter", "junit")
    assert code == 1
    assert "gate FAIL: pass_rate(prompt, none) >= 0.5" in out
    assert run_dir is not None
    (gate,) = json.loads((run_dir / "report.json").read_text())["gates"]
    assert gate["origin"].endswith("gates.py:3")
    suites = {s.get("name"): s for s in ET.parse(run_dir / "junit.xml").getroot()}
    (case,) = suites["gates"]
    assert case.get("name") == "pass_rate(prompt, none) >= 0.5"
    assert case[0].tag == "failure" and case[0].get("message", "").startswith(
        "failed: prompt/stub: pass rate 0%"
    )
    # Two cases cannot show a lift: inconclusive with nothing but the agent's own results behind it is a 1.
    code, out, _, _ = _stub_run(
        root,
        "--case",
        "c0",
        "--case",
        "c1",
        "--condition",
        "self-load",
        "--condition",
        "none",
        "--gate",
        "lift(self-load, none) > 0",
        output="second",
    )
    assert code == 1
    assert "gate INCONCLUSIVE: lift(self-load, none) > 0" in out
    assert "exit 3" not in out


def test_exit_2_for_a_malformed_gate_with_its_position_and_nothing_written(suite_dir: SuiteDir) -> None:
    root = _stub_suite(suite_dir)
    code, _, err, run_dir = _stub_run(root, "--gate", "lift(self-load none) > 0")
    assert code == 2
    assert "gate 'lift(self-load none) > 0': expected ',' or ')', found 'none' at position 16" in err
    assert run_dir is None
    code, _, err, _ = _stub_run(root, "--gate", "lift(self-load, stale) > 0")
    assert code == 2
    assert "condition 'stale' is not in this run" in err
    code, _, err, _ = _stub_run(root, "--fail-on-regression")
    assert code == 2
    assert "add --compare-baseline" in err
    bad = _stub_suite(
        suite_dir, **{"gates.py": 'from skillgym import gate\n\ngate("pass_rate(prompt) > 1")\n'}
    )
    code, _, err, _ = _stub_run(bad)
    assert code == 2
    assert "gates.py:3" in err and "pass_rate() needs lane, condition" in err


EXECUTION_SUITE = {
    "suite.py": """
        from skillgym import gate, workspace_preset

        workspace_preset("broken", bootstrap=[["sh", "-c", "exit 7"]])
        gate("pass_rate(execution, none) >= 0.5")
    """,
    "cases.py": """
        from skillgym import execution_case

        for i in range(6):
            with execution_case(f"e{i}") as c:
                c.category("session")
                if i >= 2:
                    c.workspace("broken")
                c.task("make done.txt")
                with c.assertions() as a:
                    a.file_exists("done.txt")
    """,
}


def test_exit_3_when_errors_not_the_agents_leave_a_gate_without_data(
    suite_dir: SuiteDir, tmp_path: Path
) -> None:
    root = suite_dir(EXECUTION_SUITE)
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, sys\nsys.stdin.read()\nopen('done.txt', 'w').write('ok')\n"
        'print(json.dumps({"type": "result", "text": "done"}))\n'
    )
    proc = run_agent(root, f"{sys.executable} {agent}", "--condition", "none")
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "gate INCONCLUSIVE: pass_rate(execution, none) >= 0.5" in proc.stdout
    assert "exit 3 (inconclusive)" in proc.stdout
    assert "4 x environment-error" in proc.stdout
    (run_dir,) = run_dirs(root.parent / "runs")
    (gate,) = json.loads((run_dir / "report.json").read_text())["gates"]
    assert gate["status"] == "inconclusive"
    assert gate["errors"] == 4
    assert "inconclusive (errors)" in (run_dir / "report.md").read_text()


def test_exit_130_when_interrupted_whatever_the_gates_say(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = _stub_suite(suite_dir)
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import sys, time\nprompt = sys.stdin.read()\nopen('started', 'w').write('x')\ntime.sleep(300)\n"
    )
    args = agent_run(root, f"{sys.executable} {agent}")
    runs = root.parent / "runs"
    with running_cli(
        *args, "--concurrency", "1", "--gate", "pass_rate(prompt, none) >= 0", cwd=root.parent
    ) as child:
        wait_for(
            lambda: run_files(runs, "trials/prompt/*/*/command/trial-1/workspace/started"),
            timeout=60,
            what="the first trial to start",
        )
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    assert child.returncode == 130, (out, err)


def _cost_agent(tmp_path: Path, result: dict[str, object]) -> str:
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, sys\nsys.stdin.read()\n"
        'print(json.dumps({"type": "usage", "input": 1000, "output": 100}))\n'
        f"print(json.dumps({result!r}))\n"
    )
    return f"{sys.executable} {agent}"


def test_each_trial_has_its_cost_and_the_report_sums_it(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = _stub_suite(suite_dir)
    agent = _cost_agent(
        tmp_path, {"type": "result", "text": "I would wait", "model": "claude-sonnet-4-5-20250929"}
    )
    proc = run_agent(root, agent, "--case", "c0", "--case", "c1", "--condition", "none")
    assert proc.returncode == 0, proc.stderr
    # 1000 input at $3/M and 100 output at $15/M: $0.0045 a trial, from the packaged price table.
    assert "cost: $0.0090 over 2 trial(s)" in proc.stdout
    (run_dir,) = run_dirs(root.parent / "runs")
    result = json.loads((run_dir / "trials/prompt/c0/none/command/trial-1/result.json").read_text())
    assert result["cost"] == {
        "usd": 0.0045,
        "source": "prices",
        "detail": "claude-sonnet-4-5 prices of 2025-11-24",
    }
    report = json.loads((run_dir / "report.json").read_text())
    assert report["cost"]["totals"]["usd"] == 0.009
    assert report["cost"]["conditions"][0]["condition"] == "none"
    assert "## Cost" in (run_dir / "report.md").read_text()
    # A suite's own prices.toml is merged over the default; --prices over both.
    (root / "prices.toml").write_text(
        'taken = "2026-01-01"\n[models.claude-sonnet-4-5]\ninput = 30\noutput = 150\n'
    )
    proc = run_agent(root, agent, "--case", "c0", "--condition", "none", "--output", str(tmp_path / "more"))
    assert "cost: $0.0450 over 1 trial(s)" in proc.stdout


def test_an_unknown_cost_stays_unknown(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = _stub_suite(suite_dir)
    agent = _cost_agent(tmp_path, {"type": "result", "text": "I would wait", "model": "house-model"})
    proc = run_agent(root, agent, "--case", "c0", "--condition", "none")
    assert (
        "cost: - over 0 trial(s); 1 trial(s) of unknown cost (no price for house-model), not counted"
        in proc.stdout
    )
    (run_dir,) = run_dirs(root.parent / "runs")
    assert json.loads((run_dir / "report.json").read_text())["cost"]["totals"]["usd"] is None


def test_a_budget_stops_new_trials_and_a_larger_one_resumes(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = _stub_suite(suite_dir)
    agent = _cost_agent(tmp_path, {"type": "result", "text": "I would wait", "cost_usd": 0.01})
    args = ("--case", "c0", "--case", "c1", "--condition", "none", "--trials", "3", "--concurrency", "1")
    proc = run_agent(root, agent, *args, "--budget-usd", "0.025")
    # Two trials spend $0.02; the third could take $0.01 more, past $0.025: nothing new starts.
    assert proc.returncode == 0, proc.stderr
    assert "2 trials: 2 passed" in proc.stdout
    assert "budget: the next trial (prompt/c0/none/command/trial-3) could spend $0.0100" in proc.stdout
    (run_dir,) = run_dirs(root.parent / "runs")
    report = json.loads((run_dir / "report.json").read_text())
    assert report["budget"]["spent_usd"] == 0.02
    short = [(c["case_id"], c["finished"], c["planned"]) for c in report["budget"]["short"]]
    assert short == [("c0", 2, 3), ("c1", 0, 3)]
    assert "The budget ($0.0250) ended this run" in (run_dir / "report.md").read_text()
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    opened = [e["case_id"] for e in events if e["type"] == "case.start"]
    closed = [e["case_id"] for e in events if e["type"] == "case.finish"]
    assert opened == closed == ["c0"]  # a case the budget left short is closed all the same
    assert [e["type"] for e in events][-2:] == ["lane.finish", "run.finish"]
    resumed = run_cli("run", "--resume", str(run_dir), "--budget-usd", "1", cwd=root.parent)
    assert resumed.returncode == 0, resumed.stderr
    assert "6 trials: 6 passed" in resumed.stdout
    report = json.loads((run_dir / "report.json").read_text())
    assert report["budget"] is None
    assert report["cost"]["totals"]["usd"] == 0.06


def test_a_budget_over_a_provider_that_cannot_see_spend_is_refused_before_the_matrix(
    suite_dir: SuiteDir, tmp_path: Path
) -> None:
    root = _stub_suite(suite_dir)
    code, _, err, run_dir = _stub_run(root, "--budget-tokens", "1000")
    assert code == 2
    assert "provider 'stub' reports no token usage" in err
    assert run_dir is None or not (run_dir / "events.jsonl").exists()
    agent = _cost_agent(tmp_path, {"type": "result", "text": "I would wait"})
    proc = run_agent(root, agent, "--model", "house-model", "--budget-usd", "1")
    assert proc.returncode == 2
    assert "no price for model 'house-model'" in proc.stderr


def test_the_github_step_summary_is_appended_to(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = _stub_suite(suite_dir)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step output\n")
    code, _, err, _ = _stub_run(
        root,
        "--trials",
        "2",
        "--gate",
        "lift(self-load, none) > 0",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert code == 0, err
    text = summary.read_text()
    assert text.startswith("earlier step output\n## skillgym run ")
    assert ": passed (exit 0)" in text
    assert "| `lift(self-load, none) > 0` | pass |" in text


def test_the_dry_run_estimates_tokens_and_dollars_from_the_snapshots(
    suite_dir: SuiteDir, tmp_path: Path
) -> None:
    root = _stub_suite(suite_dir)
    snapshots = tmp_path / "snaps" / "stub"
    snapshots.mkdir(parents=True)
    figures = "input = 1000\noutput = 100\ncached = 0\ntotal = 1100\n"
    (snapshots / "claude-sonnet-4-5.toml").write_text(
        'schema = 1\nprovider = "stub"\nmodel = "claude-sonnet-4-5"\n\n'
        '[[entry]]\nlane = "prompt"\ncase = "c0"\n'
        'condition = "none"\nfingerprint = "f"\ntrials = 1\n'
        f"[entry.median]\n{figures}[entry.min]\n{figures}[entry.max]\n{figures}"
    )
    args = ("--case", "c0", "--case", "c1", "--condition", "none", "--trials", "2", "--dry-run")
    args += ("--snapshot-dir", str(tmp_path / "snaps"))
    code, out, err, _ = _stub_run(root, *args)
    assert code == 0, err
    assert "estimate from token snapshots: 2,200 tokens over 1 of 2 cell(s); $0.0090 over 1 of 2" in out
    assert "no estimate for 1 cell(s): no entry in" in out
    code, out, _, _ = _stub_run(root, *args, "--budget-tokens", "2000")
    assert "budget 2,000 tokens: the estimate (2,200 tokens) exceeds it, leaving out 1 cell(s)" in out
    code, out, err, _ = _stub_run(root, *args, "--json")
    estimate = json.loads(out)["estimate"]
    assert estimate["tokens"] == 2200
    assert estimate["no_tokens"] == ["prompt/c1/none/stub"]
    assert estimate["no_usd"] == ["prompt/c1/none/stub"]


def test_fail_on_regression_fails_a_run_whose_case_regressed_against_the_baseline(
    suite_dir: SuiteDir,
) -> None:
    root = _stub_suite(suite_dir)
    # Two cases of five trials: 5/5 against 0/5 survives Holm's step-down over both rows (p 0.016).
    select = ("--case", "c2", "--case", "c3", "--condition", "self-load", "--trials", "5")
    base = run_cli(
        "run", "--suite", str(root), "--provider", "stub", *select, "--output", "base", cwd=root.parent
    )
    assert base.returncode == 0, base.stderr
    (base_dir,) = run_dirs(root.parent / "base")
    args = (*select, "--compare-baseline", str(base_dir), "--fail-on-regression")
    code, out, err, _ = _stub_run(root, *args, output="same")
    assert code == 0, (out, err)
    assert "gate PASS: no case regressed against the baseline" in out
    (root / "stubs/c3/self-load.md").write_text("Just sleep 5.\n")  # the same case, now failing every trial
    code, out, _, run_dir = _stub_run(root, *args, output="changed")
    assert code == 1, out
    assert "gate FAIL: no case regressed against the baseline — regressed: prompt/c3/self-load/stub" in out
    assert run_dir is not None
    (gate,) = json.loads((run_dir / "report.json").read_text())["gates"]
    assert (gate["origin"], gate["status"]) == ("--fail-on-regression", "failed")


def test_a_step_summary_that_cannot_be_written_is_a_warning_not_a_verdict(
    suite_dir: SuiteDir, tmp_path: Path
) -> None:
    root = _stub_suite(suite_dir)
    code, _, err, _ = _stub_run(
        root,
        "--condition",
        "self-load",
        env={"GITHUB_STEP_SUMMARY": str(tmp_path / "no" / "such" / "file.md")},
    )
    assert code == 0, err
    assert "skillgym: warning: $GITHUB_STEP_SUMMARY" in err
