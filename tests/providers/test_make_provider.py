"""Tests for skillgym.providers.make_provider and the package's public surface."""

from __future__ import annotations

from pathlib import Path

import pytest

import skillgym.providers as providers
from skillgym.errors import UsageError
from skillgym.providers import (
    CommandProvider,
    Provider,
    ProviderSettings,
    ReplayProvider,
    StubProvider,
    make_provider,
    provider_names,
)


def test_known_names_build_their_provider(suite_root: Path) -> None:
    settings = ProviderSettings(replay_source="claude/sonnet", agent_command="python3 agent.py --fast")
    stub: Provider = make_provider("stub", suite_root=suite_root, settings=settings)
    replay: Provider = make_provider("replay", suite_root=suite_root, settings=settings)
    command = make_provider("command", suite_root=suite_root, settings=settings)
    assert isinstance(stub, StubProvider)
    assert isinstance(replay, ReplayProvider)
    assert isinstance(command, CommandProvider)
    assert command.argv == ("python3", "agent.py", "--fast")
    assert (stub.name, replay.name, command.name) == ("stub", "replay", "command")
    assert replay.skill_dirs == (".claude/skills", ".agents/skills")
    assert {"replay", "stub", "command", "claude", "codex"} <= set(provider_names())


def test_command_provider_needs_a_command(suite_root: Path) -> None:
    with pytest.raises(UsageError, match="--agent-command"):
        make_provider("command", suite_root=suite_root)
    with pytest.raises(UsageError, match="cannot be split"):
        make_provider("command", suite_root=suite_root, settings=ProviderSettings(agent_command="a 'b"))


def test_an_unknown_name_lists_the_valid_ones(suite_root: Path) -> None:
    with pytest.raises(
        UsageError,
        match="unknown provider 'claud' given to --provider; valid providers: claude, codex, command, ",
    ):
        make_provider("claud", suite_root=suite_root)


def test_the_public_surface_is_curated() -> None:
    for name in providers.__all__:
        assert hasattr(providers, name), name
    assert "make_provider" in providers.__all__
