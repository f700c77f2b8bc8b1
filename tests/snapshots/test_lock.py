"""Concurrent read-modify-write of one snapshot file: every process's entry survives."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

from skillgym.snapshots import read_snapshot
from tests.conftest import REPO

WRITER = """
import sys, time
from skillgym.report.tokens import TokenRow
from skillgym.snapshots.apply import update_rows
from skillgym.stats import Summary

name, start, rounds = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
while time.time() < start:  # every process starts its updates at the same moment
    time.sleep(0.001)
for n in range(rounds):
    total = Summary(n=1, median=100 + n, low=100 + n, high=100 + n, iqr=0)
    row = TokenRow(lane="prompt", case_id=name, condition="none", provider="p", model="m",
                   fingerprint="f" * 64, trials=1, missing=0, total=total)
    update_rows([row], directory="snapshots", run_id=f"run-{n}", scope=None)
"""


def test_concurrent_updates_from_many_processes_keep_every_entry(tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent(WRITER))
    names = [f"case{i}" for i in range(6)]
    start = time.time() + 1.5  # after every interpreter has started
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), name, str(start), "15"],
            cwd=tmp_path,
            env={"PYTHONPATH": str(REPO)},
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    snap = read_snapshot(tmp_path / "snapshots/p/m.toml", provider="p", model="m")
    assert snap is not None
    assert sorted(e.case for e in snap.entries) == names
    assert {e.median.total for e in snap.entries} == {114}
    assert [p.name for p in (tmp_path / "snapshots/p").iterdir() if p.name.endswith(".tmp")] == []
