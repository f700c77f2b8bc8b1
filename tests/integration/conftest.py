"""Fixtures for the integration tests: the pinned agent CLIs and a scripted model server per test."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from .agent_clis import CLAUDE, CODEX, GEMINI, AgentCli, install, missing_node
from .model_server import ModelServer


def _installed(cli: AgentCli, config: pytest.Config) -> Path:
    reason = missing_node()
    if reason is not None:
        pytest.skip(reason)
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")

    def say(line: str) -> None:
        # Output is captured while a fixture runs: this line is for the person waiting, so it goes past.
        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            if terminal:
                terminal.write_line(f"skillgym tests: {line}")
            else:
                print(f"skillgym tests: {line}")

    return install(cli, say)


@pytest.fixture(scope="session")
def claude_cli(pytestconfig: pytest.Config) -> Path:
    return _installed(CLAUDE, pytestconfig)


@pytest.fixture(scope="session")
def codex_cli(pytestconfig: pytest.Config) -> Path:
    return _installed(CODEX, pytestconfig)


@pytest.fixture(scope="session")
def gemini_cli(pytestconfig: pytest.Config) -> Path:
    return _installed(GEMINI, pytestconfig)


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server
