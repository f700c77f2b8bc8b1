"""Acceptance: errors not the agent's stay out of verdicts, its own count against it, and a baseline is never
dropped without a word."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import run_cli, run_dirs

SuiteDir = Callable[[dict[str, str]], Path]

CASES = ("wait-a", "wait-b", "wait-c", "wait-d", "wait-e", "wait-f")
SUITE = {
    "suite.py": """
        from skillgym import skill

        skill("waiting", "skills/waiting")
    """,
    "skills/waiting/SKILL.md": "---\nname: waiting\ndescription: wait for output\n---\nPoll, never sleep.\n",
    "cases.py": """
        from skillgym import prompt_case

        for name in ("wait-a", "wait-b", "wait-c", "wait-d", "wait-e", "wait-f"):
            with prompt_case(name) as c:
                c.category("trigger")
                c.prompt("wait for the server")
                c.expect_skill(None)
                with c.step("waits") as s:
                    s.must_mention("wait")
    """,
    **{f"stubs/{case}/none.md": "I would wait for the line.\n" for case in CASES},
}
# Execution cases whose verifier breaks under self-load only: a grader error, the suite's bug.
BROKEN_UNDER_SELF_LOAD = {
    "suite.py": SUITE["suite.py"],
    "skills/waiting/SKILL.md": SUITE["skills/waiting/SKILL.md"],
    "cases.py": """
        from skillgym import execution_case

        for name in ("wait-a", "wait-b", "wait-c", "wait-d", "wait-e", "wait-f"):
            with execution_case(name) as c:
                c.category("session")
                c.task("wait for the server")
                with c.assertions() as a:
                    a.custom("_checks:check")
    """,
    "_checks.py": """
        def check(ctx, config):
            if "self-load" in ctx.trial_dir.parts:
                raise RuntimeError("this verifier breaks under self-load")
            return True
    """,
    **{f"stubs/{case}.md": "I waited for the line.\n" for case in CASES},
}
# An agent that answers under `none` and crashes under self-load: a provider error, the agent's own failure.
CRASHES_UNDER_SELF_LOAD = """
import json, os, sys
if "/self-load/" in os.environ["SKILLGYM_TRIAL_ID"]:
    sys.exit(3)
print(json.dumps({"type": "result", "text": "I would wait for the line."}))
"""
SCHEMA_1 = Path(__file__).parent.parent / "unit" / "data" / "report-schema-1.json"


def _only_run(root: Path, output: str = "runs") -> Path:
    (run_dir,) = run_dirs(root.parent / output)
    return run_dir


def _run(root: Path, *args: str, output: str = "runs", provider: str = "stub") -> None:
    proc = run_cli(
        "run", "--suite", str(root), "--provider", provider, "--output", output, *args, cwd=root.parent
    )
    # A finished run: 3 when every trial that did not pass errored for reasons not the agent's.
    assert proc.returncode in (0, 1, 3), proc.stderr


def test_a_condition_whose_verifier_broke_is_left_out_not_called_a_regression(suite_dir: SuiteDir) -> None:
    root = suite_dir(BROKEN_UNDER_SELF_LOAD)
    _run(root, "--condition", "none", "--condition", "self-load", "--trials", "2")
    run_dir = _only_run(root)
    report = json.loads((run_dir / "report.json").read_text())
    assert report["errors_by_class"] == {"grader-error": 12}, report["failures"][:1]
    (realized,) = report["condition_comparisons"]
    assert realized["comparison"]["verdict"] == "inconclusive"
    assert realized["comparison"]["n_pairs"] == 0 and realized["cases_left_out_for_errors"] == 6
    md = (run_dir / "report.md").read_text()
    assert "regressed" not in md
    assert (
        "| realized lift (self-load vs none) | execution | 0 (6 cases left out: errors not the agent's) |"
        in md
    )


def test_a_condition_whose_agent_only_errored_is_not_left_out_nor_called_a_regression(
    suite_dir: SuiteDir,
) -> None:
    # A provider error (here: the stub has no answer for self-load) counts as a failure, not a pass; yet it
    # may be an outage, and with the provider errors left out nothing is graded: they decide the verdict.
    root = suite_dir(SUITE)
    agent = root.parent / "agent.py"
    agent.write_text(CRASHES_UNDER_SELF_LOAD)
    crashing = ("--agent-command", f"{sys.executable} {agent}")
    _run(
        root,
        "--condition",
        "none",
        "--condition",
        "self-load",
        "--trials",
        "2",
        *crashing,
        provider="command",
    )
    run_dir = _only_run(root)
    report = json.loads((run_dir / "report.json").read_text())
    assert report["errors_by_class"] == {"provider-error": 12}
    (realized,) = report["condition_comparisons"]
    assert realized["comparison"]["verdict"] == "inconclusive"
    assert realized["depends_on_errors"] == 12
    assert realized["comparison"]["n_pairs"] == 6 and realized["cases_left_out_for_errors"] == 0
    md = (run_dir / "report.md").read_text()
    assert "| realized lift (self-load vs none) | prompt | 6 | -100 pts |" in md
    assert "| inconclusive: the verdict depends on 12 provider errors |" in md
    assert "regressed" not in md
    assert "and provider errors count as failures." in md


def test_a_baseline_is_stored_absolute_and_a_rebuild_says_when_it_is_gone(
    suite_dir: SuiteDir, tmp_path: Path
) -> None:
    root = suite_dir(SUITE)
    _run(root, "--condition", "none", output="base")
    base = _only_run(root, "base")
    _run(root, "--condition", "none", "--compare-baseline", f"base/{base.name}")  # relative to the cwd
    run_dir = _only_run(root)
    report = json.loads((run_dir / "report.json").read_text())
    assert report["baseline_report"] == str(base.resolve())
    assert report["baseline"]["overall"]["n_pairs"] == len(CASES)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    rebuilt = run_cli("report", str(run_dir), cwd=elsewhere)  # another cwd still finds the baseline
    assert rebuilt.returncode == 0 and "warning" not in rebuilt.stderr, rebuilt.stderr
    assert json.loads((run_dir / "report.json").read_text())["baseline"] == report["baseline"]

    shutil.rmtree(base)
    gone = run_cli("report", str(run_dir), cwd=elsewhere)
    assert gone.returncode == 0, gone.stderr
    warning = " ".join(gone.stderr.split())
    expected = f"skillgym: warning: baseline report {base.resolve()} was not compared: not found; put it back"
    assert expected in warning
    after = json.loads((run_dir / "report.json").read_text())
    assert after["baseline"] is None and after["baseline_problem"].startswith("not found;")
    md = " ".join((run_dir / "report.md").read_text().split())
    assert (
        f"This run named the baseline `{base.resolve()}`; it was not compared when this report was built"
        in md
    )


def test_compare_baseline_reads_an_older_report_and_refuses_a_newer_one(suite_dir: SuiteDir) -> None:
    root = suite_dir(SUITE)
    older = root.parent / "older.json"
    shutil.copy(SCHEMA_1, older)
    _run(root, "--condition", "none", "--compare-baseline", str(older))
    report = json.loads((_only_run(root) / "report.json").read_text())
    assert report["baseline"]["baseline_run"] == "20260101-000000-v1v1v1"
    assert {row["status"] for row in report["baseline"]["rows"]} == {"new", "missing"}  # other cases

    newer = root.parent / "newer.json"
    newer.write_text(json.dumps({**json.loads(SCHEMA_1.read_text()), "schema": 99}))
    refused = run_cli(
        "run", "--suite", str(root), "--provider", "stub", "--compare-baseline", str(newer), cwd=root.parent
    )
    assert refused.returncode == 2
    assert "has report schema 99, newer than this skillgym reads" in " ".join(refused.stderr.split())
