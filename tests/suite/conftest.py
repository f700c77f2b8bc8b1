"""Shared fixtures for the example-suite tests: the loaded suite, and one whole replay run per session."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillgym.loader import load_suite
from skillgym.model import Suite
from tests.conftest import REPO, run_cli, run_dirs

SUITE = REPO / "evals"
CASSETTES = SUITE / "cassettes" / "claude" / "scripted"

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="the example suite drives tmux")


@pytest.fixture(scope="session")
def suite() -> Suite:
    return load_suite(SUITE)


def results(run_dir: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Every trial's result.json in a run, keyed by (lane, case, condition)."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for path in sorted(run_dir.glob("trials/*/*/*/*/trial-1/result.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        trial = result["id"]
        found[(trial["lane"], trial["case_id"], trial["condition"])] = result
    return found


def only_run(output: Path) -> Path:
    (run_dir,) = run_dirs(output)
    return run_dir


class Run:
    """A finished `skillgym run`: its exit code, output and results."""

    def __init__(self, returncode: int, stdout: str, stderr: str, run_dir: Path) -> None:
        self.returncode, self.stdout, self.stderr, self.dir = returncode, stdout, stderr, run_dir
        self.results = results(run_dir)

    def failed_checks(self, key: tuple[str, str, str]) -> set[str]:
        grade = self.results[key]["grade"] or {}
        return {c["id"] for c in grade.get("checks", []) if c["required"] and not c["passed"]}

    def findings(self, key: tuple[str, str, str]) -> set[str]:
        grade = self.results[key]["grade"] or {}
        return {f["rule_id"] for f in grade.get("findings", []) if f["severity"] == "error"}


RunSuite = Callable[..., Run]


@pytest.fixture(scope="session")
def run_suite(tmp_path_factory: pytest.TempPathFactory) -> RunSuite:
    """Run `skillgym run` on a suite folder (the shipped one unless ``suite=``) into a fresh output dir."""

    def run(*args: str, suite: Path = SUITE, timeout: float = 600) -> Run:
        output = tmp_path_factory.mktemp("runs")
        proc = run_cli(
            "run", "--suite", str(suite), "--output", str(output), *args, cwd=REPO, timeout=timeout
        )
        return Run(proc.returncode, proc.stdout, proc.stderr, only_run(output))

    return run


@pytest.fixture(scope="session")
def replay(run_suite: RunSuite) -> Run:
    """The whole shipped suite replayed from its cassettes, every lane and condition (about a minute)."""
    if shutil.which("tmux") is None:
        pytest.skip("the example suite drives tmux")
    return run_suite("--concurrency", "8")
