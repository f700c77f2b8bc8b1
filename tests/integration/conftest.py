"""Fixtures for the integration tests: the pinned agent CLIs and a scripted model server per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .agent_clis import CLAUDE, CODEX, GEMINI, AgentCli, install, missing_node
from .model_server import ModelServer


def _installed(cli: AgentCli) -> Path:
    reason = missing_node()
    if reason is not None:
        pytest.skip(reason)
    return install(cli)


@pytest.fixture(scope="session")
def claude_cli() -> Path:
    return _installed(CLAUDE)


@pytest.fixture(scope="session")
def codex_cli() -> Path:
    return _installed(CODEX)


@pytest.fixture(scope="session")
def gemini_cli() -> Path:
    return _installed(GEMINI)


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server
