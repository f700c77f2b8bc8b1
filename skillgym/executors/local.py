"""The default executor: every trial in this process's task group, on this machine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..plugins import executor
from .base import Executor

if TYPE_CHECKING:
    from ..model import Case
    from ..plan import WorkItem
    from ..results import TrialResult
    from ..runner import RunContext
    from ..slots import AgentSlots


@executor
class LocalExecutor(Executor):
    """``--executor local``: trials run here, ``--concurrency`` agents at a time."""

    name = "local"

    async def run(self, run: RunContext, case: Case, item: WorkItem, slots: AgentSlots) -> TrialResult:
        from ..trial import run_trial  # the engine, only once a run starts: `list` stays fast

        provider = run.providers[item.id.provider]
        return await run_trial(run.suite, case, item, provider, run.settings, slots=slots)
