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
from .cost.budget import BudgetGate, check_budget
from .cost.estimate import estimate_plan, per_trial
from .cost.model import BudgetStop, RunBudget
from .cost.prices import PriceTable, load_prices, price_layers
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
from .executors.base import Executor, ExecutorSettings, make_executor
from .files import write_atomic
from .finishers import finish_parts
from .gates.step import run_exit_code
from .hashing import skill_hash
from .identity import Group
from .judge.flags import DEFAULT_JUDGE_TIMEOUT_S
from .judge.run import open_session
from .judge.session import JudgeSession
from .latest import point_latest
from .model import Case, Data, Lane, Suite
from .plan import Plan, WorkItem
from .providers import ProviderSettings, make_provider
from .providers.base import DEFAULT_CONCURRENCY, Detection, Provider, default_concurrency
from .redact import MIN_SECRET_LENGTH, scrub, scrub_struct, suite_secrets
from .results import TrialResult
from .sandboxes.base import DEFAULT_SANDBOX, Network, SandboxBackend, SandboxUnavailable, make_backend
from .scheduler import Schedule, make_schedule
from .shard import ShardSpec, plan_fingerprint
from .slots import AgentSlots
from .trial import TrialSettings, needs_workspace, workspace_plan
from .workspaces import EnvironmentSetupError, background_removal, injected_text


class OutputError(SkillgymError):
    """The run directory cannot be written (unwritable, full, or removed during the run)."""


class ProviderUnavailable(SkillgymError):
    """A provider cannot run here: reported once, before the matrix, instead of one failure per case."""


class RunOptions(Data, frozen=True, kw_only=True):
    """Run-wide settings from the command line."""

    output: str = "runs"
    concurrency: int | None = None  # None: the providers' own default (the smallest, with several)
    keep_workspaces: bool = False
    record: bool = False
    replay_source: str | None = None
    agent_command: str | None = None
    baseline_report: str | None = None
    argv: tuple[str, ...] = ()
    run_id: str | None = None
    secrets: tuple[str, ...] = ()
    sandbox: str = DEFAULT_SANDBOX
    network: Network | None = None  # None: each provider's own (host for agents, none for stand-ins)
    sandbox_writable: tuple[str, ...] = ()  # absolute folders every trial may also write
    plan_settings: dict[str, Any] = {}  # how the plan was made beyond run.start's fields (adaptive, A/A)
    shard: ShardSpec | None = None  # `run --shard I/N`: the plan given is this part of the whole
    prices: PriceTable | None = None  # the merged price table (default, suite's, --prices)
    price_files: tuple[str, ...] = ()  # the override files it merged, absolute: a resume merges them again
    budget: RunBudget | None = None  # --budget-usd / --budget-tokens
    snapshot_dir: str = "snapshots"  # where a budget finds per-cell estimates before a cell has finished
    gates: tuple[str, ...] = ()  # --gate, as given: a resume judges them again
    fail_on_regression: bool = False
    judge: str | None = None  # --judge PROVIDER:MODEL; None: replay of the suite's judged_by(...) judge
    judge_record: bool = False
    judge_cache: str | None = None  # a folder; "none": no cache; None: the default cache folder
    judge_timeout_s: float = DEFAULT_JUDGE_TIMEOUT_S
    compare_conditions: str | None = None  # "judge": blind pairwise comparison after the run
    pairwise_seed: int = 0
    executor: ExecutorSettings = ExecutorSettings()  # where trials run: here, or on a Ray cluster


class RunOutcome(Data, frozen=True, kw_only=True):
    run_id: str
    run_dir: str
    exit_code: int
    counts: Counts
    interrupted: bool
    results: tuple[TrialResult, ...]
    finish: RunFinish  # the run.finish event: what the finishers added (token section, snapshot step)
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
    providers, _ = await detected(plan, suite, options)
    return providers


async def detected(
    plan: Plan, suite: Suite, options: RunOptions
) -> tuple[dict[str, Provider], tuple[str, ...]]:
    """``detect_providers``, and the notes the providers want said at run start."""
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
    return providers, tuple(d.note for d in detections if d.note)


async def check_sandbox(name: str) -> SandboxBackend:
    """The run's sandbox backend, once it has shown it works here; else the run stops before it starts."""
    backend = make_backend(name)
    problem = await backend.problem()
    if problem is not None:
        raise SandboxUnavailable(f"--sandbox {name}: {problem}")
    return backend


class Brackets:
    """Posts lane/case start and finish around trials, in order, even under concurrency.

    Posting never switches tasks, so each method's events go out together, with no lock.
    """

    def __init__(self, plan: Plan, bus: EventBus, run_id: str) -> None:
        self._bus = bus
        self._run_id = run_id
        self._lane_left: Counter[Lane] = Counter(i.id.lane for i in plan.items)
        self._group_left: Counter[Group] = Counter(i.id.group for i in plan.items)
        self._lane_results: dict[Lane, list[TrialResult]] = {}
        self._group_results: dict[Group, list[TrialResult]] = {}

    def before(self, item: WorkItem, workspace: dict[str, object]) -> None:
        now = time.time()
        trial = item.id
        if trial.lane not in self._lane_results:
            self._lane_results[trial.lane] = []
            self._bus.post(
                LaneStart(
                    run_id=self._run_id, at=now, lane=trial.lane, total_trials=self._lane_left[trial.lane]
                )
            )
        group = trial.group
        if group not in self._group_results:
            self._group_results[group] = []
            self._bus.post(
                CaseStart(
                    run_id=self._run_id,
                    at=now,
                    lane=trial.lane,
                    case_id=trial.case_id,
                    condition=trial.condition,
                    provider=trial.provider,
                    fingerprint=trial.fingerprint,
                    total_trials=self._group_left[group],
                )
            )
        self._bus.post(
            TrialStart(run_id=self._run_id, at=now, id=trial, model=item.model, workspace=dict(workspace))
        )

    def after(self, result: TrialResult, *, kept: bool = False) -> None:
        self._bus.post(TrialFinish(run_id=self._run_id, at=time.time(), result=result, kept=kept))
        group, lane = result.id.group, result.id.lane
        self._group_results[group].append(result)
        self._lane_results[lane].append(result)
        self._group_left[group] -= 1
        self._lane_left[lane] -= 1
        if self._group_left[group] == 0:
            self._close_group(group)
        if self._lane_left[lane] == 0:
            self._close_lane(lane)

    def drop(self, item: WorkItem) -> None:
        """A planned trial that will not run (its adaptive cell is settled): its brackets close without it."""
        group, lane = item.id.group, item.id.lane
        self._group_left[group] -= 1
        self._lane_left[lane] -= 1
        if self._group_left[group] == 0 and group in self._group_results:
            self._close_group(group)
        if self._lane_left[lane] == 0 and lane in self._lane_results:
            self._close_lane(lane)

    def close_open(self) -> None:
        """After an interruption: finish every bracket that was opened, with the trials it got."""
        for group, left in self._group_left.items():
            if left > 0 and group in self._group_results:
                self._close_group(group)
        for lane, left in self._lane_left.items():
            if left > 0 and lane in self._lane_results:
                self._close_lane(lane)

    def _close_group(self, group: Group) -> None:
        lane, case_id, condition, provider = group
        self._bus.post(
            CaseFinish(
                run_id=self._run_id,
                at=time.time(),
                lane=lane,
                case_id=case_id,
                condition=condition,
                provider=provider,
                counts=counts_of(self._group_results[group]),
            )
        )
        self._group_left[group] = 0

    def _close_lane(self, lane: Lane) -> None:
        self._bus.post(
            LaneFinish(
                run_id=self._run_id,
                at=time.time(),
                lane=lane,
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


class RunContext(msgspec.Struct, frozen=True, kw_only=True):
    """What every stage of a run reads: the plan, its suite and options, the detected providers."""

    plan: Plan
    suite: Suite
    options: RunOptions
    providers: dict[str, Provider]
    run_id: str
    run_dir: Path
    cases: dict[str, Case]  # by id
    settings: TrialSettings


class Scheduled(msgspec.Struct, frozen=True, kw_only=True):
    """What scheduling the trials left: their results in finishing order, and how the run stopped."""

    results: tuple[TrialResult, ...]
    interrupted: bool = False
    output_error: str | None = None  # the run dir stopped being writable: why
    leftovers: tuple[str, ...] = ()  # finished trials' files that could not be removed, and why


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

    In stages: detect the providers, then (holding the run directory, see ``claim_run_dir``) replay the
    kept results, schedule the rest, and finish. Only the run directory's becoming unwritable raises.
    """
    sandbox = await check_sandbox(options.sandbox)
    providers, notes = await detected(plan, suite, options)
    if options.prices is None:  # a library caller's run: the packaged table and the suite's own
        options = msgspec.structs.replace(options, prices=load_prices(price_layers(suite.root, None)))
    check_budget(plan, providers, options.budget, options.prices)
    budget = None
    if options.budget is not None:
        prices = options.prices or PriceTable(models={})
        estimates = per_trial(estimate_plan(plan, Path(options.snapshot_dir), prices))
        budget = BudgetGate(options.budget, done, estimates)
    run_id = options.run_id or new_run_id()
    run_dir = (run_dir or Path(options.output) / run_id).resolve()
    judge, judge_notes = await open_session(
        suite,
        planned={i.id.case_id for i in plan.items},
        judge=options.judge,
        record=options.judge_record,
        cache=options.judge_cache,
        timeout_s=options.judge_timeout_s,
        sandbox=sandbox,
        pairwise=options.compare_conditions == "judge",
        workdir=str(run_dir / "judge"),
    )
    notes = (*notes, *judge_notes)
    run = run_context(
        plan, suite, options, providers, run_id=run_id, run_dir=run_dir, sandbox=sandbox, judge=judge
    )
    executor = make_executor(options.executor)
    try:
        # Before the run folder exists: a cluster that cannot run the plan leaves nothing behind.
        fits = await executor.start(run)
        if fits is not None and options.concurrency is None:
            run = msgspec.structs.replace(run, options=msgspec.structs.replace(run.options, concurrency=fits))
        scheduled, results, end = await _run_in(run, executor, subscribers, notes, done=done, budget=budget)
    finally:
        await executor.stop()
    if scheduled.output_error is not None:
        raise OutputError(
            f"the run directory stopped being writable during the run ({scheduled.output_error}); "
            f"{len(results)} finished trials are in its event log if it still exists; "
            "use a stable, writable --output"
        )
    return RunOutcome(
        run_id=run_id,
        run_dir=str(run_dir),
        exit_code=end.exit_code,
        counts=end.counts,
        interrupted=end.interrupted,
        results=tuple(results),
        finish=end,
        leftovers=scheduled.leftovers,
    )


async def _run_in(
    run: RunContext,
    executor: Executor,
    subscribers: Sequence[Subscriber],
    notes: tuple[str, ...],
    *,
    done: Sequence[TrialResult],
    budget: BudgetGate | None,
) -> tuple[Scheduled, list[TrialResult], RunFinish]:
    """Holding the run directory: write run.json, replay the kept results, schedule the rest, finish."""
    plan, run_id, run_dir = run.plan, run.run_id, run.run_dir
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"cannot create the run directory {run_dir}: {exc.strerror or exc}; "
            "pass --output DIR with a writable folder"
        ) from exc
    with claim_run_dir(run_dir), _signal_handlers_restored():
        secrets = run.settings.secrets
        start = msgspec.structs.replace(run_start(run, resumed=bool(done)), notes=notes)
        start = scrub_struct(start, secrets)  # run.json is written before the bus, which scrubs the rest
        _write_run_json(run_dir, start)
        point_latest(run_dir)  # best effort: a run never fails for want of a link (see latest.py)
        t0 = time.monotonic()
        async with running_bus(*subscribers, secrets=secrets) as bus:
            await bus.publish(start)
            brackets = Brackets(plan, bus, run_id)
            await replay_kept(run, done, brackets, bus)
            finished_keys = {r.id.key for r in done}
            todo = [i for i in plan.items if i.id.key not in finished_keys]
            scheduled = await schedule(run, todo, brackets, bus, done=done, budget=budget, executor=executor)
            # In the plan's order, not the order trials finished in: what the finishers write (the token
            # section, snapshots) is then the same however the trials were spread and scheduled.
            order = {item.id.key: index for index, item in enumerate(plan.items)}
            results = sorted([*done, *scheduled.results], key=lambda r: order.get(r.id.key, len(order)))
            took = time.monotonic() - t0
            stopped = budget.outcome(plan.items, results) if budget is not None else None
            end = await finish(
                run, results, scheduled, brackets, bus, duration_s=took, finishers=subscribers, budget=stopped
            )
    return scheduled, results, end


def run_context(
    plan: Plan,
    suite: Suite,
    options: RunOptions,
    providers: dict[str, Provider],
    *,
    run_id: str,
    run_dir: Path,
    sandbox: SandboxBackend | None = None,
    judge: JudgeSession | None = None,
) -> RunContext:
    """The run's shared context; reads each condition's injected text (a missing file stops the run)."""
    settings = TrialSettings(
        run_dir=str(run_dir),
        run_id=run_id,
        injected=injected_texts(suite, plan),
        keep_workspaces=options.keep_workspaces,
        record=options.record,
        secrets=suite_secrets(suite, (*options.secrets, *provider_credentials(providers))),
        sandbox=sandbox or make_backend("none"),
        network=options.network,
        sandbox_writable=options.sandbox_writable,
        prices=options.prices,
        judge=judge,
    )
    if options.concurrency is None:
        chosen = min((default_concurrency(p) for p in providers.values()), default=DEFAULT_CONCURRENCY)
        options = msgspec.structs.replace(options, concurrency=chosen)
    return RunContext(
        plan=plan,
        suite=suite,
        options=options,
        providers=providers,
        run_id=run_id,
        run_dir=run_dir,
        cases={c.id: c for c in suite.cases},
        settings=settings,
    )


def provider_credentials(providers: dict[str, Provider]) -> tuple[str, ...]:
    """The values of the credentials the providers pass to their agents, whatever their names."""
    names = {key for p in providers.values() for key in getattr(p, "credentials", ())}
    return tuple(v for k in sorted(names) if len(v := os.environ.get(k, "")) >= MIN_SECRET_LENGTH)


def run_start(run: RunContext, *, resumed: bool) -> RunStart:
    """The run.start event (also written as run.json): what was asked for, with secrets scrubbed."""
    plan, suite, options = run.plan, run.suite, run.options
    settings = run_settings(options, plan)
    return RunStart(
        run_id=run.run_id,
        at=time.time(),
        argv=tuple(scrub(arg, options.secrets) for arg in options.argv),
        suite=suite.root,
        suite_dir=str(Path(suite.root).resolve()),
        run_dir=str(run.run_dir),
        lanes=plan.lanes,
        conditions=plan.conditions,
        providers=plan.providers,
        case_filter=plan.case_ids,
        model=plan.model,
        trials=plan.trials,
        concurrency=options.concurrency or DEFAULT_CONCURRENCY,
        total_trials=len(plan.items),
        skill_hash=skill_hash(suite),
        versions={"skillgym": __version__, "python": sys.version.split()[0]},
        resumed=resumed,
        baseline_report=options.baseline_report,
        settings=settings,
        plan_fingerprint=options.shard.plan_fingerprint
        if options.shard
        else plan_fingerprint(plan, settings),
        shard=options.shard,
    )


def run_settings(options: RunOptions, plan: Plan) -> dict[str, Any]:
    """run.start's ``settings``: the provider, workspace and plan options a resume must reuse."""
    return {
        "keep_workspaces": options.keep_workspaces,
        "record": options.record,
        "replay_source": options.replay_source,
        "agent_command": options.agent_command and scrub(options.agent_command, options.secrets),
        "sandbox": options.sandbox,
        "network": options.network,
        "sandbox_writable": list(options.sandbox_writable),
        "prices": list(options.price_files),
        "budget": msgspec.to_builtins(options.budget) if options.budget is not None else None,
        "snapshot_dir": options.snapshot_dir,
        "gates": list(options.gates),
        "fail_on_regression": options.fail_on_regression,
        "judge": options.judge,
        "judge_record": options.judge_record,
        "judge_cache": options.judge_cache,
        "judge_timeout_s": options.judge_timeout_s,
        "compare_conditions": options.compare_conditions,
        "pairwise_seed": options.pairwise_seed,
        "executor": msgspec.to_builtins(options.executor),
        **options.plan_settings,
        # The adaptive cases and their policies: the report judges their stopping from these alone.
        **({"auto": msgspec.to_builtins(plan.auto)} if plan.auto else {}),
    }


def _write_run_json(run_dir: Path, start: RunStart) -> None:
    try:
        write_atomic(run_dir / "run.json", msgspec.json.format(msgspec.json.encode(start)).decode() + "\n")
    except OSError as exc:
        raise OutputError(
            f"cannot write {run_dir / 'run.json'}: {exc.strerror or exc}; "
            "pass --output DIR with a writable folder"
        ) from exc


async def replay_kept(
    run: RunContext, done: Sequence[TrialResult], brackets: Brackets, bus: EventBus
) -> None:
    """A resumed run's finished trials, posted again so every reporter sees the whole run."""
    by_key = {i.id.key: i for i in run.plan.items}
    for prior in done:
        brackets.before(by_key[prior.id.key], {})
        brackets.after(prior, kept=True)
        await bus.room()


async def schedule(
    run: RunContext,
    todo: Sequence[WorkItem],
    brackets: Brackets,
    bus: EventBus,
    *,
    done: Sequence[TrialResult] = (),
    budget: BudgetGate | None = None,
    executor: Executor | None = None,
) -> Scheduled:
    """Run ``todo`` with --concurrency agents at a time, until done, stopped by a signal, or unwritable.

    Adaptive cells (see ``skillgym.scheduler``) run only the trials their open verdicts need; ``done``
    (a resumed run's results) feeds those verdicts first.

    Finished trials' workspaces are removed off their path; this waits for that, Ctrl-C or not.
    """
    executor = executor or make_executor(ExecutorSettings())
    stop = _Stop()
    # --concurrency trials run their agent and grading at once; as many more workers set up the next
    # trials and clean up finished ones meanwhile, so a slot is not idle while a trial's files move.
    slots = AgentSlots(max(1, run.options.concurrency or DEFAULT_CONCURRENCY))
    # Setting up ahead only pays where there is a workspace to set up, and --concurrency 1 keeps trials
    # strictly one after another (a bootstrap may start what the agent before would see).
    ahead = (
        executor.sets_up_here
        and slots.total > 1
        and any(needs_workspace(run.cases[i.id.case_id], run.providers[i.id.provider]) for i in todo)
    )
    pending = make_schedule(run.plan, todo, done, slots.total)
    async with background_removal() as leftovers, anyio.create_task_group() as tg:
        workers = _Workers(
            run,
            pending,
            brackets,
            bus,
            executor=executor,
            slots=slots,
            stop=stop,
            scope=tg.cancel_scope,
            budget=budget,
        )
        tg.start_soon(_watch_signals, tg.cancel_scope, stop)
        async with anyio.create_task_group() as trials:
            for number in range(min((2 if ahead else 1) * slots.total, len(todo))):
                trials.start_soon(workers.work, number >= slots.total, name=f"trial-worker-{number}")
        tg.cancel_scope.cancel()  # all trials done: stop watching signals
    return Scheduled(
        results=tuple(workers.results),
        interrupted=stop.interrupted,
        output_error=stop.output_error,
        leftovers=tuple(leftovers),
    )


class _Workers:
    """A fixed pool of trial workers pulling from one schedule (safe: one event loop thread).

    Rather than one task per trial queued on a limiter: a 20,000-trial run then wakes 64 tasks, not 20,000.
    """

    def __init__(
        self,
        run: RunContext,
        pending: Schedule,
        brackets: Brackets,
        bus: EventBus,
        *,
        executor: Executor,
        slots: AgentSlots,
        stop: _Stop,
        scope: anyio.CancelScope,
        budget: BudgetGate | None = None,
    ) -> None:
        self.run, self.brackets, self.bus = run, brackets, bus
        self.executor = executor
        self.budget = budget
        self.slots, self.stop, self.scope = slots, stop, scope
        self.pending = pending
        for item in pending.settled_unstarted():
            brackets.drop(item)
        self.results: list[TrialResult] = []
        self.run_path = str(run.run_dir)  # checked before every trial: a plain string stats faster

    async def work(self, ahead: bool) -> None:
        """Run trials until none is left; ``ahead`` holds back until every agent slot was taken once."""
        run, bus, slots = self.run, self.bus, self.slots
        if ahead:  # the first trials' setup goes first: it is what every slot is waiting for
            await slots.filled.wait()
        while (item := await self.pending.next()) is not None:
            if not os.path.isdir(self.run_path):  # removed under us: writing on would recreate a husk
                self._stop_run(f"{run.run_dir} was removed")
                return
            # One real yield per trial, even when a provider never awaits: signals, ticks and the
            # reporters get their turn, and cancellation lands here. Then wait for slow reporters.
            await anyio.lowlevel.checkpoint()
            await bus.room()
            if self.budget is not None and not await self.budget.admit(item):
                break  # the budget ended the run: nothing new starts, and the other workers see it too
            case = run.cases[item.id.case_id]
            self.brackets.before(item, workspace_plan(run.suite, case, item, run.settings))
            try:
                result = await self.executor.run(run, case, item, slots)
            except OSError as exc:
                # The trial could not write its own files: the output dir is gone or unwritable, and every
                # later trial would fail the same way. Stop the run; what finished is kept.
                self._stop_run(f"{exc.filename or run.run_dir}: {exc.strerror or exc}")
                return
            self.results.append(result)
            if self.budget is not None:
                self.budget.finished(result)
            self.brackets.after(result)
            for skipped in self.pending.finished(result):
                self.brackets.drop(skipped)
        slots.filled.set()  # nothing left to start: workers still holding back have nothing to wait for

    def _stop_run(self, why: str) -> None:
        self.stop.output_error = why
        self.stop.interrupted = True
        self.scope.cancel()


async def finish(
    run: RunContext,
    results: Sequence[TrialResult],
    scheduled: Scheduled,
    brackets: Brackets,
    bus: EventBus,
    *,
    duration_s: float,
    finishers: Sequence[object] = (),
    budget: BudgetStop | None = None,
) -> RunFinish:
    """Close what an interruption left open, judge the run and publish run.finish; that event.

    Each finisher among ``finishers`` (see ``skillgym.finishers``) adds its part to run.finish first.
    """
    interrupted = scheduled.interrupted
    if interrupted or budget is not None:  # a budget that ended the run leaves cells short, as a Ctrl-C does
        brackets.close_open()
    counts = counts_of(results)
    # The finishers (token snapshots) change the verdict only through their gate: --snapshot-enforce
    # fails a run on a regression, and a snapshot file that cannot be read or written is exit 2.
    part = await finish_parts(finishers, results, run_id=run.run_id, interrupted=interrupted)
    exit_code = run_exit_code(
        results,
        part.gates,
        interrupted=interrupted,
        failed_step=part.gate == "fail",
        budget_stopped=budget is not None,
    )
    if part.gate == "error":
        exit_code = ExitCode.USAGE
    if scheduled.output_error is not None:
        exit_code = OutputError.exit_code
    end = RunFinish(
        run_id=run.run_id,
        at=time.time(),
        counts=counts,
        exit_code=exit_code,
        duration_s=round(duration_s, 6),
        interrupted=interrupted,
        tokens=part.tokens,
        snapshots=part.snapshots,
        notes=part.notes,
        gates=part.gates,
        budget=budget,
    )
    return await bus.publish(end)


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
