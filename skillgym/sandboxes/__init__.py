"""Trial sandboxes: every process a trial starts runs inside its trial's sandbox (see ``base``)."""

from __future__ import annotations

from .base import (
    DEFAULT_SANDBOX,
    NETWORKS,
    Network,
    SandboxBackend,
    SandboxSpec,
    SandboxUnavailable,
    TrialSandbox,
    Unsandboxed,
    make_backend,
)

__all__ = (
    "DEFAULT_SANDBOX",
    "NETWORKS",
    "Network",
    "SandboxBackend",
    "SandboxSpec",
    "SandboxUnavailable",
    "TrialSandbox",
    "Unsandboxed",
    "make_backend",
)
