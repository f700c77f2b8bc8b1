"""Providers: adapters that run an agent (or stand in for one) and hand back a Trace.

Each provider registers itself with ``@provider`` (see ``skillgym.plugins``); ``make_provider`` builds
one by name from the registry, so a third-party provider is built the same way as the built-in ones.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from ..plugins import PROVIDERS, PluginError, load_plugins
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
# What every provider declares (``Provider``'s properties): checked once when one is built, so a plug-in
# written for an older contract is one clear error instead of a crash in the middle of a run.
REQUIRED: tuple[str, ...] = (
    "name",
    "skill_dirs",
    "runs_agent",
    "passthrough_env",
    "home_env",
    "stream_format",
    "network",
    "sandbox_readable",
)


def provider_names() -> tuple[str, ...]:
    """Every registered provider, built-ins first."""
    return PROVIDERS.names()


def make_provider(name: str, *, suite_root: Path, settings: ProviderSettings = _DEFAULTS) -> Provider:
    """The provider called ``name``; raises ``UsageError`` for an unknown name or bad settings."""
    load_plugins()
    factory = PROVIDERS.get(name)
    built = factory.from_settings(msgspec.structs.replace(settings, suite_root=str(suite_root)))
    missing = [attribute for attribute in REQUIRED if not hasattr(built, attribute)]
    if missing:
        raise PluginError(
            f"provider {name!r} ({PROVIDERS.origin(name)}) lacks {', '.join(missing)}; a provider declares "
            "every property of skillgym.providers.base.Provider (network: 'host' or 'none'; "
            "sandbox_readable: a tuple of folders, usually ())"
        )
    return built


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
