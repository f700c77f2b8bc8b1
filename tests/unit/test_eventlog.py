"""Reading events.jsonl back: logs of the current schema and of schema 1 (stored ones) read alike."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from skillgym.eventlog import EventLogError, mend_tail, read_run_log
from skillgym.events import EVENT_SCHEMA, RunFinish, event_encoder
from skillgym.snapshots.model import SnapshotCheck, SnapshotUpdate
from skillgym.usage import TokenReport
from tests.conftest import run_cli

DATA = Path(__file__).parent / "data"


def _old_run(tmp_path: Path, name: str) -> Path:
    """A run directory holding a stored schema-1 log (written by `run --snapshot-check` or `-update`)."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(DATA / f"events-schema-1-{name}.jsonl", run_dir / "events.jsonl")
    return run_dir


def test_a_schema_1_check_reads_as_a_typed_check_with_its_tokens_and_notes(tmp_path: Path) -> None:
    log = read_run_log(_old_run(tmp_path, "check"))
    assert log.start.schema == 1 and EVENT_SCHEMA == 2
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
    finish = read_run_log(_old_run(tmp_path, "update")).finish
    assert finish is not None
    assert isinstance(finish.snapshots, SnapshotUpdate)
    (file,) = finish.snapshots.files
    assert (file.file, file.new, file.written) == ("snapshots/command/default.toml", 2, True)
    assert finish.notes == ()


def test_report_rebuilds_a_schema_1_run_with_its_snapshot_check(tmp_path: Path) -> None:
    run_dir = _old_run(tmp_path, "check")
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
    run_dir = _old_run(tmp_path, "check")
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
    run_dir = _old_run(tmp_path, "check")
    path = run_dir / "events.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[:-1])
    assert isinstance(read_run_log(run_dir).finish, RunFinish)
    mend_tail(run_dir)
    assert path.read_bytes() == data


def test_an_unknown_schema_names_the_ones_this_skillgym_reads(tmp_path: Path) -> None:
    run_dir = _old_run(tmp_path, "check")
    path = run_dir / "events.jsonl"
    first, rest = path.read_bytes().split(b"\n", 1)
    path.write_bytes(first.replace(b'"schema":1,', b'"schema":9,', 1) + b"\n" + rest)
    with pytest.raises(
        EventLogError, match=r"events.jsonl:1: event schema 9 is not one this skillgym reads \(1 or 2\)"
    ):
        read_run_log(run_dir)
