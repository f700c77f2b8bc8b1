"""Acceptance: --trials auto stops each cell once settled, resumes from its log, and --aa reports A/A."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from textwrap import dedent

from tests.conftest import run_cli, run_dirs

SuiteDir = Callable[[dict[str, str]], Path]

SUITE = {
    "suite.py": """
        from skillgym import skill

        skill("waiting", "skills/waiting")
    """,
    "skills/waiting/SKILL.md": "---\nname: waiting\ndescription: wait for output\n---\nPoll, never sleep.\n",
    "cases.py": """
        from skillgym import prompt_case

        for name in ("a", "b", "c"):
            with prompt_case(name) as c:
                c.category("trigger")
                c.prompt("wait for the server")
                c.expect_skill(None)
                with c.step("waits") as s:
                    s.must_mention("wait")
    """,
}
# Passes by a hash of its trial key: a fixed pass rate per condition, the same outcome on every rerun.
AGENT = """
import hashlib, json, os
key = os.environ["SKILLGYM_TRIAL_ID"]
u = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 2**32
rate = 0.0 if "/none/" in key else 1.0 if "/preloaded/" in key else 0.5
print(json.dumps({"type": "result", "text": "I would wait for it." if u < rate else "I would sleep."}))
"""


def _run(root: Path, *args: str) -> tuple[int, Path]:
    agent = root.parent / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    proc = run_cli(
        "run", "--suite", str(root), "--provider", "command", "--agent-command", f"{sys.executable} {agent}",
        "--output", "runs", *args, cwd=root.parent,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    (run_dir,) = run_dirs(root.parent / "runs")
    return proc.returncode, run_dir


def test_auto_trials_stop_a_decided_lift_early_and_say_why(suite_dir: SuiteDir) -> None:
    root = suite_dir(SUITE)
    _, run_dir = _run(root, "--trials", "auto", "--max-trials", "12", "--condition", "none",
                      "--condition", "preloaded")  # fmt: skip
    report = json.loads((run_dir / "report.json").read_text())
    adaptive = report["adaptive"]
    # preloaded always passes, none never: each case's lift is decided after the fewest pairs that can.
    lifts = [q for q in adaptive["questions"] if q["name"] == "preloaded vs none"]
    assert [q["status"] for q in lifts] == ["improved"] * 3
    assert all(q["n"] < 12 and q["interval"]["low"] > 0 for q in lifts)
    assert adaptive["trials_run"] < adaptive["planned_most"] == 3 * 2 * 12
    assert all("decided, improved after" in c["reason"] for c in adaptive["cells"])
    trials = sorted(p.name for p in (run_dir / "trials/prompt/a/none/command").iterdir())
    assert trials[0] == "trial-1"  # trial keys are the plan's, from 1 up
    assert all(c["pass_interval_kind"] == "confidence sequence" for c in report["cases"])
    md = (run_dir / "report.md").read_text()
    assert "## Adaptive trials" in md and "anytime-valid" in md


def test_resume_feeds_kept_results_to_the_sequences(suite_dir: SuiteDir) -> None:
    root = suite_dir(SUITE)
    _, run_dir = _run(root, "--trials", "auto", "--max-trials", "12", "--condition", "none",
                      "--condition", "preloaded", "--concurrency", "1")  # fmt: skip
    full = json.loads((run_dir / "report.json").read_text())["adaptive"]
    # Cut the log after its fourth finished trial, as if the run had been killed there.
    lines = (run_dir / "events.jsonl").read_text().splitlines(keepends=True)
    finishes = [i for i, line in enumerate(lines) if '"type":"trial.finish"' in line]
    (run_dir / "events.jsonl").write_text("".join(lines[: finishes[3] + 1]))
    proc = run_cli("run", "--resume", str(run_dir), cwd=root.parent)
    assert proc.returncode in (0, 1), proc.stderr
    resumed = json.loads((run_dir / "report.json").read_text())["adaptive"]
    assert resumed["questions"] == full["questions"]  # the same trials, the same decisions
    assert resumed["trials_run"] == full["trials_run"]


def test_aa_reports_a_false_positive_rate_with_its_interval(suite_dir: SuiteDir) -> None:
    root = suite_dir(SUITE)
    _, run_dir = _run(root, "--trials", "4", "--condition", "none", "--aa", "self-load")
    report = json.loads((run_dir / "report.json").read_text())
    assert "self-load~aa" in report["conditions"]
    (aa,) = report["aa"]
    assert aa["condition"] == "self-load" and aa["cases_compared"] == 3
    assert aa["interval"]["low"] <= aa["false_positive_rate"] <= aa["interval"]["high"]
    assert "Fisher" in aa["test"]
    assert any(c["comparison"]["name"].startswith("A/A") for c in report["condition_comparisons"])
    assert "## A/A calibration" in (run_dir / "report.md").read_text()


def test_bad_adaptive_flags_are_usage_errors(suite_dir: SuiteDir) -> None:
    root = suite_dir(SUITE)
    proc = run_cli("run", "--suite", str(root), "--max-trials", "5", "--dry-run", cwd=root.parent)
    assert proc.returncode == 2 and "--trials auto" in proc.stderr
    proc = run_cli("run", "--suite", str(root), "--aa", "nope", "--dry-run", cwd=root.parent)
    assert proc.returncode == 2 and "'nope' is not one of the suite's conditions" in proc.stderr
    proc = run_cli("run", "--suite", str(root), "--trials", "auto", "--min-trials", "9", "--max-trials", "4",
                   "--dry-run", cwd=root.parent)  # fmt: skip
    assert proc.returncode == 2 and "--min-trials" in proc.stderr


def test_case_and_suite_defaults_set_the_trials(suite_dir: SuiteDir) -> None:
    root = suite_dir(
        {
            **SUITE,
            "suite.py": dedent(SUITE["suite.py"])
            + "\nfrom skillgym import trials\ntrials('auto', max_trials=6)\n",
            "cases.py": dedent(SUITE["cases.py"]) + "\nwith prompt_case('d') as c:\n"
            "    c.category('trigger')\n    c.prompt('wait')\n    c.expect_skill(None)\n    c.trials(2)\n",
        }
    )
    proc = run_cli("run", "--suite", str(root), "--condition", "none", "--dry-run", "--json", cwd=root.parent)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    per_case = {c: sum(1 for i in plan["items"] if i["id"]["case_id"] == c) for c in "abcd"}
    assert per_case == {"a": 6, "b": 6, "c": 6, "d": 2}
    assert set(plan["auto"]) == {"a", "b", "c"} and plan["auto"]["a"]["max_trials"] == 6
    proc = run_cli("run", "--suite", str(root), "--condition", "none", "--trials", "3", "--dry-run", "--json",
                   cwd=root.parent)  # fmt: skip
    assert json.loads(proc.stdout)["auto"] == {}  # the command line overrides both


def test_plan_power_answers_both_ways(suite_dir: SuiteDir) -> None:
    root = suite_dir(SUITE)
    proc = run_cli("plan", "--power", "--suite", str(root), "--lift", "0.3", "--json", cwd=root.parent)
    assert proc.returncode == 0, proc.stderr
    (lane,) = json.loads(proc.stdout)["lanes"]
    assert lane["cases"] == 3
    # Three cases can never pass the sign test at 5% (its smallest p-value with 3 pairs is 0.25).
    assert lane["trials_needed"] is None and lane["smallest_lift_at_trials"] is None
    assert lane["cases_needed_at_trials"] >= 6
    proc = run_cli("plan", "--suite", str(root), cwd=root.parent)
    assert proc.returncode == 2 and "--power" in proc.stderr


def test_plan_power_counts_the_futility_rule(suite_dir: SuiteDir) -> None:
    root = suite_dir(SUITE)
    proc = run_cli("plan", "--power", "--suite", str(root), "--lift", "0.5", "--max-trials", "15", "--json",
                   cwd=root.parent)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    case, cap = doc["adaptive_case"], doc["adaptive_cap_needed"]
    assert case["futility"] == 1.5 and case["max_trials"] == 15 and 0.0 < case["futile"] < 1.0
    assert cap["power"] >= 0.8 and cap["max_trials"] % 5 == 0 and cap["futility"] == 1.5
    proc = run_cli("plan", "--power", "--suite", str(root), "--lift", "0.5", "--futility", "none",
                   cwd=root.parent)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "--futility none: its own lift is decided improved with power" in proc.stdout
    assert "--max-trials for power 0.8 per case: " in proc.stdout


def test_several_providers_and_concurrency_close_every_cell(suite_dir: SuiteDir) -> None:
    root = suite_dir({**SUITE, **{f"stubs/{c}.md": "I would wait for the line.\n" for c in "abc"}})
    _, run_dir = _run(root, "--provider", "stub", "--trials", "auto", "--max-trials", "8", "--condition",
                      "none", "--condition", "preloaded", "--concurrency", "4")  # fmt: skip
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    starts = [e for e in events if e["type"] == "case.start"]
    finishes = [e for e in events if e["type"] == "case.finish"]
    assert len(starts) == len(finishes) == 3 * 2 * 2  # cases x conditions x providers
    assert events[-1]["type"] == "run.finish"
    trials = sum(1 for e in events if e["type"] == "trial.finish")
    assert sum(e["counts"]["total"] for e in finishes) == trials
    report = json.loads((run_dir / "report.json").read_text())
    by_provider = {q["provider"]: q["status"] for q in report["adaptive"]["questions"]}
    # The stub answers alike under both conditions: no difference, futile before the cap of 8 pairs.
    assert by_provider["command"] == "improved" and by_provider["stub"] in ("futile", "max-trials")


def test_a_case_with_no_difference_stops_futile_and_the_report_says_what_that_means(
    suite_dir: SuiteDir,
) -> None:
    root = suite_dir({**SUITE, **{f"stubs/{c}.md": "I would wait for the line.\n" for c in "abc"}})
    _, run_dir = _run(root, "--provider", "stub", "--trials", "auto", "--max-trials", "20", "--condition",
                      "none", "--condition", "preloaded", "--concurrency", "1")  # fmt: skip
    report = json.loads((run_dir / "report.json").read_text())
    adaptive = report["adaptive"]
    stub = [q for q in adaptive["questions"] if q["provider"] == "stub"]
    # (The command agent never passes under none, always under preloaded: those lifts are decided.)
    # The stub passes under both conditions: every pair a tie. Curtailment runs 14 pairs of the 20 (till
    # six wins in a row could no longer decide it); the futility rule, fixed in the policy, stops after 4.
    assert [(q["status"], q["n"], q["futility"]) for q in stub] == [("futile", 4, 1.5)] * 3
    assert all(
        c["reason"] == "preloaded vs none: futile, inconclusive (the trials left up to the cap could not "
        "decide it going on at the estimate +/- 1.5 standard errors) after 4 pairs"
        for c in adaptive["cells"]
        if c["provider"] == "stub"
    )
    assert "not evidence of no effect" in adaptive["futility_rule"]
    md = (run_dir / "report.md").read_text()
    assert "Futility: a question stops as futile, inconclusive" in md
    html = (run_dir / "report.html").read_text()
    assert "<b>Futility:</b> a question stops as futile" in html
    start = json.loads((run_dir / "events.jsonl").read_text().splitlines()[0])
    assert start["settings"]["trials_policy"]["futility"] == 1.5  # recorded: a resume uses the same rule


def test_futility_none_keeps_curtailment_only(suite_dir: SuiteDir) -> None:
    root = suite_dir({**SUITE, **{f"stubs/{c}.md": "I would wait for the line.\n" for c in "abc"}})
    _, run_dir = _run(root, "--provider", "stub", "--trials", "auto", "--max-trials", "20", "--condition",
                      "none", "--condition", "preloaded", "--futility", "none", "--case", "a",
                      "--concurrency", "1")  # fmt: skip
    questions = json.loads((run_dir / "report.json").read_text())["adaptive"]["questions"]
    (q,) = [q for q in questions if q["provider"] == "stub"]
    assert (q["status"], q["n"], q["futility"]) == ("futile", 14, None)
    proc = run_cli("run", "--suite", str(root), "--futility", "1", "--dry-run", cwd=root.parent)
    assert proc.returncode == 2 and "--futility go with --trials auto" in proc.stderr
    proc = run_cli("run", "--suite", str(root), "--trials", "auto", "--futility", "-1", "--dry-run",
                   cwd=root.parent)  # fmt: skip
    assert proc.returncode == 2 and "at least 0" in proc.stderr


def test_aa_under_auto_trials_counts_the_adaptive_decisions(suite_dir: SuiteDir) -> None:
    root = suite_dir(SUITE)
    _, run_dir = _run(root, "--trials", "auto", "--max-trials", "6", "--condition", "none", "--aa", "none",
                      "--progress")  # fmt: skip
    report = json.loads((run_dir / "report.json").read_text())
    (aa,) = report["aa"]
    # none never passes, in both arms: no difference, never called one.
    assert (
        aa["cases_compared"] == 3 and aa["cases_called"] == 0 and aa["test"] == "the adaptive lift decision"
    )
    assert {q["name"] for q in report["adaptive"]["questions"]} == {"none~aa vs none"}
