"""The run: detect providers, schedule trials in one task group, publish lifecycle events in order."""

from __future__ import annotations

import contextlib
import os
import secrets as _secrets
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import msgspec

from . import __version__
from .bus import EventBus, Subscriber, running_bus
from .claim import claim_run_dir
from .errors import ExitCode, SkillgymError
from .events import (
    CaseFinish,
    CaseStart,
    Counts,
    LaneFinish,
    LaneStart,
    RunFinish,
    RunStart,
    TrialFinish,
    TrialStart,
)
from .files import write_atomic
from .hashing import skill_hash
from .model import Case, Data, Suite
from .plan import Plan, WorkItem
from .providers import ProviderSettings, make_provider
from .providers.base import Detection, Provider
from .redact import scrub
from .results import TrialResult
from .slots import AgentSlots
from .snapshots import SnapshotOptions
from .snapshots.apply import finish_summary
from .trial import TrialSettings, needs_workspace, run_trial, workspace_plan
from .workspaces import EnvironmentSetupError, background_removal, injected_text


class OutputError(SkillgymError):
    """The run directory cannot be written (unwritable, full, or removed during the run)."""


class ProviderUnavailable(SkillgymError):
    """A provider cannot run here: reported once, before the matrix, instead of one failure per case."""


class RunOptions(Data, frozen=True, kw_only=True):
    """Run-wide settings from the command line."""

    output: str = "runs"
    concurrency: int = 4
    keep_workspaces: bool = False
    record: bool = False
    replay_source: str | None = None
    agent_command: str | None = None
    baseline_report: str | None = None
    argv: tuple[str, ...] = ()
    run_id: str | None = None
    secrets: tuple[str, ...] = ()
    snapshots: SnapshotOptions | None = None  # --snapshot-check/--snapshot-update at the end of the run


class RunOutcome(Data, frozen=True, kw_only=True):
    run_id: str
    run_dir: str
    exit_code: int
    counts: Counts
    interrupted: bool
    results: tuple[TrialResult, ...]
    summary: dict[str, Any] = {}  # what run.finish carried: token section, snapshot check or update
    leftovers: tuple[str, ...] = ()  # finished trials' files that could not be removed, and why

    def __repr__(self) -> str:
        # Short: asyncio formats the repr of a run's main task, result included, when it puts back its
        # own Ctrl-C handler; the full repr of 20,000 results was a 60 MB string.
        return (
            f"RunOutcome(run_id={self.run_id!r}, exit_code={self.exit_code}, counts={self.counts!r}, "
            f"interrupted={self.interrupted}, results=<{len(self.results)} trials>)"
        )


def new_run_id() -> str:
    """Sortable by time, unique across concurrent runs."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + _secrets.token_hex(3)


def counts_of(results: Sequence[TrialResult]) -> Counts:
    statuses = [r.status for r in results]
    passed, errored = statuses.count("passed"), statuses.count("errored")
    failed = len(statuses) - passed - errored
    return Counts(total=len(statuses), passed=passed, failed=failed, errored=errored)


async def detect_providers(plan: Plan, suite: Suite, options: RunOptions) -> dict[str, Provider]:
    """Build and detect every provider once; any unavailable one stops the run before it starts."""
    settings = ProviderSettings(
        replay_source=options.replay_source, agent_command=options.agent_command, model=plan.model
    )
    providers = {
        name: make_provider(name, suite_root=Path(suite.root), settings=settings) for name in plan.providers
    }
    detections: list[Detection] = [await p.detect() for p in providers.values()]
    problems = [
        f"provider {d.provider!r} is not available: {d.problem or 'no reason given'}"
        for d in detections
        if not d.available
    ]
    if problems:
        raise ProviderUnavailable("\n".join(problems))
    return providers


class _Brackets:
    """Posts lane/case start and finish around trials, in order, even under concurrency.

    Posting never switches tasks, so each method's events go out together, with no lock.
    """

    def __init__(self, plan: Plan, bus: EventBus, run_id: str) -> None:
        self._bus = bus
        self._run_id = run_id
        self._lane_left: Counter[str] = Counter(i.lane for i in plan.items)
        self._group_left = Counter(_group(i) for i in plan.items)
        self._lane_results: dict[str, list[TrialResult]] = {}
        self._group_results: dict[tuple[str, str, str, str], list[TrialResult]] = {}

    def before(self, item: WorkItem, case: Case, workspace: dict[str, object]) -> None:
        now = time.time()
        if item.lane not in self._lane_results:
            self._lane_results[item.lane] = []
            self._bus.post(
                LaneStart(
                    run_id=self._run_id, at=now, lane=item.lane, total_trials=self._lane_left[item.lane]
                )
            )
        group = _group(item)
        if group not in self._group_results:
            self._group_results[group] = []
            self._bus.post(
                CaseStart(
                    run_id=self._run_id,
                    at=now,
                    lane=item.lane,
                    case_id=item.case_id,
                    condition=item.condition,
                    provider=item.provider,
                    fingerprint=case.fingerprint,
                    total_trials=self._group_left[group],
                )
            )
        self._bus.post(
            TrialStart(
                run_id=self._run_id,
                at=now,
                key=item.key,
                lane=item.lane,
                case_id=item.case_id,
                condition=item.condition,
                provider=item.provider,
                model=item.model,
                trial=item.trial,
                fingerprint=item.fingerprint,
                workspace=dict(workspace),
            )
        )

    def after(self, item: WorkItem, result: TrialResult) -> None:
        self._bus.post(TrialFinish(run_id=self._run_id, at=time.time(), result=result))
        group = _group(item)
        self._group_results[group].append(result)
        self._lane_results[item.lane].append(result)
        self._group_left[group] -= 1
        self._lane_left[item.lane] -= 1
        if self._group_left[group] == 0:
            self._close_group(group)
        if self._lane_left[item.lane] == 0:
            self._close_lane(item.lane)

    def close_open(self) -> None:
        """After an interruption: finish every bracket that was opened, with the trials it got."""
        for group, left in self._group_left.items():
            if left > 0 and group in self._group_results:
                self._close_group(group)
        for lane, left in self._lane_left.items():
            if left > 0 and lane in self._lane_results:
                self._close_lane(lane)

    def _close_group(self, group: tuple[str, str, str, str]) -> None:
        lane, case_id, condition, provider = group
        self._bus.post(
            CaseFinish(
                run_id=self._run_id,
                at=time.time(),
                lane=lane,  # type: ignore[arg-type]
                case_id=case_id,
                condition=condition,
                provider=provider,
                counts=counts_of(self._group_results[group]),
            )
        )
        self._group_left[group] = 0

    def _close_lane(self, lane: str) -> None:
        self._bus.post(
            LaneFinish(
                run_id=self._run_id,
                at=time.time(),
                lane=lane,  # type: ignore[arg-type]
                counts=counts_of(self._lane_results[lane]),
            )
        )
        self._lane_left[lane] = 0


def injected_texts(suite: Suite, plan: Plan) -> dict[str, str]:
    """Each planned condition's injected text, read once; a missing file stops the run before it starts."""
    try:
        return {c.id: injected_text(Path(suite.root), c) for c in suite.conditions if c.id in plan.conditions}
    except EnvironmentSetupError as exc:
        raise SkillgymError(f"condition material cannot be read: {exc}") from exc


def _group(item: WorkItem) -> tuple[str, str, str, str]:
    return (item.lane, item.case_id, item.condition, item.provider)


async def execute(
    plan: Plan,
    suite: Suite,
    options: RunOptions,
    subscribers: Sequence[Subscriber],
    *,
    done: Sequence[TrialResult] = (),
    run_dir: Path | None = None,
) -> RunOutcome:
    """Run ``plan``; ``done`` holds results a resumed run already has (those items are not run again).

    The run directory is held by this process while the run lasts (see ``claim_run_dir``).
    """
    providers = await detect_providers(plan, suite, options)
    run_id = options.run_id or new_run_id()
    run_dir = (run_dir or Path(options.output) / run_id).resolve()
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"cannot create the run directory {run_dir}: {exc.strerror or exc}; "
            "pass --output DIR with a writable folder"
        ) from exc
    with claim_run_dir(run_dir), _signal_handlers_restored():
        return await _execute(plan, suite, options, subscribers, providers, done, run_id, run_dir)


async def _execute(
    plan: Plan,
    suite: Suite,
    options: RunOptions,
    subscribers: Sequence[Subscriber],
    providers: dict[str, Provider],
    done: Sequence[TrialResult],
    run_id: str,
    run_dir: Path,
) -> RunOutcome:
    injected = injected_texts(suite, plan)
    cases = {c.id: c for c in suite.cases}
    finished_keys = {r.key for r in done}
    todo = [i for i in plan.items if i.key not in finished_keys]
    settings = TrialSettings(
        run_dir=str(run_dir),
        run_id=run_id,
        injected=injected,
        keep_workspaces=options.keep_workspaces,
        record=options.record,
        secrets=options.secrets,
    )
    start = RunStart(
        run_id=run_id,
        at=time.time(),
        argv=tuple(scrub(arg, options.secrets) for arg in options.argv),
        suite=suite.root,
        suite_dir=str(Path(suite.root).resolve()),
        run_dir=str(run_dir),
        lanes=plan.lanes,
        conditions=plan.conditions,
        providers=plan.providers,
        case_filter=plan.case_ids,
        model=plan.model,
        trials=plan.trials,
        concurrency=options.concurrency,
        total_trials=len(plan.items),
        skill_hash=skill_hash(suite),
        versions={"skillgym": __version__, "python": sys.version.split()[0]},
        resumed=bool(done),
        baseline_report=options.baseline_report,
        settings={
            "keep_workspaces": options.keep_workspaces,
            "record": options.record,
            "replay_source": options.replay_source,
            "agent_command": options.agent_command and scrub(options.agent_command, options.secrets),
        },
    )
    try:
        write_atomic(run_dir / "run.json", msgspec.json.format(msgspec.json.encode(start)).decode() + "\n")
    except OSError as exc:
        raise OutputError(
            f"cannot write {run_dir / 'run.json'}: {exc.strerror or exc}; "
            "pass --output DIR with a writable folder"
        ) from exc
    results: list[TrialResult] = list(done)
    interrupted = False
    t0 = time.monotonic()
    async with running_bus(*subscribers) as bus:
        await bus.publish(start)
        brackets = _Brackets(plan, bus, run_id)
        by_key = {i.key: i for i in plan.items}
        for prior in done:  # a resumed run replays finished trials so every reporter sees the whole run
            item = by_key[prior.key]
            brackets.before(item, cases[item.case_id], {})
            brackets.after(item, prior)
            await bus.room()
        pending = iter(todo)
        run_path = str(run_dir)  # checked before every trial: a plain string stats faster than a Path

        async def worker(ahead: bool) -> None:
            # A fixed pool pulling from one iterator (safe: one event loop thread), rather than one task
            # per trial queued on a limiter: a 20,000-trial run then wakes 64 tasks, not 20,000.
            if ahead:  # the first trials' setup goes first: it is what every slot is waiting for
                await slots.filled.wait()
            for item in pending:
                if not os.path.isdir(run_path):  # removed under us: writing on would silently recreate a husk
                    stop.output_error = f"{run_dir} was removed"
                    stop.interrupted = True
                    tg.cancel_scope.cancel()
                    return
                # One real yield per trial, even when a provider never awaits: signals, ticks and the
                # reporters get their turn, and cancellation lands here. Then wait for slow reporters.
                await anyio.lowlevel.checkpoint()
                await bus.room()
                case = cases[item.case_id]
                brackets.before(item, case, workspace_plan(suite, case, item, settings))
                try:
                    result = await run_trial(
                        suite, case, item, providers[item.provider], settings, slots=slots
                    )
                except OSError as exc:
                    # The trial could not write its own files: the output dir is gone or unwritable, and
                    # every later trial would fail the same way. Stop the run; what finished is kept.
                    stop.output_error = f"{exc.filename or run_dir}: {exc.strerror or exc}"
                    stop.interrupted = True
                    tg.cancel_scope.cancel()
                    return
                results.append(result)
                brackets.after(item, result)
            slots.filled.set()  # nothing left to start: workers still holding back have nothing to wait for

        stop = _Stop()
        # --concurrency trials run their agent and grading at once; as many more workers set up the next
        # trials and clean up finished ones meanwhile, so a slot is not idle while a trial's files move.
        slots = AgentSlots(max(1, options.concurrency))
        # Finished trials' workspaces are removed off their path; the block waits for that, Ctrl-C or not.
        async with background_removal() as leftovers, anyio.create_task_group() as tg:
            tg.start_soon(_watch_signals, tg.cancel_scope, stop)
            async with anyio.create_task_group() as trials:
                # Setting up ahead only pays where there is a workspace to set up, and --concurrency 1 keeps
                # trials strictly one after another (a bootstrap may start what the agent before would see).
                ahead = slots.total > 1 and any(
                    needs_workspace(cases[i.case_id], providers[i.provider]) for i in todo
                )
                for number in range(min((2 if ahead else 1) * slots.total, len(todo))):
                    trials.start_soon(worker, number >= slots.total, name=f"trial-worker-{number}")
            tg.cancel_scope.cancel()  # all trials done: stop watching signals
        interrupted = stop.interrupted
        if interrupted:
            brackets.close_open()
        counts = counts_of(results)
        # Token snapshots never change the verdict, unless --snapshot-enforce makes a regression fail it.
        finish = finish_summary(results, suite, options.snapshots, run_id=run_id, interrupted=interrupted)
        passed = counts.passed == counts.total and not finish.fails_run
        exit_code: int = ExitCode.INTERRUPTED if interrupted else (ExitCode.OK if passed else ExitCode.FAILED)
        if stop.output_error is not None:
            exit_code = OutputError.exit_code
        await bus.publish(
            RunFinish(
                run_id=run_id,
                at=time.time(),
                counts=counts,
                exit_code=exit_code,
                duration_s=round(time.monotonic() - t0, 6),
                interrupted=interrupted,
                summary=finish.summary,
            )
        )
    if stop.output_error is not None:
        raise OutputError(
            f"the run directory stopped being writable during the run ({stop.output_error}); "
            f"{len(results)} finished trials are in its event log if it still exists; "
            "use a stable, writable --output"
        )
    order = {item.key: index for index, item in enumerate(plan.items)}
    return RunOutcome(
        run_id=run_id,
        run_dir=str(run_dir),
        exit_code=exit_code,
        counts=counts,
        interrupted=interrupted,
        results=tuple(sorted(results, key=lambda r: order.get(r.key, len(order)))),
        summary=finish.summary,
        leftovers=tuple(leftovers),
    )


class _Stop:
    interrupted = False
    output_error: str | None = None


_STOPPING = (
    b"skillgym: stopping: ending the agents and writing the report (Ctrl-\\ quits at once, without them)\n"
)


@contextlib.contextmanager
def _signal_handlers_restored() -> Iterator[None]:
    """Whatever a run does to SIGINT and SIGTERM is undone when it ends, however it ends."""
    if os.name != "posix" or threading.current_thread() is not threading.main_thread():
        yield  # signals are only handled in the main thread; nothing is changed elsewhere
        return
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


async def _watch_signals(scope: anyio.CancelScope, stop: _Stop) -> None:
    # Ctrl-C (or SIGTERM) cancels the trials; their cleanup runs shielded, finished files stay, and the
    # run still publishes run.finish so every reporter closes properly.
    if os.name != "posix":  # pragma: no cover
        return
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
        async for _ in received:
            stop.interrupted = True
            scope.cancel()
            break
    # Stopping takes a few seconds (agents get a grace period, shielded cleanup runs to its end): another
    # Ctrl-C says so instead of losing the report. The run restores the handlers when it ends.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _say_stopping)


def _say_stopping(signum: int, frame: object) -> None:
    os.write(2, _STOPPING)
