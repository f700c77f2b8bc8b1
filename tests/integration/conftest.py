"""Fixtures for the integration tests: the pinned agent CLIs and a scripted model server per test."""

from __future__ import annotations

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
    say = (lambda line: terminal.write_line(f"skillgym tests: {line}")) if terminal else print
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
