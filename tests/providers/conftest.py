"""Fixtures for the provider tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def suite_root(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    root.mkdir()
    return root
