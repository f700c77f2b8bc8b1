"""runs/latest: a relative symlink replaced atomically, a text file without symlinks; a user's folder kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillgym.latest import LATEST, latest_run_dir, point_latest
from skillgym.snapshots.commands import latest_run


def _run(output: Path, name: str) -> Path:
    run = output / name
    run.mkdir(parents=True)
    (run / "events.jsonl").write_text("", encoding="utf-8")
    return run


def test_latest_is_a_relative_link_to_the_newest_run(tmp_path: Path) -> None:
    first = _run(tmp_path, "20260101-000000-aaaaaa")
    assert point_latest(first) is None
    assert os.readlink(tmp_path / LATEST) == first.name
    second = _run(tmp_path, "20260102-000000-bbbbbb")
    assert point_latest(second) is None
    assert os.readlink(tmp_path / LATEST) == second.name
    assert latest_run_dir(tmp_path) == second.resolve()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [first.name, second.name, LATEST]
    )  # no temp left


def test_the_newest_run_by_name_is_never_the_link(tmp_path: Path) -> None:
    newest = _run(tmp_path, "20260102-000000-bbbbbb")
    _run(tmp_path, "20260101-000000-aaaaaa")
    point_latest(newest)
    assert latest_run(tmp_path) == newest  # "latest" sorts after every run id, yet is skipped


def test_without_symlinks_latest_is_a_text_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Path, target: str, target_is_directory: bool = False) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(Path, "symlink_to", refuse)  # a filesystem without symlinks (FAT, some Windows)
    run = _run(tmp_path, "20260101-000000-aaaaaa")
    assert point_latest(run) is None
    assert (tmp_path / LATEST).read_text(encoding="utf-8") == f"{run.name}\n"
    assert latest_run_dir(tmp_path) == run


def test_a_folder_called_latest_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / LATEST).mkdir()
    (tmp_path / LATEST / "mine.txt").write_text("keep", encoding="utf-8")
    problem = point_latest(_run(tmp_path, "20260101-000000-aaaaaa"))
    assert problem is not None and "left as it is" in problem
    assert (tmp_path / LATEST / "mine.txt").read_text(encoding="utf-8") == "keep"
    assert latest_run_dir(tmp_path) is None


def test_a_text_file_naming_elsewhere_is_ignored(tmp_path: Path) -> None:
    (tmp_path / LATEST).write_text("../../etc\n", encoding="utf-8")
    assert latest_run_dir(tmp_path) is None
