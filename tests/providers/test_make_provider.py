"""Tests for skillgym.providers.make_provider and the package's public surface."""

from __future__ import annotations

from pathlib import Path

import pytest

import skillgym.providers as providers
from skillgym.errors import UsageError
from skillgym.providers import PROVIDER_NAMES, Provider, ReplayProvider, StubProvider, make_provider


def test_known_names_build_their_provider(suite_root: Path) -> None:
    stub: Provider = make_provider("stub", suite_root=suite_root, source="claude/sonnet")
    replay: Provider = make_provider("replay", suite_root=suite_root, source="claude/sonnet")
    assert isinstance(stub, StubProvider)
    assert isinstance(replay, ReplayProvider)
    assert (stub.name, replay.name) == ("stub", "replay")
    assert replay.skill_dirs == (".claude/skills", ".agents/skills")
    assert set(PROVIDER_NAMES) == {"stub", "replay"}


def test_an_unknown_name_lists_the_valid_ones(suite_root: Path) -> None:
    with pytest.raises(UsageError, match="unknown provider 'claud'; valid providers: replay, stub"):
        make_provider("claud", suite_root=suite_root)


def test_the_public_surface_is_curated() -> None:
    for name in providers.__all__:
        assert hasattr(providers, name), name
    assert "make_provider" in providers.__all__
