"""Which run `skillgym snapshots` reads when none is named: the newest run directory."""

from __future__ import annotations

import os
from pathlib import Path

from skillgym.snapshots.commands import latest_run


def _run(root: Path, name: str, mtime_ns: int) -> Path:
    run = root / name
    run.mkdir(parents=True)
    (run / "events.jsonl").write_text("")
    (run / "run.json").write_text("{}")
    os.utime(run / "run.json", ns=(mtime_ns, mtime_ns))
    return run


def test_newest_run_id_wins_and_same_second_ties_go_to_the_later_start(tmp_path: Path) -> None:
    assert latest_run(tmp_path / "runs") is None
    _run(tmp_path / "runs", "20260101-120000-ffffff", 3_000)
    assert latest_run(tmp_path / "runs") == tmp_path / "runs/20260101-120000-ffffff"
    newer = _run(tmp_path / "runs", "20260102-080000-000000", 1_000)  # a later id, however old its files
    assert latest_run(tmp_path / "runs") == newer
    tie = _run(tmp_path / "runs", "20260102-080000-aaaaaa", 500)
    assert latest_run(tmp_path / "runs") == newer  # same second: the one that started later
    os.utime(tie / "run.json", ns=(2_000, 2_000))
    assert latest_run(tmp_path / "runs") == tie
    (tmp_path / "runs/not-a-run").mkdir()
    assert latest_run(tmp_path / "runs") == tie
