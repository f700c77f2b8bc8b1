"""Providers: adapters that run an agent (or stand in for one) and hand back a Trace.

Each provider registers itself with ``@provider`` (see ``skillgym.plugins``); ``make_provider`` builds
one by name from the registry, so a third-party provider is built the same way as the built-in ones.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from ..plugins import PROVIDERS, load_plugins
from .agent_cli import AgentCliProvider as AgentCliProvider
from .base import Detection as Detection
from .base import Provider as Provider
from .base import ProviderRequest as ProviderRequest
from .base import ProviderResult as ProviderResult
from .base import ProviderSettings as ProviderSettings
from .claude import ClaudeProvider as ClaudeProvider
from .codex import CodexProvider as CodexProvider
from .command import CommandProvider as CommandProvider
from .command import parse_agent_command as parse_agent_command
from .replay import ReplayProvider as ReplayProvider
from .stub import StubProvider as StubProvider
from .tracefmt import StreamParseError as StreamParseError

_DEFAULTS = ProviderSettings()


def provider_names() -> tuple[str, ...]:
    """Every registered provider, built-ins first."""
    return PROVIDERS.names()


def make_provider(name: str, *, suite_root: Path, settings: ProviderSettings = _DEFAULTS) -> Provider:
    """The provider called ``name``; raises ``UsageError`` for an unknown name or bad settings."""
    load_plugins()
    factory = PROVIDERS.get(name)
    return factory.from_settings(msgspec.structs.replace(settings, suite_root=str(suite_root)))


__all__ = (
    "AgentCliProvider",
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
    "provider_names",
)
