"""Acceptance: token snapshots via `skillgym run --snapshot-*` and `skillgym snapshots`, as subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.conftest import REPO, write_suite
from tests.snapshots.support import Project, case_source


def _entries(path: Path) -> dict[str, dict[str, object]]:
    doc = tomllib.loads(path.read_text())
    return {f"{e['lane']}/{e['case']}/{e['condition']}": e for e in doc["entry"]}


def test_update_then_check_with_the_same_tokens_is_unchanged(project: Project) -> None:
    project.cases(case_source("calm"), case_source("busy"))
    project.tokens(calm=120, busy=300)
    updated = project.run("--snapshot-update")
    assert updated.returncode == 0, updated.stderr
    assert "token snapshots snapshots/command/default.toml: 2 new (written)" in updated.stdout
    entries = _entries(project.snapshot)
    assert entries["prompt/calm/none"]["median"] == {"input": 110, "output": 10, "total": 120}
    assert entries["prompt/busy/none"]["trials"] == 1
    finish = project.finish()
    assert (finish["exit_code"], finish["snapshots"]["step"], finish["notes"]) == (0, "update", [])
    (file,) = finish["snapshots"]["files"]
    assert (file["file"], file["new"], file["written"]) == ("snapshots/command/default.toml", 2, True)
    assert finish["tokens"]["totals"]["total"] == 420
    before = project.snapshot.read_bytes()

    again = project.run()
    assert again.returncode == 0, again.stderr
    check = project.cli("snapshots", "check")
    assert check.returncode == 0, check.stderr
    # Nothing changed: the run used and one summary line; -v lists every entry.
    assert check.stdout.splitlines()[1:] == ["token snapshots (snapshots, threshold 20%): 2 unchanged"]
    verbose = project.cli("snapshots", "check", "-v")
    lines = verbose.stdout.splitlines()
    assert any(line.startswith("unchanged") and "prompt/calm/none" in line for line in lines)
    assert any(line.startswith("unchanged") and "prompt/busy/none" in line for line in lines)
    assert "token snapshots (snapshots, threshold 20%): 2 unchanged" in verbose.stdout
    # Accepting the same figures from another run changes no byte (the entry keeps its first run id).
    update = project.cli("snapshots", "--update")
    assert update.returncode == 0, update.stderr
    assert "2 unchanged (no change)" in update.stdout
    assert project.snapshot.read_bytes() == before


def test_thirty_percent_more_at_threshold_20_is_regressed_and_the_exit_code_stays(project: Project) -> None:
    project.cases(case_source("calm"), case_source("busy"))
    project.tokens(calm=100, busy=100)
    assert project.run("--snapshot-update").returncode == 0
    project.tokens(calm=130, busy=110)
    proc = project.run("--snapshot-check", "--snapshot-threshold", "20", "--reporter", "junit")
    assert proc.returncode == 0, proc.stderr
    assert "2 trials: 2 passed, 0 failed, 0 errored" in proc.stdout
    regressed = [line for line in proc.stdout.splitlines() if line.startswith("token snapshot regressed")]
    assert len(regressed) == 1
    assert "prompt/calm/none" in regressed[0]
    assert "median total 130 vs 100 per trial (+30.0%, threshold 20%" in regressed[0]
    assert "1 regressed, 1 unchanged" in proc.stdout
    run_dir = project.latest()
    finish = project.finish(run_dir)
    assert finish["exit_code"] == 0
    check = finish["snapshots"]
    assert (check["step"], check["counts"]) == ("check", {"regressed": 1, "unchanged": 1})
    (row,) = [r for r in check["rows"] if r["status"] == "regressed"]
    assert (row["case_id"], row["current_total"], row["snapshot_total"]) == ("calm", 130, 100)
    assert any("token regression: prompt/calm/none" in n for n in finish["notes"])
    md = (run_dir / "report.md").read_text()
    assert "**Token regressions** against the snapshots: `prompt/calm/none` (+30%)" in md
    assert "| regressed | prompt | calm | none | command/default | 130 | 100 | +30.0% | 20% |" in md
    report = json.loads((run_dir / "report.json").read_text())
    assert report["snapshots"]["counts"] == {"regressed": 1, "unchanged": 1}
    assert "token regression: prompt/calm/none" in (run_dir / "junit.xml").read_text()
    for result in run_dir.glob("trials/**/result.json"):
        assert json.loads(result.read_text())["status"] == "passed"
    # The same verdict afterwards, from the files alone, and no agent is called.
    project.tokens()
    later = project.cli("snapshots", "check", "--threshold", "20")
    assert later.returncode == 0
    assert "regressed  prompt/calm/none" in later.stdout
    assert "unchanged  prompt/busy/none" not in later.stdout  # listed with -v only
    assert "1 regressed, 1 unchanged" in later.stdout


def test_snapshot_enforce_makes_a_regression_fail_the_run(project: Project) -> None:
    project.cases(case_source("calm"))
    project.tokens(calm=100)
    assert project.run("--snapshot-update").returncode == 0
    fine = project.run("--snapshot-enforce")
    assert fine.returncode == 0, fine.stdout + fine.stderr
    project.tokens(calm=130)
    proc = project.run("--snapshot-check", "--snapshot-enforce")
    assert proc.returncode == 1, proc.stderr
    assert "1 trials: 1 passed, 0 failed, 0 errored" in proc.stdout
    assert "token regressions are enforced: exit code 1" in proc.stdout
    finish = project.finish()
    assert (finish["exit_code"], finish["snapshots"]["enforce"]) == (1, True)
    assert [n.split(" (")[0] for n in finish["notes"]] == ["token regression: prompt/calm/none"]
    assert project.cli("snapshots", "check").returncode == 0  # enforcement is opt-in here too
    assert project.cli("snapshots", "check", "--enforce").returncode == 1


def test_a_changed_case_is_stale_not_compared_and_update_replaces_it(project: Project) -> None:
    project.cases(case_source("calm"))
    project.tokens(calm=100)
    assert project.run("--snapshot-update").returncode == 0
    old = _entries(project.snapshot)["prompt/calm/none"]["fingerprint"]
    project.cases(case_source("calm", variant=" and then run the tests"))
    project.tokens(calm=900)
    proc = project.run("--snapshot-check")
    assert proc.returncode == 0, proc.stderr
    assert "token snapshot stale" in proc.stdout
    assert "regressed" not in proc.stdout.replace("0 regressed", "")
    row = project.finish()["snapshots"]["rows"][0]
    assert row["status"] == "stale"
    assert row["change_percent"] is None
    assert row["snapshot_fingerprint"] == old != row["fingerprint"]
    assert "1 updated" in project.cli("snapshots", "update").stdout
    entry = _entries(project.snapshot)["prompt/calm/none"]
    assert entry["fingerprint"] == row["fingerprint"]
    assert entry["median"]["total"] == 900  # type: ignore[index]


def test_runs_with_1_and_5_trials_compare_by_per_trial_medians(project: Project) -> None:
    project.cases(case_source("calm"))
    project.tokens(calm=[100, 400, 100, 90, 110])  # mean 160, median 100
    assert project.run("--trials", "5", "--concurrency", "1", "--snapshot-update").returncode == 0
    entry = _entries(project.snapshot)["prompt/calm/none"]
    assert entry["trials"] == 5
    assert entry["median"]["total"] == 100  # type: ignore[index]
    assert (entry["min"]["total"], entry["max"]["total"]) == (90, 400)  # type: ignore[index]
    project.tokens(calm=105)
    one = project.run("--trials", "1", "--snapshot-check")
    assert one.returncode == 0, one.stderr
    row = project.finish()["snapshots"]["rows"][0]
    assert (row["status"], row["trials"], row["snapshot_trials"]) == ("unchanged", 1, 5)
    assert row["change_percent"] == 5.0
    # And the other way round: a 1-trial snapshot against 5 noisy trials.
    assert project.cli("snapshots", "update").returncode == 0
    project.tokens(calm=[400, 100, 105, 95, 500])
    five = project.run("--trials", "5", "--concurrency", "1", "--snapshot-check")
    assert five.returncode == 0, five.stderr
    row = project.finish()["snapshots"]["rows"][0]
    assert (row["status"], row["current_total"], row["snapshot_total"]) == ("unchanged", 105, 105)


def test_a_case_budget_overrides_the_threshold(project: Project) -> None:
    project.cases(case_source("calm", budget=50), case_source("busy"))
    project.tokens(calm=100, busy=100)
    assert project.run("--snapshot-update").returncode == 0
    project.tokens(calm=130, busy=130)
    proc = project.run("--snapshot-check")
    rows = {r["case_id"]: r for r in project.finish()["snapshots"]["rows"]}
    assert (rows["calm"]["status"], rows["calm"]["threshold_percent"]) == ("unchanged", 50)
    assert (rows["busy"]["status"], rows["busy"]["threshold_percent"]) == ("regressed", 20)
    assert proc.returncode == 0


def test_a_corrupt_file_is_a_clear_error_and_is_left_untouched(project: Project) -> None:
    project.cases(case_source("calm"))
    project.tokens(calm=100)
    assert project.run().returncode == 0
    project.snapshot.parent.mkdir(parents=True)
    broken = b'schema = 1\nprovider = "command"\nmodel = "default"\n\n[[entry]\nlane = "prompt"\n'
    project.snapshot.write_bytes(broken)
    for args in (("snapshots", "update"), ("snapshots", "check")):
        proc = project.cli(*args)
        assert proc.returncode == 2, proc.stdout
        assert "snapshots/command/default.toml:5: not valid TOML" in proc.stderr
        assert "left untouched" in proc.stderr
        assert "Traceback" not in proc.stderr
        assert project.snapshot.read_bytes() == broken
    inline = project.run("--snapshot-update", "--output", "other-runs")
    assert inline.returncode == 2
    assert "snapshots/command/default.toml:5" in inline.stderr
    assert not (project.root / "other-runs").exists()  # stopped before any trial spent tokens
    assert project.snapshot.read_bytes() == broken

    future = b'# from the future\nschema = 2\nprovider = "command"\nmodel = "default"\n'
    project.snapshot.write_bytes(future)
    proc = project.cli("snapshots", "update")
    assert proc.returncode == 2
    assert "snapshots/command/default.toml:2: schema 2 is not the schema 1" in proc.stderr
    assert project.snapshot.read_bytes() == future


def test_a_snapshot_file_that_cannot_be_written_at_the_end_is_exit_2_and_the_results_stand(
    project: Project,
) -> None:
    project.cases(case_source("calm"))
    project.tokens(calm=100)
    project.snapshot.parent.parent.mkdir()
    project.snapshot.parent.write_text("a file where the provider's folder goes\n")  # passes the preflight
    proc = project.run("--snapshot-update")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "1 trials: 1 passed, 0 failed, 0 errored" in proc.stdout
    assert "skillgym: error: token snapshots: " in proc.stderr
    assert "Traceback" not in proc.stderr
    run_dir = project.latest()
    finish = project.finish(run_dir)
    assert (finish["exit_code"], finish["snapshots"]["step"]) == (2, "error")
    assert finish["snapshots"]["message"] in proc.stderr
    assert finish["notes"] == [f"token snapshots: {finish['snapshots']['message']}"]
    assert finish["tokens"]["totals"]["total"] == 100
    assert json.loads((run_dir / "report.json").read_text())["counts"]["passed"] == 1
    assert project.cli("report", str(run_dir)).returncode == 0  # the log rebuilds the report as it was


def test_two_concurrent_update_processes_both_land(project: Project) -> None:
    names = [f"case{i}" for i in range(4)]
    project.cases(*(case_source(name) for name in names))
    project.tokens(**{name: 100 + i for i, name in enumerate(names)})
    runs = []
    for name in names:
        assert project.run("--case", name, "--output", f"runs-{name}").returncode == 0
        runs.append(project.runs(f"runs-{name}")[0])
    env = {"PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "skillgym", "snapshots", "update", "--run", str(run)],
            cwd=project.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for run in runs
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, out + err
    entries = _entries(project.snapshot)
    assert sorted(entries) == [f"prompt/{name}/none" for name in names]
    assert [entries[f"prompt/{n}/none"]["median"]["total"] for n in names] == [100, 101, 102, 103]  # type: ignore[index]
    assert not list(project.snapshot.parent.glob(".*.tmp"))


def test_orphaned_entries_are_reported_and_removed_and_missing_usage_keeps_the_entry(
    project: Project,
) -> None:
    project.cases(case_source("calm"), case_source("gone"), case_source("kept"))
    project.tokens(calm=100, gone=100, kept=100)
    assert project.run("--snapshot-update").returncode == 0
    project.cases(case_source("calm"), case_source("kept"))
    project.tokens(calm=None)
    proc = project.run("--case", "calm", "--snapshot-check")
    assert proc.returncode == 0, proc.stderr
    assert "token snapshot orphaned  prompt/gone/none" in proc.stdout
    check = project.finish()["snapshots"]
    assert check["counts"] == {"missing-usage": 1, "orphaned": 1}
    assert check["not_run"] == 1  # `kept` still exists: not compared, not orphaned
    update = project.cli("snapshots", "update")
    assert "1 removed (orphaned), 1 kept (not run), 1 without usage (kept)" in update.stdout
    entries = _entries(project.snapshot)
    assert sorted(entries) == ["prompt/calm/none", "prompt/kept/none"]
    assert entries["prompt/calm/none"]["median"]["total"] == 100  # type: ignore[index]


def test_token_usage_files_and_the_token_section(project: Project) -> None:
    project.cases(case_source("calm", budget=15), case_source("quiet"))
    project.tokens(calm=[100, 300], quiet=None)
    proc = project.run("--trials", "2", "--concurrency", "1")
    assert proc.returncode == 0, proc.stderr
    run_dir = project.latest()
    trials = run_dir / "trials/prompt/calm/none/command"
    one, two = (json.loads((trials / f"trial-{n}/token-usage.json").read_text()) for n in (1, 2))
    assert (one["total"], two["total"]) == (100, 300)
    assert one["schema"] == 2 and one["id"]["key"] == "prompt/calm/none/command/trial-1"
    assert one["id"]["provider"] == "command" and one["model"] is None and one["id"]["trial"] == 1
    assert len(one["id"]["fingerprint"]) == 64 and one["token_budget_percent"] == 15
    assert one["cache_read"] is None  # not reported, not guessed
    assert not (run_dir / "trials/prompt/quiet/none/command/trial-1/token-usage.json").exists()
    tokens = json.loads((run_dir / "report.json").read_text())["tokens"]
    assert tokens["totals"] == {
        "trials": 2,
        "missing": 2,
        "input": 380,
        "output": 20,
        "cache_read": None,
        "cache_write": None,
        "reasoning": None,
        "total": 400,
    }
    rows = {r["case_id"]: r for r in tokens["rows"]}
    assert rows["calm"]["total"]["median"] == 200
    assert (rows["calm"]["total"]["low"], rows["calm"]["total"]["high"]) == (100, 300)
    assert (rows["quiet"]["trials"], rows["quiet"]["missing"], rows["quiet"]["total"]) == (0, 2, None)
    assert project.finish(run_dir)["tokens"] == tokens
    md = (run_dir / "report.md").read_text()
    assert "## Token usage" in md
    assert (
        "| prompt | calm | none | command | default | 2 | 190 (90-290) | 10 (10-10) | - | 200 (100-300) |"
        in md
    )
    # Each table under the sentence that says what its cells are: sums, then medians per trial.
    section = md.split("## Token usage\n", 1)[1]
    assert section.index("Totals over the run and per lane:") < section.index("| **all** |")
    assert (
        section.index("| **all** |")
        < section.index("per trial: median (min-max)")
        < section.index("| calm |")
    )


def test_no_token_section_without_usage(project: Project) -> None:
    project.cases(case_source("quiet"))
    project.tokens(quiet=None)
    proc = project.run("--snapshot-check")
    assert proc.returncode == 0
    run_dir = project.latest()
    assert json.loads((run_dir / "report.json").read_text())["tokens"] is None
    assert "## Token usage" not in (run_dir / "report.md").read_text()
    finish = project.finish(run_dir)
    assert finish["tokens"] is None
    assert finish["snapshots"]["counts"] == {"missing-usage": 1}
    assert "token snapshots (snapshots, threshold 20%): 1 missing-usage" in proc.stdout
    assert not project.snapshot.exists()
    update = project.cli("snapshots", "update")
    assert update.returncode == 1  # nothing could be recorded
    assert not project.snapshot.exists()  # nothing measured: no empty file


def test_no_run_yet_says_so_or_runs_the_suite_first(project: Project) -> None:
    project.cases(case_source("calm"))
    proc = project.cli("snapshots", "check")
    assert proc.returncode == 2
    assert "no run of the suite evals under runs/ to take token counts from" in proc.stderr
    # With no cassette to replay, the suite's run fails, and snapshots says how to run it otherwise.
    failed = project.cli("snapshots", "--update", "--run-if-missing")
    assert failed.returncode == 2
    assert "no cassettes under" in failed.stderr
    assert "runs the suite with its default provider only" in failed.stderr
    cassette = project.root / "evals/cassettes/rec/m1/prompt/calm/none.jsonl"
    cassette.parent.mkdir(parents=True)
    header = {"cassette": 1, "provider": "rec", "model": "m1", "format": "skillgym-trace", "lane": "prompt"}
    header |= {"case": "calm", "condition": "none", "trial": None, "fingerprint": "", "recorded_at": "now"}
    events = [{"type": "usage", "input": 40, "output": 2}, {"type": "result", "text": "I would wait"}]
    cassette.write_text("\n".join(json.dumps(e) for e in [header, *events]) + "\n")
    first = project.cli("snapshots", "--update", "--run-if-missing")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "no run under runs/ yet: running the suite first with the default provider" in first.stderr
    written = list((project.root / "snapshots").glob("replay/*.toml"))
    assert len(written) == 1
    (entry,) = tomllib.loads(written[0].read_text())["entry"]
    assert entry["median"]["total"] == 42


def test_the_newest_run_of_this_suite_is_used_not_another_suite_s(project: Project) -> None:
    project.cases(case_source("calm"))
    project.tokens(calm=120)
    assert project.run().returncode == 0
    mine = project.latest()
    other = project.root / "other"
    write_suite(other, {"cases.py": "from skillgym import prompt_case\n\n" + case_source("busy")})
    assert project.run("--suite", str(other)).returncode == 0
    update = project.cli("snapshots", "update")
    assert update.returncode == 0, update.stdout + update.stderr
    assert update.stdout.splitlines()[0] == f"run {mine.name} ({Path('runs') / mine.name})"
    assert set(_entries(project.snapshot)) == {"prompt/calm/none"}
    # The snapshot folder is locked while it is written; no lock file is left beside the snapshots.
    assert sorted(p.name for p in project.snapshot.parent.iterdir()) == ["default.toml"]
    alone = project.cli("snapshots", "check", "--suite", "nowhere")
    assert alone.returncode == 2
    assert "no run of the suite nowhere under runs/" in alone.stderr
    assert "is of " in alone.stderr and str(other.resolve()) in alone.stderr


def test_an_update_that_records_nothing_says_why_and_exits_1(project: Project) -> None:
    project.cases(case_source("calm"))
    project.tokens(calm=None)  # the agent reports no usage
    assert project.run().returncode == 0
    update = project.cli("snapshots", "update")
    assert update.returncode == 1, update.stdout + update.stderr
    assert "no trial of run" in update.stderr and "reported token usage" in update.stderr
    assert not project.snapshot.exists()
    assert not list((project.root / "snapshots").glob("**/.*.lock"))


def test_flag_mistakes_are_usage_errors(project: Project) -> None:
    project.cases(case_source("calm"))
    for args, message in (
        (("--snapshot-update", "--snapshot-enforce"), "--snapshot-enforce"),
        (("--snapshot-threshold", "5"), "need --snapshot-check or --snapshot-update"),
        (("--snapshot-check", "--snapshot-threshold", "-1"), "at least 0"),
        (("--snapshot-check", "--snapshot-update"), "not allowed with"),
    ):
        proc = project.run(*args)
        assert proc.returncode == 2, args
        assert message in proc.stderr, (args, proc.stderr)
    assert not (project.root / "runs").exists()
    assert project.cli("snapshots").returncode == 2
    assert project.cli("snapshots", "update", "--enforce").returncode == 2


def test_check_json_output(project: Project) -> None:
    project.cases(case_source("calm"))
    project.tokens(calm=100)
    assert project.run().returncode == 0
    proc = project.cli("snapshots", "check", "--json")
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert doc["counts"] == {"new": 1}
    assert doc["rows"][0]["file"] == "snapshots/command/default.toml"


def test_without_the_suite_budgets_come_from_the_run_and_orphans_are_not_guessed(project: Project) -> None:
    project.cases(case_source("calm", budget=50))
    project.tokens(calm=100)
    assert project.run("--snapshot-update").returncode == 0
    project.tokens(calm=130)
    assert project.run().returncode == 0
    (project.root / "evals/cases.py").rename(project.root / "evals/_moved.py")
    (project.root / "evals/broken.py").write_text("raise RuntimeError('half-edited')\n")
    proc = project.cli("snapshots", "check", "-v")
    assert proc.returncode == 0, proc.stderr
    assert "unchanged  prompt/calm/none" in proc.stdout
    assert "threshold 50%" in proc.stdout  # as the trial recorded it in token-usage.json
    assert "did not load" in proc.stdout and "orphaned entries are not looked for" in proc.stdout
