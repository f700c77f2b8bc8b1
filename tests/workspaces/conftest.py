"""Fixtures for the workspace tests: a small suite on disk and a trial layout under tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skillgym.workspaces import TrialLayout, layout_for, remove_tree


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def suite_root(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    (root / "templates" / "tui" / "app").mkdir(parents=True)
    (root / "templates" / "tui" / "NOTES.md").write_text("notes from the template\n")
    (root / "templates" / "tui" / "app" / "main.txt").write_text("app\n")
    skill = root / "skills" / "tmux-tui"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tmux-tui\n---\nUse tmux.\n")
    (skill / "scripts" / "wait.sh").write_text("#!/bin/sh\n")
    (root / "conditions").mkdir()
    (root / "conditions" / "tmux-tui.stub.md").write_text("Bootstrap: load tmux-tui.\n")
    (root / "fixtures").mkdir()
    return root


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[TrialLayout]:
    trial = layout_for(tmp_path / "run" / "trial-1")
    yield trial
    # pytest's tmp paths are deep enough that the tmux dir may be the short one outside tmp_path.
    remove_tree(Path(trial.tmux_tmpdir))
