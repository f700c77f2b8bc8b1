"""Providers: adapters that run an agent (or stand in for one) and hand back a Trace."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from ..errors import UsageError
from .base import Detection as Detection
from .base import Provider as Provider
from .base import ProviderRequest as ProviderRequest
from .base import ProviderResult as ProviderResult
from .replay import ReplayProvider as ReplayProvider
from .stub import StubProvider as StubProvider
from .tracefmt import PARSERS as PARSERS
from .tracefmt import StreamParseError as StreamParseError

PROVIDER_NAMES: Final = ("replay", "stub")


def make_provider(name: str, *, suite_root: Path, source: str | None = None) -> Provider:
    """The provider called ``name``; ``source`` (``"provider/model"``) picks the cassettes to replay.

    ``source`` only means something to ``replay``; the others ignore it, so one run can mix providers.
    Raises ``UsageError`` for an unknown name or a malformed source.
    """
    if name == "replay":
        return ReplayProvider(suite_root, source)
    if name == "stub":
        return StubProvider(suite_root)
    raise UsageError(f"unknown provider {name!r}; valid providers: {', '.join(PROVIDER_NAMES)}")


__all__ = (
    "PARSERS",
    "PROVIDER_NAMES",
    "Detection",
    "Provider",
    "ProviderRequest",
    "ProviderResult",
    "ReplayProvider",
    "StreamParseError",
    "StubProvider",
    "make_provider",
)
