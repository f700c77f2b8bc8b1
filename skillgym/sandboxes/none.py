"""``--sandbox none``: no sandbox at all; trials run as the user, who is warned at the start of the run."""

from __future__ import annotations

from typing import ClassVar

from ..plugins import sandbox_backend
from .base import UNSANDBOXED, SandboxSpec, TrialSandbox


@sandbox_backend
class NoSandbox:
    name: ClassVar[str] = "none"
    help: ClassVar[str] = (
        "no sandbox: agents can write anywhere you can and read your home (a warning says so)"
    )

    async def problem(self) -> str | None:
        return None

    def open(self, spec: SandboxSpec) -> TrialSandbox:
        return UNSANDBOXED
