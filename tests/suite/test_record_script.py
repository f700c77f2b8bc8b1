"""The example skill's recorder (tmux-tui's scripts/record.py), driven against a real tmux."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import SUITE, needs_tmux

pytestmark = [pytest.mark.integration, needs_tmux]

RECORD = SUITE / "skills" / "tmux-tui" / "scripts" / "record.py"
SOCKET = "record-test"


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A private TMUX_TMPDIR (short: socket paths have a length limit); its server is killed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="sg-rec-"))
    env = {"PATH": os.environ.get("PATH", os.defpath), "TMUX_TMPDIR": str(folder), "HOME": str(tmp_path)}
    try:
        yield env
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], env=env, capture_output=True, check=False)
        shutil.rmtree(folder, ignore_errors=True)


def record(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["python3", str(RECORD), "--socket", SOCKET, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_start_returns_once_the_screen_at_start_is_recorded(env: dict[str, str], tmp_path: Path) -> None:
    # A tmux slow to answer, as on a busy machine: whatever the agent does after start must come after
    # the first frame, or that frame may show it; nor may an earlier recording at that path pass for it.
    shim = tmp_path / "bin" / "tmux"
    shim.parent.mkdir()
    real = shutil.which("tmux")
    shim.write_text(f'#!/bin/sh\nsleep 0.2\nexec {real} "$@"\n')
    shim.chmod(0o755)
    slow = {**env, "PATH": f"{shim.parent}{os.pathsep}{env['PATH']}"}
    new = ["tmux", "-L", SOCKET, "new-session", "-d", "-s", "rec", "echo READY; exec cat"]
    assert subprocess.run(new, env=env, capture_output=True, check=False).returncode == 0
    cast = tmp_path / "rec.cast"
    cast.write_text("an earlier recording\nwith lines\nof its own\n")
    try:
        started = record(slow, "start", "rec", str(cast))
        assert started.returncode == 0, started.stderr
        lines = cast.read_text(encoding="utf-8").splitlines()
        assert len(lines) >= 2 and lines[0].startswith("{"), lines  # this header, then the first frame
        assert json.loads(lines[0])["version"] == 2
        assert json.loads(lines[1])[1:] == ["o", "\x1b[H\x1b[2JREADY"]
    finally:
        record(env, "stop", str(cast))
