"""Reading events.jsonl back: today's schema, and a schema-1 run as an earlier skillgym wrote it."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from skillgym.eventlog import EventLogError, decode_event, mend_tail, read_run_log
from skillgym.events import EVENT_SCHEMA, TrialStart, event_encoder
from skillgym.identity import TrialId, trial_id
from skillgym.loader import load_suite
from skillgym.results import RESULT_SCHEMA
from tests.conftest import REPO, run_cli

# Written by skillgym with event schema 1 (`skillgym run --lane prompt --case wait-for-output --condition none
# --condition self-load --provider replay --replay-source claude/scripted` on the example suite), its
# machine's paths and the case's fingerprint replaced by placeholders.
SCHEMA_1 = Path(__file__).parent / "data" / "run-schema-1" / "events.jsonl"
NONE = "prompt/wait-for-output/none/replay/trial-1"
SELF_LOAD = "prompt/wait-for-output/self-load/replay/trial-1"


def _schema_1_run(tmp_path: Path, *, lines: int | None = None) -> Path:
    """The stored run in ``tmp_path/runs/<id>``, its first ``lines`` lines only (a run that was killed)."""
    suite = REPO / "evals"
    # The case may have changed since the log was written: what is under test is reading the old shape,
    # so its trials count as the case as it is now (--resume keeps them only while the fingerprint matches).
    (case,) = (c for c in load_suite(suite).cases if c.id == "wait-for-output")
    text = SCHEMA_1.read_text()
    run_id = json.loads(text.splitlines()[0])["run_id"]
    run_dir = tmp_path / "runs" / run_id
    run_dir.mkdir(parents=True)
    for placeholder, value in (
        ("@RUN_DIR@", str(run_dir)),
        ("@OUTPUT@", str(run_dir.parent)),
        ("@SUITE_DIR@", str(suite)),
        ("@FINGERPRINT@", case.fingerprint),
    ):
        text = text.replace(placeholder, value)
    kept = text.splitlines(keepends=True)[:lines]
    (run_dir / "events.jsonl").write_text("".join(kept))
    return run_dir


def test_a_schema_1_log_reads_as_todays_events(tmp_path: Path) -> None:
    log = read_run_log(_schema_1_run(tmp_path))
    assert log.start.schema == 1
    assert [(r.id.key, r.status) for r in log.results] == [(SELF_LOAD, "passed"), (NONE, "failed")]
    first = log.results[0]
    assert first.schema == RESULT_SCHEMA
    assert first.id.group == ("prompt", "wait-for-output", "self-load", "replay")
    assert (first.id.trial, first.model, first.category) == (1, "scripted", "trigger")
    assert first.paths.dir == f"trials/{SELF_LOAD}"
    assert log.finish is not None and log.finish.exit_code == 1


def test_report_rebuilds_a_schema_1_run(tmp_path: Path) -> None:
    run_dir = _schema_1_run(tmp_path)
    proc = run_cli("report", str(run_dir), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((run_dir / "report.json").read_text())
    assert report["counts"] == {"total": 2, "passed": 1, "failed": 1, "errored": 0}
    assert [f["key"] for f in report["failures"]] == [NONE]
    assert {(c["condition"], c["passed"]) for c in report["cases"]} == {("none", 0), ("self-load", 1)}
    assert "wait-for-output" in (run_dir / "report.md").read_text()


def test_resume_continues_a_schema_1_run_in_todays_schema(tmp_path: Path) -> None:
    # Killed after its first trial finished: run.start, lane.start, two case.starts, two trial.starts and
    # the self-load trial's trial.finish.
    run_dir = _schema_1_run(tmp_path, lines=7)
    before = read_run_log(run_dir)
    assert [r.id.key for r in before.results] == [SELF_LOAD] and before.finish is None
    proc = run_cli("run", "--resume", str(run_dir), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # the none trial fails, as it did when the run was whole
    log = read_run_log(run_dir)
    assert log.start.schema == EVENT_SCHEMA and log.start.resumed
    assert [(r.id.key, r.status) for r in log.results] == [(SELF_LOAD, "passed"), (NONE, "failed")]
    assert log.results[0] == before.results[0]  # kept, not run again: its folder was never made here
    assert not (run_dir / "trials" / "prompt" / "wait-for-output" / "self-load").exists()
    assert (
        run_dir / "trials" / "prompt" / "wait-for-output" / "none" / "replay" / "trial-1" / "result.json"
    ).is_file()
    report = json.loads((run_dir / "report.json").read_text())
    assert report["counts"] == {"total": 2, "passed": 1, "failed": 1, "errored": 0}


def test_a_log_of_an_unknown_schema_is_refused_naming_the_ones_read(tmp_path: Path) -> None:
    run_dir = _schema_1_run(tmp_path, lines=1)
    start = json.loads((run_dir / "events.jsonl").read_text())
    (run_dir / "events.jsonl").write_text(json.dumps({**start, "schema": 99}) + "\n")
    with pytest.raises(EventLogError, match=r"event schema 99 is not one this skillgym reads \(1, 2\)"):
        read_run_log(run_dir)


def test_a_schema_1_event_is_damage_in_a_schema_2_log() -> None:
    old = SCHEMA_1.read_text().replace("@FINGERPRINT@", "f").splitlines()[3].encode()
    with pytest.raises(msgspec.ValidationError):
        decode_event(old)
    upgraded = decode_event(old, legacy=True)
    assert isinstance(upgraded, TrialStart) and upgraded.id.key == NONE


def test_mending_keeps_a_whole_schema_1_last_line(tmp_path: Path) -> None:
    run_dir = _schema_1_run(tmp_path, lines=7)
    path = run_dir / "events.jsonl"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # killed just before the newline
    mend_tail(run_dir)
    assert [r.id.key for r in read_run_log(run_dir).results] == [SELF_LOAD]
    assert path.read_bytes().endswith(b"\n")


def test_a_trial_id_is_its_key_and_a_key_that_disagrees_is_refused() -> None:
    made = trial_id(lane="prompt", case_id="a", condition="none", provider="stub", trial=3, fingerprint="f")
    assert made.key == "prompt/a/none/stub/trial-3"
    assert msgspec.json.decode(event_encoder.encode(made), type=TrialId) == made
    wrong = msgspec.json.encode({**msgspec.to_builtins(made), "trial": 4})
    with pytest.raises(
        msgspec.ValidationError, match="trial key 'prompt/a/none/stub/trial-3' does not match"
    ):
        msgspec.json.decode(wrong, type=TrialId)
