"""Shared test helpers: write a suite into tmp_path and run the CLI as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

REPO = Path(__file__).resolve().parent.parent


def write_suite(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> dedented text) under ``root`` and return it."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m skillgym ARGS`` in ``cwd``, as a user would run it."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "skillgym", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def agent_run(root: Path, agent: str) -> list[str]:
    """``skillgym run`` arguments: the suite at ``root``, the command provider running ``agent``.

    A ``state`` folder beside the suite, when there is one, is where a test's agents keep what they share
    across trials (a call counter, a log): the one folder outside their trials the sandbox lets them write.
    """
    args = ["run", "--suite", str(root), "--provider", "command", "--agent-command", agent]
    state = root.parent / "state"
    return [*args, "--sandbox-writable", str(state)] if state.is_dir() else args


def run_agent(
    root: Path, agent: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``agent_run(root, agent)`` plus ``args``, run from the suite's parent folder."""
    return run_cli(*agent_run(root, agent), *args, cwd=root.parent, env=env)


@contextmanager
def running_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """``python -m skillgym ARGS`` started in the background, to be watched and signalled mid-run.

    Whatever happens in the block, the process is not left behind: it is killed and reaped on the way out.
    """
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})}
    child = subprocess.Popen(
        [sys.executable, "-m", "skillgym", *args],
        cwd=cwd,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield child
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()


def run_dirs(output: Path) -> list[Path]:
    """The run folders under ``output``, sorted: not ``latest``, the link to the newest of them."""
    return sorted(d for d in output.iterdir() if d.is_dir() and not d.is_symlink())


def run_files(output: Path, pattern: str) -> list[Path]:
    """Files matching ``pattern`` in each run folder under ``output``: each once, not again via ``latest``."""
    return [path for run in run_dirs(output) for path in sorted(run.glob(pattern))] if output.is_dir() else []


T = TypeVar("T")


def wait_for(found: Callable[[], T], *, timeout: float, what: str, every: float = 0.05) -> T:
    """Poll ``found()`` until it returns something truthy and return that; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        result = found()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {timeout:g} s waiting for {what}")
        time.sleep(every)


@pytest.fixture
def suite_dir(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    def make(files: dict[str, str]) -> Path:
        return write_suite(tmp_path / "evals", files)

    return make


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
