"""Tests for skillgym.workspaces.layout: where a trial's files live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillgym.workspaces import layout_for
from skillgym.workspaces.layout import SHORT_TMUX_PREFIX


def test_paths_are_absolute_and_under_the_trial_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    layout = layout_for(Path("t"))
    root = str(tmp_path / "t")
    assert layout.trial_dir == root
    assert layout.workspace == f"{root}/workspace"
    assert layout.home == f"{root}/home"
    assert layout.fixture_log_dir == f"{root}/fixture-logs"
    assert layout.stdout == f"{root}/stdout.txt"
    assert layout.stderr == f"{root}/stderr.txt"
    assert layout.bootstrap_log == f"{root}/bootstrap.log"
    assert not (tmp_path / "t").exists(), "layout_for must not create anything"


def test_tmux_dir_is_inside_the_trial_dir_when_the_socket_path_fits() -> None:
    assert layout_for(Path("/r/t")).tmux_tmpdir == "/r/t/tmux"


def test_a_deep_trial_dir_gets_a_short_stable_tmux_dir() -> None:
    deep = Path("/home/someone/project/.skillgym/runs/20260101-120000-abc123/trials/execution/hello-prompt")
    layout = layout_for(deep / "self-load" / "claude" / "trial-1")
    assert os.path.basename(layout.tmux_tmpdir).startswith(SHORT_TMUX_PREFIX)
    assert len(layout.tmux_tmpdir + "/tmux-1000/default") < 104
    assert layout_for(deep / "self-load" / "claude" / "trial-1").tmux_tmpdir == layout.tmux_tmpdir
    assert layout_for(deep / "self-load" / "claude" / "trial-2").tmux_tmpdir != layout.tmux_tmpdir
