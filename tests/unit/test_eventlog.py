"""Reading events.jsonl back: today's schema, and runs of schemas 1 and 2 as earlier skillgyms wrote them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from skillgym.eventlog import EventLogError, decode_event, mend_tail, read_run_log
from skillgym.events import EVENT_SCHEMA, RunFinish, TrialFinish, TrialStart, event_encoder
from skillgym.identity import TrialId, trial_id
from skillgym.loader import load_suite
from skillgym.results import RESULT_SCHEMA
from skillgym.snapshots.model import SnapshotCheck, SnapshotUpdate
from skillgym.usage import TokenReport
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
    with pytest.raises(EventLogError, match=r"event schema 99 is not one this skillgym reads \(1, 2, 3, 4\)"):
        read_run_log(run_dir)


def test_a_schema_1_event_is_damage_in_a_log_of_todays_schema() -> None:
    old = SCHEMA_1.read_text().replace("@FINGERPRINT@", "f").splitlines()[3].encode()
    with pytest.raises(msgspec.ValidationError):
        decode_event(old)
    upgraded = decode_event(old, schema=1)
    assert isinstance(upgraded, TrialStart) and upgraded.id.key == NONE


def test_a_schema_3_trial_finish_without_kept_reads_as_a_new_result() -> None:
    lines = SCHEMA_1.read_text().replace("@FINGERPRINT@", "f").splitlines()
    finish = next(line for line in lines if "trial.finish" in line)
    today = decode_event(finish.encode(), schema=1)
    assert isinstance(today, TrialFinish) and not today.kept
    schema_3 = {k: v for k, v in json.loads(event_encoder.encode(today)).items() if k != "kept"}
    old = decode_event(json.dumps(schema_3).encode(), schema=3)
    assert isinstance(old, TrialFinish) and old.kept is False and old.result == today.result


def test_mending_keeps_a_whole_schema_1_last_line(tmp_path: Path) -> None:
    run_dir = _schema_1_run(tmp_path, lines=7)
    path = run_dir / "events.jsonl"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # killed just before the newline
    mend_tail(run_dir)
    assert [r.id.key for r in read_run_log(run_dir).results] == [SELF_LOAD]
    assert path.read_bytes().endswith(b"\n")


DATA = Path(__file__).parent / "data"


# Written by `skillgym run --provider command --snapshot-update` (then `--snapshot-check`, or with
# `--snapshot-enforce` too) on a two-case suite whose agent reports fixed token counts; paths replaced.
def _old_run(tmp_path: Path, name: str) -> Path:
    """A run directory holding a stored log: ``events-schema-<name>.jsonl``."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(DATA / f"events-schema-{name}.jsonl", run_dir / "events.jsonl")
    return run_dir


def test_a_schema_1_check_reads_as_a_typed_check_with_its_tokens_and_notes(tmp_path: Path) -> None:
    log = read_run_log(_old_run(tmp_path, "1-check"))
    assert log.start.schema == 1 and EVENT_SCHEMA == 4
    assert len(log.results) == 2
    finish = log.finish
    assert finish is not None
    assert isinstance(finish.snapshots, SnapshotCheck)
    assert finish.snapshots.counts == {"regressed": 1, "unchanged": 1}
    (regressed,) = finish.snapshots.regressions
    assert (regressed.case_id, regressed.current_total, regressed.snapshot_total) == ("calm", 130, 100)
    assert isinstance(finish.tokens, TokenReport)
    assert (finish.tokens.totals.trials, finish.tokens.totals.total) == (2, 240)
    assert finish.notes == (
        "token regression: prompt/calm/none (command/default) median total 130 vs 100 per trial "
        "(+30.0%, threshold 20%)",
    )
    assert finish.exit_code == 0


def test_a_schema_1_update_reads_as_a_typed_update(tmp_path: Path) -> None:
    finish = read_run_log(_old_run(tmp_path, "1-update")).finish
    assert finish is not None
    assert isinstance(finish.snapshots, SnapshotUpdate)
    (file,) = finish.snapshots.files
    assert (file.file, file.new, file.written) == ("snapshots/command/default.toml", 2, True)
    assert finish.notes == ()


def test_report_rebuilds_a_schema_1_run_with_its_snapshot_check(tmp_path: Path) -> None:
    run_dir = _old_run(tmp_path, "1-check")
    proc = run_cli("report", str(run_dir), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "2 trials: 2 passed, 0 failed, 0 errored" in proc.stdout
    report = json.loads((run_dir / "report.json").read_text())
    assert report["snapshots"]["counts"] == {"regressed": 1, "unchanged": 1}
    assert report["tokens"]["totals"]["total"] == 240
    md = (run_dir / "report.md").read_text()
    assert "**Token regressions** against the snapshots: `prompt/calm/none` (+30%)" in md
    assert "| regressed | prompt | calm | none | command/default | 130 | 100 | +30.0% | 20% |" in md


def test_a_schema_1_segment_then_a_current_one_reads_the_current(tmp_path: Path) -> None:
    # `run --resume` of a run an older skillgym started appends a segment of the current schema.
    run_dir = _old_run(tmp_path, "1-check")
    old = read_run_log(run_dir)
    start = msgspec.structs.replace(old.start, schema=EVENT_SCHEMA, resumed=True)
    assert old.finish is not None
    finish = msgspec.structs.replace(old.finish, exit_code=1, notes=("again",))
    with (run_dir / "events.jsonl").open("ab") as handle:
        for event in (start, finish):
            handle.write(event_encoder.encode(event) + b"\n")
    log = read_run_log(run_dir)
    assert log.start.resumed and log.start.schema == EVENT_SCHEMA
    assert log.results == ()
    assert log.finish == finish


def test_a_whole_schema_1_last_line_without_its_newline_is_kept(tmp_path: Path) -> None:
    run_dir = _old_run(tmp_path, "1-check")
    path = run_dir / "events.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[:-1])
    assert isinstance(read_run_log(run_dir).finish, RunFinish)
    mend_tail(run_dir)
    assert path.read_bytes() == data


def test_a_schema_2_enforced_check_reads_typed_with_its_exit_code(tmp_path: Path) -> None:
    log = read_run_log(_old_run(tmp_path, "2-enforced-check"))
    assert log.start.schema == 2
    assert sorted(r.id.key for r in log.results) == [
        "prompt/busy/none/command/trial-1",
        "prompt/calm/none/command/trial-1",
    ]
    finish = log.finish
    assert finish is not None
    assert isinstance(finish.snapshots, SnapshotCheck) and finish.snapshots.enforce
    assert [r.case_id for r in finish.snapshots.regressions] == ["calm"]
    assert finish.exit_code == 1
    assert finish.tokens is not None and finish.tokens.totals.total == 240
    assert len(finish.notes) == 1 and finish.notes[0].startswith("token regression: prompt/calm/none")


def test_a_trial_id_is_its_key_and_a_key_that_disagrees_is_refused() -> None:
    made = trial_id(lane="prompt", case_id="a", condition="none", provider="stub", trial=3, fingerprint="f")
    assert made.key == "prompt/a/none/stub/trial-3"
    assert msgspec.json.decode(event_encoder.encode(made), type=TrialId) == made
    wrong = msgspec.json.encode({**msgspec.to_builtins(made), "trial": 4})
    with pytest.raises(
        msgspec.ValidationError, match="trial key 'prompt/a/none/stub/trial-3' does not match"
    ):
        msgspec.json.decode(wrong, type=TrialId)
