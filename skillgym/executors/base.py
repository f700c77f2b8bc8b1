"""The executor seam: where a run's trials run — in this process (``local``) or on a cluster (``ray``).

The runner keeps the plan, the event bus, the reporters, resume and the statistics; an executor only
runs one work item at a time for it and hands back its ``TrialResult``, with the trial's folder in the
run folder. An executor is one file in this package, registered with ``@executor``: ``start`` checks,
once before the matrix, that it can run this run's trials (a problem is one configuration error, exit 2);
``run`` runs one trial; ``stop`` lets go of whatever ``start`` took.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, ClassVar, Final, Literal, TypeAlias

from ..errors import SkillgymError
from ..model import Data

if TYPE_CHECKING:
    from ..model import Case
    from ..plan import WorkItem
    from ..results import TrialResult
    from ..runner import RunContext
    from ..slots import AgentSlots

DEFAULT_EXECUTOR: Final = "local"
Transfer: TypeAlias = Literal["auto", "shared", "copy"]
TRANSFERS: Final[tuple[Transfer, ...]] = ("auto", "shared", "copy")


class ExecutorUnavailable(SkillgymError):
    """The executor cannot run this run's trials (no cluster, a node without the agent CLI, ...): the
    message names the node and the fix (exit 2, before any trial starts)."""


class ExecutorSettings(Data, frozen=True, kw_only=True):
    """``--executor`` and its options, recorded in run.json so a resume runs where the run ran.

    - ``address``: the Ray cluster to join (``--ray-address``); None: ``RAY_ADDRESS``, else a Ray instance
      started on this machine for the run.
    - ``trial_cpus`` / ``trial_memory_mb``: what each trial reserves on its node, so the cluster places
      trials where they fit (``--trial-cpus``, ``--trial-memory-mb``; memory None: none reserved).
    - ``transfer``: how a trial's folder reaches the run folder (``--trial-files``): ``shared`` writes it in
      place (the run folder is on storage every node mounts at the same path), ``copy`` writes it on the
      node and sends it back, ``auto`` picks ``shared`` on a node that sees the run folder, else ``copy``.
    """

    name: str = DEFAULT_EXECUTOR
    address: str | None = None
    trial_cpus: float = 1.0
    trial_memory_mb: int | None = None
    transfer: Transfer = "auto"


class Executor(abc.ABC):
    """Runs a run's trials, one ``run`` call per work item, any number of calls at once."""

    name: ClassVar[str]
    # Whether a trial's workspace is set up in this process: the runner then prepares the next trials
    # while other trials' agents hold every --concurrency slot. A remote trial is set up where it runs.
    sets_up_here: ClassVar[bool] = True

    def __init__(self, settings: ExecutorSettings) -> None:
        self.settings = settings

    async def start(self, run: RunContext) -> int | None:
        """Check that this run's trials can run (raise ``ExecutorUnavailable`` saying why and how to fix
        it); the trials it can run at once, when it knows better than the providers' default."""
        return None

    @abc.abstractmethod
    async def run(self, run: RunContext, case: Case, item: WorkItem, slots: AgentSlots) -> TrialResult:
        """Run ``item`` and return its result, its files written in the run folder; hold one of ``slots``
        while its agent runs. Raises only as ``run_trial`` does: cancelled, or the run folder unwritable."""

    async def stop(self) -> None:  # noqa: B027 - a hook: an executor that takes nothing has nothing to do
        """Let go of what ``start`` took; called once, however the run ended."""


def make_executor(settings: ExecutorSettings) -> Executor:
    """The registered executor ``settings.name``, built; a ``UsageError`` listing the valid ones otherwise."""
    from ..plugins import EXECUTORS

    return EXECUTORS.get(settings.name)(settings)
