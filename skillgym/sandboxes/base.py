"""The sandbox seam: one backend per run, one sandbox per trial, and every process of the trial inside it.

A backend (``SandboxBackend``, registered with ``@sandbox_backend``) says once, before the matrix, whether
it works here, then opens one ``TrialSandbox`` per trial from a ``SandboxSpec``: which folders the trial
may write, which parts of the host it may not see, and whether it has the network. The trial sandbox
wraps an argv so that it runs inside (``command``), and at the end of the trial stops everything still
running in it (``close``), naming each process it had to stop. A container backend is one more file in
this package: its ``command`` would be an ``exec`` into the trial's container, its ``close`` the
container's removal.
"""

from __future__ import annotations

import abc
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, Protocol

import msgspec

from ..errors import SkillgymError
from ..model import Data
from ..process import ProcessResult, check_startable, run_process

if TYPE_CHECKING:
    from collections.abc import Mapping

Network = Literal["host", "none"]
NETWORKS: Final[tuple[Network, ...]] = ("host", "none")
# bubblewrap is Linux's; elsewhere a run is unsandboxed unless asked otherwise, and says so.
DEFAULT_SANDBOX: Final = "bwrap" if sys.platform.startswith("linux") else "none"
UNSANDBOXED_WARNING: Final = (
    "skillgym: warning: --sandbox none: trials are not sandboxed; an agent can write anywhere you can, "
    "read your home folder and leave processes running that cleanup cannot find"
)


class SandboxUnavailable(SkillgymError):
    """The chosen sandbox cannot run on this machine; the message says how to fix that (exit 2)."""


class SandboxSpec(Data, frozen=True, kw_only=True):
    """What one trial's sandbox lets its processes do; every path is absolute.

    - ``trial_dir``: the trial's own folder, writable, at the same path inside.
    - ``tmp``: a folder in ``trial_dir`` that is ``/tmp`` inside (the trial's ``TMPDIR`` points at it).
    - ``hidden``: folders that are empty inside (the user's home, their runtime dir).
    - ``readable``: folders below a hidden one that stay readable: the install prefixes of the programs on
      PATH, Python's, the suite, what the case declares.
    - ``writable``: more folders the trial may write: what the case declares, a short tmux socket dir.
    - ``network``: ``host`` shares the machine's network; ``none`` leaves only a private loopback.
    """

    trial_dir: str
    tmp: str
    hidden: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    network: Network = "none"


class TrialSandbox(abc.ABC):
    """One trial's sandbox. Nothing need start before the first ``command``; ``close`` may come at any
    time, more than once, and afterwards nothing of the trial runs."""

    @abc.abstractmethod
    async def command(self, argv: Sequence[str], *, cwd: str) -> list[str]:
        """The argv to start on the host so that ``argv`` runs inside the sandbox in ``cwd``.

        Raises ``SandboxUnavailable`` when the sandbox cannot be started (the trial is an environment
        error, with this message).
        """

    @abc.abstractmethod
    async def close(self) -> tuple[str, ...]:
        """End every process still running in the sandbox; a warning for each, naming its command line."""

    async def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout_s: float | None,
        **options: Any,
    ) -> ProcessResult:
        """``run_process`` inside the sandbox: the same arguments, the same result."""
        if isinstance(argv, str) or not argv:
            return await run_process(argv, cwd=cwd, env=env, timeout_s=timeout_s, **options)  # its error
        inside = await self.command(argv, cwd=str(cwd))
        if inside == list(argv):
            return await run_process(argv, cwd=cwd, env=env, timeout_s=timeout_s, **options)
        check_startable(argv, cwd=cwd, env=env)  # the wrapper itself always starts: tell a missing program
        result = await run_process(inside, cwd=cwd, env=env, timeout_s=timeout_s, **options)
        # Callers show the argv they asked for in their messages and logs, not the wrapper around it.
        return msgspec.structs.replace(result, argv=tuple(argv))


class Unsandboxed(TrialSandbox):
    """``--sandbox none``: processes run as the user, and the trial's cleanup stops what they leave."""

    async def command(self, argv: Sequence[str], *, cwd: str) -> list[str]:
        return list(argv)

    async def close(self) -> tuple[str, ...]:
        return ()


UNSANDBOXED: Final = Unsandboxed()


class SandboxBackend(Protocol):
    """What ``@sandbox_backend`` registers: a class with a ``name`` and a ``help`` line, built with no
    arguments once per run."""

    name: ClassVar[str]
    help: ClassVar[str]

    async def problem(self) -> str | None:
        """Why this backend cannot run trials here, and how to fix it; None when it can."""
        ...

    def open(self, spec: SandboxSpec) -> TrialSandbox:
        """The sandbox of one trial (cheap: the backend starts it at the first command)."""
        ...


def make_backend(name: str) -> SandboxBackend:
    """The registered backend called ``name``, built; a ``UsageError`` listing the valid names otherwise."""
    from ..plugins import SANDBOXES

    backend: SandboxBackend = SANDBOXES.get(name)()
    return backend
