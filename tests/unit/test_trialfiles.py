"""result.json held against events.jsonl: what counts as a disagreement, and what is rewritten."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from skillgym.eventlog import read_run_log
from skillgym.trialfiles import mend_result_files
from tests.conftest import run_cli, run_dirs, write_suite

SUITE = {
    "cases.py": """
        from skillgym import prompt_case

        for name in ("a", "b"):
            with prompt_case(name) as c:
                c.category("trigger")
                c.prompt("wait")
                c.expect_skill(None)
    """,
    "stubs/a.md": "I would wait.\n",
    "stubs/b.md": "I would wait.\n",
}


def _run(tmp_path: Path) -> Path:
    root = write_suite(tmp_path / "evals", SUITE)
    proc = run_cli("run", "--suite", str(root), "--provider", "stub", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = run_dirs(tmp_path / "runs")
    return run_dir


def test_a_file_that_holds_the_same_record_in_another_encoding_is_left_alone(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    path = run_dir / "trials/prompt/a/none/stub/trial-1/result.json"
    reordered = json.dumps(json.loads(path.read_text()), indent=2, sort_keys=True)
    path.write_text(reordered)
    assert mend_result_files(run_dir, read_run_log(run_dir)) == []
    assert path.read_text() == reordered


def test_a_missing_file_is_rewritten_and_a_missing_trial_folder_is_not_rebuilt(tmp_path: Path) -> None:
    run_dir = _run(tmp_path)
    a = run_dir / "trials/prompt/a/none/stub/trial-1"
    b = run_dir / "trials/prompt/b/none/stub/trial-1"
    original = (a / "result.json").read_bytes()
    (a / "result.json").unlink()
    shutil.rmtree(b)
    assert mend_result_files(run_dir, read_run_log(run_dir)) == [
        f"{a.relative_to(run_dir)}/result.json is missing; rewrote it from events.jsonl, the run's record",
        f"{b.relative_to(run_dir)}/result.json is missing and its trial folder is gone; "
        "its result is kept in events.jsonl only",
    ]
    assert (a / "result.json").read_bytes() == original
    assert not b.exists()
