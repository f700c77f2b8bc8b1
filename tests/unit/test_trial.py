"""Trial folders: made top down from the deepest folder known to exist, never the run dir itself."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from skillgym import trial


@pytest.fixture
def mkdirs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    made: list[str] = []
    real = os.mkdir

    def mkdir(path: str, *args: object, **kwargs: object) -> None:
        made.append(os.fspath(path))
        real(path)

    monkeypatch.setattr(trial.os, "mkdir", mkdir)
    return made


def test_each_new_folder_costs_one_mkdir(tmp_path: Path, mkdirs: list[str]) -> None:
    root = str(tmp_path)
    first = os.path.join(root, "trials", "prompt", "a", "none", "stub", "trial-1")
    trial._make_below(root, first)
    assert os.path.isdir(first)
    assert len(mkdirs) == 6  # trials, prompt, a, none, stub, trial-1: none tried before its parent exists
    mkdirs.clear()
    trial._make_below(root, os.path.join(root, "trials", "prompt", "a", "stale", "stub", "trial-1"))
    assert [p[len(root) :] for p in mkdirs] == [
        "/trials/prompt/a/stale",
        "/trials/prompt/a/stale/stub",
        "/trials/prompt/a/stale/stub/trial-1",
    ]


def test_a_folder_removed_during_the_run_is_made_again(tmp_path: Path) -> None:
    root = str(tmp_path)
    trial._make_below(root, os.path.join(root, "trials", "prompt", "a", "none", "stub", "trial-1"))
    shutil.rmtree(os.path.join(root, "trials", "prompt"))
    again = os.path.join(root, "trials", "prompt", "a", "none", "stub", "trial-2")
    trial._make_below(root, again)
    assert os.path.isdir(again)


def test_a_removed_run_dir_is_never_made_again(tmp_path: Path) -> None:
    root = str(tmp_path / "run")
    os.mkdir(root)
    trial._make_below(root, os.path.join(root, "trials", "prompt", "a", "none", "stub", "trial-1"))
    shutil.rmtree(root)
    with pytest.raises(FileNotFoundError):
        trial._make_below(root, os.path.join(root, "trials", "prompt", "b", "none", "stub", "trial-1"))
    assert not os.path.exists(root)


def test_an_existing_folder_is_fine(tmp_path: Path) -> None:
    root = str(tmp_path)
    folder = os.path.join(root, "trials", "prompt", "a", "none", "stub", "trial-1")
    os.makedirs(folder)
    trial._make_below(root, folder)
    assert os.path.isdir(folder)
