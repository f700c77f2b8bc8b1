"""What runs on a Ray node for ``--executor ray``: the run's preflight, and one trial at a time.

The driver sends a ``NodeRun`` once per run (in Ray's object store) and then, per trial, only the case id
and the work item. A worker process opens the run once (the suite, its providers detected, the sandbox
checked) and keeps it for the trials it is given; each trial runs ``run_trial`` in an event loop of its
own, exactly as a local run would. Where the trial's folder is written depends on ``transfer``: in the
run folder itself when this node sees it (shared storage), else in a staging folder on the node, packed
and sent back to the driver, which unpacks it into the run folder.

Nothing here imports Ray at module level: the module is loaded with every executor, and Ray is an extra.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import sys
import tarfile
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import anyio
import msgspec

from ..cost.prices import PriceTable
from ..model import Data, Suite
from ..plan import WorkItem
from ..results import TrialResult
from ..sandboxes.base import Network
from .base import Transfer

STAGING: Final = "skillgym-ray"  # below the node's temporary folder: trial folders on their way back


class JudgeArgs(Data, frozen=True, kw_only=True):
    """How the run's judge is opened, so that each node opens the same one (see ``judge.run``)."""

    judge: str | None
    record: bool = False
    cache: str | None = None
    timeout_s: float
    pairwise: bool = False


class NodeRun(Data, frozen=True, kw_only=True):
    """Everything a node needs to run this run's trials, sent once per run."""

    run_id: str
    run_dir: str  # the driver's run folder (absolute)
    suite: Suite
    suite_files: str  # hashing.suite_files_hash of the suite folder on the driver
    version: str  # skillgym's, on the driver
    python: str  # major.minor, on the driver
    providers: tuple[str, ...]
    replay_source: str | None = None
    agent_command: str | None = None
    model: str | None = None
    sandbox: str
    network: Network | None = None
    sandbox_writable: tuple[str, ...] = ()
    keep_workspaces: bool = False
    record: bool = False
    injected: dict[str, str] = {}
    prices: PriceTable | None = None
    judge: JudgeArgs | None = None
    transfer: Transfer = "auto"


class NodeOutcome(Data, frozen=True, kw_only=True):
    """One trial's answer from its node: the result, and its folder when it was not written in place."""

    node: str
    result: TrialResult
    files: bytes | None = None  # the trial folder as a gzip tar, relative to the trial folder
    staged_run_dir: str | None = None  # the run folder the node wrote in instead of the driver's


_encoder = msgspec.msgpack.Encoder()
_runs: dict[str, _Opened] = {}  # this worker process's opened runs, by run id


def encode(value: Any) -> bytes:
    return _encoder.encode(value)


def node_id() -> str:
    import ray

    return str(ray.get_runtime_context().get_node_id())


def preflight(blob: bytes) -> list[str]:
    """What stops this node from running the run's trials; empty when it can."""
    run = msgspec.msgpack.decode(blob, type=NodeRun)
    from .. import __version__
    from ..hashing import suite_files_hash

    problems: list[str] = []
    if __version__ != run.version:
        problems.append(
            f"skillgym {__version__} is installed here, {run.version} on the driver; install the same version"
        )
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    if python != run.python:
        problems.append(f"Python {python} here, {run.python} on the driver")
    if not Path(run.suite.root).is_dir():
        problems.append(
            f"the suite folder {run.suite.root} does not exist here; check the same suite out at the same "
            "path on every node (or put it on shared storage)"
        )
    elif suite_files_hash(run.suite.root) != run.suite_files:
        problems.append(
            f"the suite folder {run.suite.root} differs from the driver's; check out the same revision"
        )
    if problems:
        return problems
    try:
        _open(run)
    except Exception as exc:  # a provider or sandbox that cannot run here: said once, as the driver would
        problems.append(str(exc))
    return problems


class _Opened:
    """A run as one worker process keeps it: providers detected and the sandbox checked, once."""

    def __init__(self, run: NodeRun, providers: dict[str, Any], sandbox: Any) -> None:
        self.run = run
        self.providers = providers
        self.sandbox = sandbox
        self.cases = {c.id: c for c in run.suite.cases}
        # What a trial here scrubs from what it writes: as a local run on this node would, the suite's
        # secrets, this node's secret-looking environment and the credentials its agents get. The
        # driver's own are never sent: they cannot reach a trial here.
        from ..redact import secret_values, suite_secrets
        from ..runner import provider_credentials

        self.secrets = suite_secrets(
            run.suite, (*secret_values(os.environ), *provider_credentials(providers))
        )
        self.shared: bool | None = None  # whether this node writes in the run folder itself


def _open(run: NodeRun) -> _Opened:
    opened = _runs.get(run.run_id)
    if opened is None:
        opened = anyio.run(_opened, run)
        _runs.clear()  # a worker serves one run at a time: the previous run's providers can go
        _runs[run.run_id] = opened
    return opened


async def _opened(run: NodeRun) -> _Opened:
    from ..plan import Plan
    from ..runner import RunOptions, check_sandbox, detected

    plan = Plan(
        suite=run.suite.root,
        lanes=(),
        conditions=(),
        providers=run.providers,
        model=run.model,
        trials=1,
        items=(),
        presets=(),
    )
    options = RunOptions(replay_source=run.replay_source, agent_command=run.agent_command)
    sandbox = await check_sandbox(run.sandbox)
    providers, _ = await detected(plan, run.suite, options)
    return _Opened(run, providers, sandbox)


def run_trial_here(blob: bytes, case_id: str, item_blob: bytes) -> bytes:
    """Run one trial on this node; its ``NodeOutcome``, encoded."""
    run = msgspec.msgpack.decode(blob, type=NodeRun)
    opened = _open(run)
    item = msgspec.msgpack.decode(item_blob, type=WorkItem)
    node = node_id()
    shared = _writes_in_place(opened)
    run_dir = run.run_dir if shared else os.path.join(tempfile.gettempdir(), STAGING, run.run_id)
    folder = f"{run_dir}{os.sep}trials{os.sep}{item.id.key}"
    os.makedirs(f"{run_dir}{os.sep}trials", exist_ok=True)  # a staging folder is made on first use
    if os.path.lexists(folder):  # an attempt on a node that died, or a resumed run's unfinished trial
        shutil.rmtree(folder, ignore_errors=True)
    result = _unmasked(lambda: anyio.run(_trial, opened, case_id, item, run_dir, node))
    if shared:
        return encode(NodeOutcome(node=node, result=result))
    files = pack(folder)
    shutil.rmtree(folder, ignore_errors=True)
    return encode(NodeOutcome(node=node, result=result, files=files, staged_run_dir=run_dir))


def _unmasked(work: Callable[[], TrialResult]) -> TrialResult:
    """``work()`` in a thread that blocks no signal. A Ray worker blocks SIGINT, and every process a
    thread starts inherits its mask: the agent, tmux and a fixture's Ctrl-C would not work as they do
    in a local run. The trial's processes start from this thread's event loop."""
    box: list[TrialResult] = []
    failed: list[BaseException] = []

    def body() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
        try:
            box.append(work())
        except BaseException as exc:  # handed to the worker's own thread, which raises it
            failed.append(exc)

    thread = threading.Thread(target=body, name="skillgym-trial")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return box[0]


def _writes_in_place(opened: _Opened) -> bool:
    """Whether this node writes trial folders in the driver's run folder: it sees that folder (its
    run.json names this run) and ``transfer`` allows it. ``shared`` on a node that cannot is an error."""
    if opened.shared is None:
        run = opened.run
        marker = Path(run.run_dir) / "run.json"
        try:
            sees = msgspec.json.decode(marker.read_bytes()).get("run_id") == run.run_id
        except (OSError, msgspec.DecodeError, AttributeError):
            sees = False
        if run.transfer == "shared" and not sees:
            raise RuntimeError(
                f"--trial-files shared: the run folder {run.run_dir} is not visible on node {node_id()}; "
                "mount it at the same path on every node, or use --trial-files copy"
            )
        opened.shared = sees and run.transfer != "copy"
    return opened.shared


async def _trial(opened: _Opened, case_id: str, item: WorkItem, run_dir: str, node: str) -> TrialResult:
    from ..judge.run import open_session
    from ..trial import TrialSettings, run_trial

    run = opened.run
    case = opened.cases[case_id]
    judge = None
    if run.judge is not None:
        judge, _ = await open_session(
            run.suite,
            planned={case_id},
            judge=run.judge.judge,
            record=run.judge.record,
            cache=run.judge.cache,
            timeout_s=run.judge.timeout_s,
            sandbox=opened.sandbox,
            pairwise=run.judge.pairwise,
            workdir=os.path.join(run_dir, "judge"),
        )
    settings = TrialSettings(
        run_dir=run_dir,
        run_id=run.run_id,
        keep_workspaces=run.keep_workspaces,
        record=run.record,
        secrets=opened.secrets,
        injected=run.injected,
        sandbox=opened.sandbox,
        network=run.network,
        sandbox_writable=run.sandbox_writable,
        prices=run.prices,
        judge=judge,
        node=node,
    )
    return await run_trial(run.suite, case, item, opened.providers[item.id.provider], settings)


def pack(folder: str) -> bytes:
    """``folder``'s files as a gzip tar, named relative to it (links kept as links)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        tar.add(folder, arcname=".")
    return buffer.getvalue()


def unpack(files: bytes, folder: str) -> None:
    """Put a packed trial folder at ``folder``, replacing whatever an earlier attempt left there."""
    if os.path.lexists(folder):
        shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(files), mode="r:gz") as tar:
        # "tar": no absolute or parent-escaping member names, no device files; links may point anywhere,
        # as the trial's own did (a skill installed as a link to the suite).
        if hasattr(tarfile, "tar_filter"):
            tar.extractall(folder, filter="tar")
        else:  # pragma: no cover - Python before 3.11.4 has no filters; the node is the run's own
            tar.extractall(folder)
