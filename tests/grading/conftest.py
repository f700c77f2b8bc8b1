"""Shared fixtures for grading tests: a trial context in tmp_path and a private tmux directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import pytest

from skillgym.grading import GradeContext


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def make_ctx(tmp_path: Path) -> Callable[..., GradeContext]:
    """A GradeContext whose workspace, trial dir, fixture log dir and tmux dir exist under tmp_path."""
    workspace = tmp_path / "workspace"
    trial = tmp_path / "trial"
    for folder in (workspace, trial, trial / "fixture-logs", trial / "tmux"):
        folder.mkdir(parents=True, exist_ok=True)
    base = GradeContext(
        provider_ok=True,
        workspace=str(workspace),
        trial_dir=str(trial),
        fixture_log_dir=str(trial / "fixture-logs"),
        tmux_tmpdir=str(trial / "tmux"),
        env={"PATH": os.environ.get("PATH", os.defpath), "HOME": str(trial)},
        skills=("tmux-tui", "tui-qa"),
    )

    def make(**changes: object) -> GradeContext:
        return msgspec.structs.replace(base, **changes)

    return make


def tmux_env(tmpdir: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", os.defpath), "TMUX_TMPDIR": str(tmpdir), "HOME": str(tmpdir)}


def tmux(tmpdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run tmux on the private socket 'grading-test' inside ``tmpdir`` (never the user's server)."""
    return subprocess.run(
        ["tmux", "-f", "/dev/null", "-L", "grading-test", *args],
        env=tmux_env(tmpdir),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.fixture
def tmux_tmpdir() -> Iterator[Path]:
    """A short private TMUX_TMPDIR (socket paths have a length limit); its server is killed afterwards."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    folder = Path(tempfile.mkdtemp(prefix="sg-tmux-"))
    try:
        yield folder
    finally:
        tmux(folder, "kill-server")
        shutil.rmtree(folder, ignore_errors=True)
