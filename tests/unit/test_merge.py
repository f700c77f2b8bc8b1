"""merge internals: a shard's folder named inside a result or a workspace plan becomes the merged run's."""

from __future__ import annotations

from pathlib import Path

from skillgym.commands.merge import _moved
from skillgym.results import rehomed
from tests.results import result_for

KEY = "execution/c/none/command/trial-1"


def test_a_result_naming_the_shard_folder_names_the_merged_one(tmp_path: Path) -> None:
    shard = "/ci/runner/runs/20261202-101010-abcdef"
    result = result_for(KEY, "errored", error_message=f'no log at {shard}/trials/{KEY}/fixture "x"')
    moved = rehomed(result, shard, str(tmp_path / "merged"))
    assert moved.error_message == f'no log at {tmp_path / "merged"}/trials/{KEY}/fixture "x"'
    assert moved.paths == result.paths  # relative already
    untouched = result_for(KEY)
    assert rehomed(untouched, shard, str(tmp_path / "merged")) is untouched  # nothing to move: the same


def test_a_workspace_plan_moves_to_the_merged_folder(tmp_path: Path) -> None:
    shard = "/ci/runs/r1"
    plan = {"workspace": f"{shard}/trials/{KEY}/workspace", "env": {"A": "b"}, "bootstrap": [["true"]]}
    moved = _moved(plan, shard, tmp_path)
    assert moved == {**plan, "workspace": f"{tmp_path}/trials/{KEY}/workspace"}
