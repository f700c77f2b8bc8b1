"""``--executor ray``: each trial a Ray task on a cluster node; the run itself stays here.

This process (the driver) keeps the plan, the event bus, the reporters, resume and the statistics, as a
local run does. ``start`` joins the cluster (``--ray-address``, else ``RAY_ADDRESS``, else a Ray instance
started on this machine), sends the run to the object store once, and checks every live node before any
trial starts: the same skillgym and Python, the same suite at the same path, the plan's agent CLIs and
the sandbox working there; any problem is one configuration error naming the node. ``run`` submits one
task per trial, reserving ``--trial-cpus`` and ``--trial-memory-mb`` so that Ray places it where it fits,
and holds one ``--concurrency`` slot until the trial is back. A node that dies mid-trial makes Ray run the
task again elsewhere, once; a second loss is the trial's ``environment-error``. Finished trials are in
the event log as they come back, so a driver that dies loses nothing finished: ``--resume`` goes on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from typing import TYPE_CHECKING, Any, Final

import anyio
import msgspec

from .. import __version__
from ..files import write_atomic
from ..hashing import suite_files_hash
from ..plugins import executor
from ..redact import scrubbed_json
from ..results import rehomed
from .base import Executor, ExecutorUnavailable
from .ray_node import JudgeArgs, NodeOutcome, NodeRun, encode, preflight, run_trial_here, unpack

if TYPE_CHECKING:
    from ..model import Case
    from ..plan import WorkItem
    from ..results import TrialResult
    from ..runner import RunContext
    from ..slots import AgentSlots

PREFLIGHT_TIMEOUT_S: Final = 120.0  # a node's first worker starts a Python and imports skillgym and Ray
RETRIES: Final = 1  # Ray runs a task again once when its node or worker dies under it
INSTALL: Final = "pip install 'skillgym[ray]'"


@executor
class RayExecutor(Executor):
    """Trials as Ray tasks on the nodes of a cluster (an optional extra: ``skillgym[ray]``)."""

    name = "ray"
    sets_up_here = False

    _ray: Any = None
    _run_ref: Any = None
    _task: Any = None
    _started_ray = False

    async def start(self, run: RunContext) -> int | None:
        try:
            import ray
        except ImportError:
            raise ExecutorUnavailable(
                f"--executor ray needs Ray, which is not installed here: {INSTALL} (on this machine and on "
                "every node of the cluster)"
            ) from None
        self._ray = ray
        self._connect()  # in the main thread: Ray sets its signal handlers only there
        blob = encode(node_run(run, self.settings.transfer))
        self._run_ref = ray.put(blob)
        self._task = ray.remote(run_trial_here)
        nodes, problems = await anyio.to_thread.run_sync(self._preflight)
        if problems:
            raise ExecutorUnavailable(
                "--executor ray: some cluster nodes cannot run this run's trials:\n"
                + "\n".join(f"  {problem}" for problem in problems)
            )
        cpus = [float(n.get("Resources", {}).get("CPU", 0)) for n in nodes]
        need = self.settings.trial_cpus
        if max(cpus, default=0.0) < need:  # Ray would hold every trial forever, waiting for such a node
            raise ExecutorUnavailable(
                f"--trial-cpus {need:g}: no node of the cluster has that many CPUs (the largest has "
                f"{max(cpus, default=0.0):g}); ask for fewer"
            )
        return max(1, sum(int(n // need) for n in cpus))  # the trials that fit at once, node by node

    def _connect(self) -> None:
        ray, address = self._ray, self.settings.address
        options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
        if address is None and not os.environ.get("RAY_ADDRESS"):
            options["include_dashboard"] = False  # a Ray instance of this run's own, on this machine
        try:
            ray.init(address=address, **options)
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError or ValueError, by version
            where = address or os.environ.get("RAY_ADDRESS") or "a new local Ray instance"
            raise ExecutorUnavailable(
                f"--executor ray: cannot join the Ray cluster at {where}: {type(exc).__name__}: {exc}; "
                "start it (`ray start --head`), or pass its address with --ray-address HOST:PORT"
            ) from exc
        self._started_ray = True

    def _preflight(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The live nodes that were checked, and their problems, each line naming the node.

        A node that leaves the cluster while it is checked (one that died a moment ago is still listed
        alive for a while) is no problem: Ray places no trial there."""
        ray = self._ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        check = ray.remote(preflight)
        nodes = _alive(ray)
        refs = [
            check.options(
                num_cpus=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
            ).remote(self._run_ref)
            for node in nodes
        ]
        checked: list[dict[str, Any]] = []
        problems: list[str] = []
        for node, ref in zip(nodes, refs, strict=True):
            where = f"node {node['NodeID'][:12]} ({node.get('NodeManagerAddress', '?')})"
            try:
                found = ray.get(ref, timeout=PREFLIGHT_TIMEOUT_S)
            except ray.exceptions.GetTimeoutError:
                found = [f"no answer within {PREFLIGHT_TIMEOUT_S:g}s; is the node busy or unreachable?"]
            except ray.exceptions.RayTaskError as exc:  # the check itself raised there
                found = [f"the check failed: {_said(exc)} (is skillgym installed there?)"]
            except ray.exceptions.RayError as exc:  # it could not run there: the node went, or is going
                if node["NodeID"] not in {n["NodeID"] for n in _alive(ray)} or _unschedulable(ray, exc):
                    continue
                found = [f"the check could not run there: {_said(exc)}"]
            checked.append(node)
            problems += [f"{where}: {problem}" for problem in found]
        return checked, problems

    async def run(self, run: RunContext, case: Case, item: WorkItem, slots: AgentSlots) -> TrialResult:
        ray = self._ray
        options: dict[str, Any] = {
            "num_cpus": self.settings.trial_cpus,
            "max_retries": RETRIES,
            "retry_exceptions": False,
        }
        if self.settings.trial_memory_mb:
            options["memory"] = self.settings.trial_memory_mb * 1024 * 1024
        await slots.take()
        started = time.time()
        try:
            ref = self._task.options(**options).remote(self._run_ref, case.id, encode(item))
            try:
                blob = await asyncio.wrap_future(ref.future())
            except ray.exceptions.RayTaskError as exc:  # the trial raised on its node: not retried
                return _lost(run, case, item, f"the trial failed on its node: {_said(exc)}", started)
            except ray.exceptions.RayError as exc:  # its node or worker died, on every attempt
                why = (
                    f"the trial's Ray task failed on {RETRIES + 1} attempts ({_said(exc)}): its node or "
                    "worker died under it each time, or the cluster could not run it"
                )
                return _lost(run, case, item, why, started)
            except BaseException:  # cancelled (Ctrl-C): the trial's worker, and with it its sandbox, ends
                ray.cancel(ref, force=True)
                raise
        finally:
            slots.give()
        outcome = msgspec.msgpack.decode(blob, type=NodeOutcome)
        if outcome.files is None:
            return outcome.result
        return await anyio.to_thread.run_sync(_unpacked, run, item, outcome)

    async def stop(self) -> None:
        if self._started_ray:
            await anyio.to_thread.run_sync(self._ray.shutdown)
            self._started_ray = False


def node_run(run: RunContext, transfer: Any) -> NodeRun:
    """What every node needs of ``run``: the suite and the run's settings, without this process's objects."""
    options, settings = run.options, run.settings
    root = os.path.abspath(run.suite.root)  # the nodes' workers start in folders of their own
    return NodeRun(
        run_id=run.run_id,
        run_dir=str(run.run_dir),
        suite=msgspec.structs.replace(run.suite, root=root),
        suite_files=suite_files_hash(root),
        version=__version__,
        python=f"{sys.version_info.major}.{sys.version_info.minor}",
        providers=run.plan.providers,
        replay_source=options.replay_source,
        agent_command=options.agent_command,
        model=run.plan.model,
        sandbox=options.sandbox,
        network=options.network,
        sandbox_writable=options.sandbox_writable,
        keep_workspaces=options.keep_workspaces,
        record=options.record,
        injected=settings.injected,
        prices=settings.prices,
        judge=None
        if settings.judge is None
        else JudgeArgs(
            judge=options.judge,
            record=options.judge_record,
            cache=options.judge_cache,
            timeout_s=options.judge_timeout_s,
        ),
        transfer=transfer,
    )


def _alive(ray: Any) -> list[dict[str, Any]]:
    return [node for node in ray.nodes() if node.get("Alive")]


def _unschedulable(ray: Any, exc: BaseException) -> bool:
    """Ray could not place a task on the node it was pinned to: the node has left the cluster."""
    kind = getattr(ray.exceptions, "TaskUnschedulableError", None)
    return kind is not None and isinstance(exc, kind)


def _said(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}".rstrip(": ")


def _lost(run: RunContext, case: Case, item: WorkItem, why: str, started: float) -> TrialResult:
    """A trial that never came back: an error that is not the agent's, recorded with ``why``."""
    from ..trial import lost_result

    return lost_result(case, item, run.settings, ("environment-error", why), started=started)


def _unpacked(run: RunContext, item: WorkItem, outcome: NodeOutcome) -> TrialResult:
    """A trial folder written on its node, unpacked in the run folder; its result says where it is now."""
    from ..trial import trial_dir

    assert outcome.files is not None and outcome.staged_run_dir is not None
    folder = trial_dir(run.settings, item)
    unpack(outcome.files, folder)
    # Paths in the result are the run folder's, as a local run's would be.
    moved = rehomed(outcome.result, outcome.staged_run_dir, str(run.run_dir))
    moved, encoded = scrubbed_json(moved, run.settings.secrets)
    write_atomic(os.path.join(folder, "result.json"), encoded)
    return moved
