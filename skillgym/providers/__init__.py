"""Providers: adapters that run an agent (or stand in for one) and hand back a Trace."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from ..errors import UsageError
from ..model import Data
from .base import Detection as Detection
from .base import Provider as Provider
from .base import ProviderRequest as ProviderRequest
from .base import ProviderResult as ProviderResult
from .claude import ClaudeProvider as ClaudeProvider
from .codex import CodexProvider as CodexProvider
from .command import CommandProvider as CommandProvider
from .command import parse_agent_command as parse_agent_command
from .replay import ReplayProvider as ReplayProvider
from .stub import StubProvider as StubProvider
from .tracefmt import PARSERS as PARSERS
from .tracefmt import StreamParseError as StreamParseError

PROVIDER_NAMES: Final = ("replay", "stub", "command", "claude", "codex")


class ProviderSettings(Data, frozen=True, kw_only=True):
    """Provider options from the command line; each provider reads only its own."""

    replay_source: str | None = None  # "provider/model": which cassettes replay plays
    model: str | None = None  # --model: for replay, which recorded model's cassettes (must match the source)
    agent_command: str | None = None  # the command provider's program and arguments
    # Agent CLIs: None means $SKILLGYM_CLAUDE / $SKILLGYM_CODEX, else `claude` / `codex` on PATH.
    claude_path: str | None = None
    codex_path: str | None = None
    codex_base_url: str | None = None  # None: $SKILLGYM_CODEX_BASE_URL, else OPENAI_BASE_URL, else OpenAI


_DEFAULTS = ProviderSettings()


def make_provider(name: str, *, suite_root: Path, settings: ProviderSettings = _DEFAULTS) -> Provider:
    """The provider called ``name``; raises ``UsageError`` for an unknown name or bad settings."""
    if name == "replay":
        return ReplayProvider(suite_root, settings.replay_source, settings.model)
    if name == "stub":
        return StubProvider(suite_root)
    if name == "command":
        return CommandProvider(parse_agent_command(settings.agent_command))
    if name == "claude":
        return ClaudeProvider(settings.claude_path)
    if name == "codex":
        return CodexProvider(settings.codex_path, settings.codex_base_url)
    raise UsageError(f"unknown provider {name!r}; valid providers: {', '.join(PROVIDER_NAMES)}")


__all__ = (
    "PARSERS",
    "PROVIDER_NAMES",
    "ClaudeProvider",
    "CodexProvider",
    "CommandProvider",
    "Detection",
    "Provider",
    "ProviderRequest",
    "ProviderResult",
    "ProviderSettings",
    "ReplayProvider",
    "StreamParseError",
    "StubProvider",
    "make_provider",
    "parse_agent_command",
)
