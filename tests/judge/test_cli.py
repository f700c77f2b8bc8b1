"""Acceptance: the judge from the command line with the stub judge (no model): record and replay,
calibration figures, the min_kappa warning, blind pairwise, reports, and the errors a user meets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillgym.judge.store import verdicts_dir
from tests.conftest import run_cli, run_dirs, run_files, write_suite

CASES = """
    from skillgym import execution_case, prompt_case

    with prompt_case("lazy") as c:
        c.category("explain")
        c.prompt("What does yield do in Python?")
        c.expect_skill(None)
        with c.step("explains") as s:
            s.must_mention("yield")
            s.judge("the function becomes lazy")
        c.rubric("lazy generator", points=2)

    with execution_case("report") as c:
        c.category("files")
        c.task("Write report.md naming the hottest month")
        c.workspace("plain")
        with c.assertions() as a:
            a.judge("report.md names July as the hottest month", files=["report.md"])
"""

LAZY = "In Python, with yield the function becomes lazy: a generator."
SUITE = {
    "suite.py": """
        from skillgym import judged_by, skill, workspace_preset

        skill("pyhelp", "skills/pyhelp")
        workspace_preset("plain")
        judged_by("stub:word-match", min_kappa=0.5)
    """,
    "skills/pyhelp/SKILL.md": "---\nname: pyhelp\ndescription: Explains Python.\n---\nGenerators are lazy.\n",
    "cases.py": CASES,
    "stubs/lazy/none.md": "Yield returns a value.",
    "stubs/lazy/preloaded.md": LAZY,
    "stubs/report.jsonl": (
        '{"type": "tool_call", "name": "Bash", "command": "echo July was the hottest month. > report.md", '
        '"exit_code": 0}\n{"type": "result", "text": "Wrote report.md"}\n'
    ),
}


def _suite(tmp_path: Path, **extra: str) -> Path:
    return write_suite(tmp_path / "evals", {**SUITE, **extra})


def _run(tmp_path: Path, *args: str, output: str = "runs") -> tuple[int, str, list[dict[str, Any]]]:
    done = run_cli(
        "run", "--suite", "evals", "--provider", "stub", "--output", output, *args, cwd=tmp_path, timeout=300
    )
    results = [json.loads(p.read_text()) for p in run_files(tmp_path / output, "trials/**/result.json")]
    return done.returncode, done.stdout + done.stderr, results


def _by_case(results: list[dict[str, Any]], case: str, condition: str = "none") -> dict[str, Any]:
    (found,) = [r for r in results if r["id"]["case_id"] == case and r["id"]["condition"] == condition]
    return found


def test_judged_checks_without_any_judge_are_refused_before_the_run(tmp_path: Path) -> None:
    write_suite(
        tmp_path / "evals",
        {**SUITE, "suite.py": 'from skillgym import workspace_preset\nworkspace_preset("plain")\n'},
    )
    code, output, results = _run(tmp_path, "--condition", "none")
    assert code == 2 and results == []
    assert "2 planned case(s) have judged checks (lazy, report) and the run has no judge" in output
    assert "--judge PROVIDER:MODEL" in output


def test_the_stub_judge_grades_every_lane_and_the_report_shows_the_judge(tmp_path: Path) -> None:
    _suite(tmp_path)
    code, output, results = _run(
        tmp_path, "--condition", "none", "--condition", "preloaded", "--judge", "stub"
    )
    assert code == 1, output  # the baseline's answer is not lazy
    lazy = _by_case(results, "lazy", "preloaded")
    assert lazy["status"] == "passed"
    checks = {c["id"]: c for c in lazy["grade"]["checks"] if c["kind"] == "judge"}
    assert checks["explains-judge"]["evidence"] == LAZY
    assert {i["name"]: i["score"] for i in lazy["grade"]["items"]}["rubric"] == 2.0
    baseline = _by_case(results, "lazy")
    assert baseline["status"] == "failed"
    assert "required judged check 'explains-judge' failed" in baseline["grade"]["reasons"][0]
    report = _by_case(results, "report")
    assert report["status"] == "passed", report
    (run_dir,) = run_dirs(tmp_path / "runs")
    markdown = (run_dir / "report.md").read_text()
    assert "## Judge" in markdown and "judged checks in 4 trials" in markdown
    assert json.loads((run_dir / "report.json").read_text())["judge"]["checks"] == 4
    assert "judged checks are graded by stub" in output


def test_recorded_verdicts_replay_offline_and_a_missing_one_is_a_grader_error(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    code, output, _ = _run(
        tmp_path, "--condition", "preloaded", "--judge", "stub:word-match", "--judge-record"
    )
    assert code == 0, output
    recorded = sorted(verdicts_dir(suite).glob("*.json"))
    assert len(recorded) == 3  # two checks and a rubric
    entry = json.loads(recorded[0].read_text())
    assert entry["judge"] == "stub:word-match" and entry["raw_answer"].startswith("{")
    # No --judge: the suite's judged_by judge is replayed from what was recorded; nobody is asked.
    code, output, results = _run(tmp_path, "--condition", "preloaded", output="replayed")
    assert code == 0, output
    (run_dir,) = run_dirs(tmp_path / "replayed")
    judge_file = json.loads((run_dir / _by_case(results, "lazy", "preloaded")["paths"]["judge"]).read_text())
    assert {r["source"] for r in judge_file["records"]} == {"cassette"}
    assert "graded by stub:word-match (recorded verdicts only)" in output
    # The baseline was never recorded: its verdicts are missing, which is never a pass.
    code, output, results = _run(tmp_path, "--condition", "none", "--case", "lazy", output="missing")
    (result,) = results
    assert result["status"] == "errored" and result["error_class"] == "grader-error"
    assert "no recorded verdict of stub:word-match" in result["error_message"]
    assert "--judge stub:word-match --judge-record" in result["error_message"]


def test_calibration_figures_on_known_answers_and_the_run_s_warning(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    labelled = tmp_path / "labelled.jsonl"
    lines = [
        # The stub passes an expectation when every content word of it occurs in the material.
        {"id": "p1", "expectation": "names the port", "material": "listening on port 3000", "label": "pass"},
        {
            "id": "p2",
            "expectation": "waits for READY",
            "material": "it waits for READY> before the tests",
            "label": "pass",
        },
        {
            "id": "p3",
            "expectation": "cleans up the session",
            "material": "kill-session -t app",
            "label": "pass",
        },
        {"id": "f1", "expectation": "names the port", "material": "the server started", "label": "fail"},
        {"id": "f2", "expectation": "avoids sleep", "material": "avoids nothing: sleep 5", "label": False},
    ]
    labelled.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = run_cli(
        "judge", "check", str(labelled), "--judge", "stub:word-match", "--suite", "evals", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    # Right: p1, p2 pass and f1 fails. Wrong: p3 fails (no word in common), f2 passes (both words occur).
    assert "accuracy 60.0%" in done.stdout
    assert "Cohen's kappa 0.167" in done.stdout
    assert "human pass           2           1          0" in done.stdout
    assert "human fail           1           1          0" in done.stdout
    assert "  p3: human pass, judge fail — cleans up the session" in done.stdout
    assert "  f2: human fail, judge pass — avoids sleep" in done.stdout
    stored = json.loads((suite / "judge" / "calibration.json").read_text())
    (entry,) = stored["entries"]
    assert entry["labelled"] == "../labelled.jsonl" and entry["kappa"] == 0.1667
    # The suite asks for kappa >= 0.5: a run with this judge says its calibration is too low.
    _, output, _ = _run(tmp_path, "--condition", "preloaded", "--judge", "stub:word-match")
    assert "warning: judge stub:word-match agrees with human labels below the suite's min_kappa 0.5" in output


def test_a_bad_labelled_file_names_the_line_and_the_fix(tmp_path: Path) -> None:
    _suite(tmp_path)
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text(
        '{"expectation": "x", "material": "y", "label": "pass"}\n{"expectation": "x", "label": "ok"}\n'
    )
    done = run_cli("judge", "check", str(labelled), "--judge", "stub", "--suite", "evals", cwd=tmp_path)
    assert done.returncode == 2
    assert f"{labelled}:2: $.material must be a non-empty string" in done.stderr


def test_pairwise_with_the_stub_is_order_blind_and_reported(tmp_path: Path) -> None:
    _suite(tmp_path)
    code, output, _ = _run(
        tmp_path,
        "--case",
        "lazy",
        "--condition",
        "none",
        "--condition",
        "preloaded",
        "--trials",
        "3",
        "--judge",
        "stub",
        "--compare-conditions",
        "judge",
    )
    assert code == 1, output
    (run_dir,) = run_dirs(tmp_path / "runs")
    pairwise = json.loads((run_dir / "pairwise.json").read_text())
    (row,) = pairwise["cases"]
    # The stub prefers the answer holding more of the task's words, whatever the order: no disagreement.
    assert (row["wins"], row["ties"], row["losses"], row["swap_disagreements"]) == (3, 0, 0, 0)
    assert [p["first_order"] for p in row["pairs"]] == ["condition"] * 3
    (condition,) = pairwise["conditions"]
    assert condition["position_bias"] == 0.0 and condition["verdict"] == "inconclusive"  # one case only
    assert "preloaded: 1 cases, net preference +1.00" in output
    assert "### Blind pairwise comparison (judge stub, seed 0)" in (run_dir / "report.md").read_text()
    # Rebuilding the report from the event log keeps the comparison.
    assert run_cli("report", str(run_dir), cwd=tmp_path).returncode == 0
    assert "pairwise" in json.loads((run_dir / "report.json").read_text())["judge"]


def test_judge_flag_mistakes_are_usage_errors(tmp_path: Path) -> None:
    _suite(tmp_path)
    code, output, _ = _run(tmp_path, "--condition", "preloaded", "--judge", "nosuch:model")
    assert code == 2 and "unknown provider 'nosuch'" in output
    code, output, _ = _run(tmp_path, "--condition", "preloaded", "--judge", "gemini:flash")
    assert code == 2 and "provider 'gemini' cannot judge: it has no text-only mode" in output
    code, output, _ = _run(tmp_path, "--judge", "replay", "--judge-record")
    assert code == 2 and "--judge-record saves a real judge's answers" in output
    code, output, _ = _run(tmp_path, "--judge", "stub", "--judge-cache", "x", "--no-judge-cache")
    assert code == 2 and "--judge-cache and --no-judge-cache disagree" in output


def test_a_resumed_run_grades_with_the_judge_it_started_with(tmp_path: Path) -> None:
    _suite(tmp_path)
    code, output, _ = _run(
        tmp_path, "--case", "lazy", "--condition", "none", "--condition", "preloaded", "--judge", "stub"
    )
    assert code == 1, output
    (run_dir,) = run_dirs(tmp_path / "runs")
    # As if stopped before the last trial finished: its trial.finish and the run.finish are gone.
    events = (run_dir / "events.jsonl").read_text().splitlines()
    last_finish = max(i for i, line in enumerate(events) if '"type":"trial.finish"' in line.replace(" ", ""))
    (run_dir / "events.jsonl").write_text("\n".join(events[:last_finish]) + "\n")
    resumed = run_cli("run", "--resume", str(run_dir), cwd=tmp_path, timeout=300)
    assert resumed.returncode == 1, resumed.stdout + resumed.stderr
    assert "judged checks are graded by stub" in resumed.stderr
    results = [json.loads(p.read_text()) for p in sorted(run_dir.glob("trials/**/result.json"))]
    assert all(r["paths"]["judge"] for r in results) and len(results) == 2
