"""One trial, start to finish: workspace, provider, grade, files — every failure becomes data.

``run_trial`` runs four stages, each usable alone: ``prepare_workspace`` (the folder, the workspace and
the provider's request), ``invoke`` (the provider call, bounded by the case budget), ``grade_outcome``
(the lane grader) and ``record`` (cleanup, the trial's files and its result). The stages before ``record``
run under the case's wall-clock limit, which names the stage whose time ran out.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import time
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, Literal, TypeAlias

import anyio
import msgspec

from .cost.prices import Cost, PriceTable, trial_cost
from .errors import SkillgymError
from .files import write_atomic
from .grading import GradeContext, grade
from .grading.verifiers import VerifierError
from .judge.grading import JudgeFile, judge_trial, needs_judge, write_judge_file
from .judge.session import JudgeSession
from .model import Case, Condition, DogfoodCase, Suite, WorkspacePreset
from .plan import WorkItem
from .prompts import build_prompt
from .providers.base import Provider, ProviderRequest, ProviderResult
from .providers.cassette import cassette_candidates
from .redact import redact_env, scrub, scrub_tree, scrubbed_json, with_secrets
from .results import ErrorClass, Grade, Status, TrialPaths, TrialResult
from .sandboxes.base import UNSANDBOXED, Network, SandboxBackend, SandboxUnavailable, TrialSandbox
from .sandboxes.none import NoSandbox
from .sandboxes.spec import trial_spec
from .slots import AgentSlots
from .trace import Trace, with_total
from .transcript import render_transcript
from .usage import TrialTokens, trial_tokens
from .workspaces import EnvironmentSetupError, TrialLayout, cleanup, hermetic_env, layout_for, materialize

# Extra time the harness allows past the case budget before it abandons a provider that ignores its own
# deadline: the provider kills its process group at the budget; this only guards against a stuck adapter.
DEADLINE_GRACE_S = 10.0

_json = msgspec.json.Encoder()

Failure: TypeAlias = tuple[ErrorClass, str]


class TrialSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Run-wide knobs a trial needs."""

    run_dir: str
    run_id: str
    keep_workspaces: bool = False
    record: bool = False
    secrets: tuple[str, ...] = ()
    injected: dict[str, str] = {}  # condition id -> text injected into the prompt, read once per run
    sandbox: SandboxBackend = NoSandbox()  # checked before the run: it works here
    network: Network | None = None  # --network; None: each provider's own
    sandbox_writable: tuple[str, ...] = ()  # --sandbox-writable: folders every trial may also write
    prices: PriceTable | None = None  # what a trial's usage costs when its CLI says nothing; None: unpriced
    judge: JudgeSession | None = None  # --judge: grades the judged checks and rubrics (see skillgym.judge)
    node: str | None = None  # the cluster node the trial runs on (see skillgym.executors); None: here


class Trial(msgspec.Struct, frozen=True, kw_only=True):
    """One work item resolved against its suite: what every stage of the trial reads."""

    suite: Suite
    case: Case
    item: WorkItem
    settings: TrialSettings
    condition: Condition
    preset: WorkspacePreset | None
    folder: str  # the trial's own folder below the run dir
    layout: TrialLayout
    tag: str  # unique across concurrent runs: cleanup kills the trial's processes by this tag
    isolated: bool  # a fresh workspace and the hermetic environment (see needs_workspace)
    env: dict[str, str]
    prompt: str
    sandbox: TrialSandbox  # every process of the trial runs in it
    # The run's secrets plus the secret-looking values of the trial's own env: scrubbed from its files,
    # result and events.
    secrets: tuple[str, ...]


def trial_dir(settings: TrialSettings, item: WorkItem) -> str:
    # Plain strings, not pathlib or even os.path.join: this runs twice for every trial and both showed in
    # profiles. The run dir is absolute and the key relative, so joining is concatenating.
    return f"{settings.run_dir}{os.sep}trials{os.sep}{item.id.key}"


def needs_workspace(case: Case, provider: Provider) -> bool:
    """Whether a trial gets a fresh workspace and the hermetic environment.

    A text answer from a stand-in needs neither: it starts no process. Everything else does.
    """
    return case.lane != "prompt" or provider.runs_agent


def workspace_plan(suite: Suite, case: Case, item: WorkItem, settings: TrialSettings) -> dict[str, Any]:
    """The resolved workspace of a trial, as shown in ``trial.start`` (secret values redacted)."""
    preset = next((p for p in suite.presets if p.id == case.workspace), None)
    return {
        "preset": case.workspace,
        "workspace": f"{trial_dir(settings, item)}{os.sep}workspace",
        "template": preset.template if preset else None,
        "bootstrap": [list(c.argv) for c in preset.bootstrap] if preset else [],
        "env": redact_env({**(preset.env if preset else {}), **case.env}),
    }


async def run_trial(
    suite: Suite,
    case: Case,
    item: WorkItem,
    provider: Provider,
    settings: TrialSettings,
    *,
    slots: AgentSlots | None = None,
    clock: Callable[[], float] = time.time,
) -> TrialResult:
    """Run one work item and write its files; never raises for a failure inside the trial.

    ``slots`` bounds what runs the agent: the provider call and the grading hold one slot, so a runner can
    set up the next trials and clean up finished ones while other trials' agents use every slot. Time spent
    waiting for a slot does not count against the case's wall-clock limit.
    """
    started = clock()
    trial = resolve(suite, case, item, provider, settings)
    try:
        got = await _attempt(trial, provider, slots)
    except BaseException:
        # Cancelled from outside (Ctrl-C) or failing to write its own folder: no result for this trial, but
        # nothing it started may survive it.
        if trial.isolated:
            await _clean_up(trial, keep=True)
        raise
    return await record(
        trial,
        got.outcome,
        got.graded,
        got.error,
        waited=got.waited,
        judging=got.judging,
        started=started,
        clock=clock,
        judged=got.judged,
        judge_warnings=got.judge_warnings,
    )


def resolve(suite: Suite, case: Case, item: WorkItem, provider: Provider, settings: TrialSettings) -> Trial:
    """The trial's condition, preset, folder, hermetic environment and prompt; touches no file."""
    folder = trial_dir(settings, item)
    layout = layout_for(folder)
    condition = next(c for c in suite.conditions if c.id == item.id.condition)
    preset = next((p for p in suite.presets if p.id == case.workspace), None)
    tag = f"{settings.run_id}/{item.id.key}"
    isolated = needs_workspace(case, provider)
    env: dict[str, str] = {}
    if isolated:
        env = hermetic_env(
            layout,
            trial_id=tag,
            suite_root=Path(suite.root),
            passthrough={k: os.environ[k] for k in provider.passthrough_env if k in os.environ},
            preset_env=preset.env if preset else {},
            lane=case.lane,
            condition_env=condition.env,
            case_env=case.env,
            home_env=provider.home_env,
        )
    prompt = build_prompt(case, injected=settings.injected.get(item.id.condition, ""))
    sandbox = _sandbox(settings, case, provider, layout, env, suite.root) if isolated else UNSANDBOXED
    return Trial(
        suite=suite,
        case=case,
        item=item,
        settings=settings,
        condition=condition,
        preset=preset,
        folder=folder,
        layout=layout,
        tag=tag,
        isolated=isolated,
        env=env,
        prompt=prompt,
        sandbox=sandbox,
        secrets=_trial_secrets(settings, preset, condition, case, env),
    )


def _trial_secrets(
    settings: TrialSettings,
    preset: WorkspacePreset | None,
    condition: Condition,
    case: Case,
    env: dict[str, str],
) -> tuple[str, ...]:
    """The run's secrets and every secret-looking env value the suite gives this trial.

    The suite's own env is read as well as the hermetic one: a bootstrap's env never reaches ``env``, and a
    trial without a workspace has none, yet both can show up in what the trial writes.
    """
    envs = [condition.env, case.env, env]
    if preset is not None:
        envs += [preset.env, *(step.env for step in preset.bootstrap)]
    return with_secrets(settings.secrets, *envs)


def _sandbox(
    settings: TrialSettings,
    case: Case,
    provider: Provider,
    layout: TrialLayout,
    env: dict[str, str],
    suite_root: str,
) -> TrialSandbox:
    """The trial's sandbox: the case's network choice first, then the run's, then the provider's."""
    needs = case.sandbox
    network = (needs and needs.network) or settings.network or provider.network
    return settings.sandbox.open(
        trial_spec(
            layout,
            env=env,
            suite_root=_resolved(suite_root),
            network=network,
            programs=provider.sandbox_readable,
            readable=_folders(needs.readable if needs else (), suite_root),
            writable=(*settings.sandbox_writable, *_folders(needs.writable if needs else (), suite_root)),
        )
    )


def _folders(given: tuple[str, ...], suite_root: str) -> tuple[str, ...]:
    """A case's declared folders as absolute paths: ``~`` is the user's home, relative is the suite's."""
    return tuple(os.path.join(_resolved(suite_root), os.path.expanduser(folder)) for folder in given)


_Phase = Literal["setup", "agent", "grading"]


class _Attempt:
    """What a trial got to under its wall-clock limit; filled in stage by stage, read once by ``record``."""

    __slots__ = ("error", "graded", "judge_warnings", "judged", "judging", "outcome", "phase", "waited")

    def __init__(self) -> None:
        self.phase: _Phase = "setup"  # where the wall-clock limit found the trial, if it ran out
        self.outcome: ProviderResult | None = None
        self.graded: Grade | None = None
        self.error: Failure | None = None
        self.waited = 0.0
        self.judged: JudgeFile | None = None
        self.judge_warnings: tuple[str, ...] = ()
        self.judging = 0.0  # seconds the judge took: the judge's time, not the agent's


async def _attempt(trial: Trial, provider: Provider, slots: AgentSlots | None) -> _Attempt:
    """The stages before ``record``, under the case's wall-clock limit; an expected failure becomes data."""
    got = _Attempt()
    wall = trial.case.budget.max_wall_clock_s
    # No limit (the default) needs no scope: entering one per trial cost more than some providers.
    wall_scope = anyio.move_on_after(wall) if wall is not None else None
    with wall_scope or contextlib.nullcontext():
        try:
            await _stages(trial, provider, slots, wall_scope, got)
        except (EnvironmentSetupError, SandboxUnavailable) as exc:
            got.error = ("environment-error", str(exc))
        except GraderError as exc:
            got.error = ("grader-error", str(exc))
    if wall is not None and wall_scope is not None and wall_scope.cancelled_caught:
        got.error = _past_the_wall(got.phase, wall)
    return got


async def _stages(
    trial: Trial,
    provider: Provider,
    slots: AgentSlots | None,
    wall_scope: anyio.CancelScope | None,
    got: _Attempt,
) -> None:
    request = await prepare_workspace(trial, provider)
    if slots is not None:
        got.waited = await _take(slots, wall_scope)
    try:
        got.phase = "agent"
        agent_started = time.time()  # evidence older than this came from the template
        got.outcome = outcome = await invoke(provider, request)
        if not outcome.ok:
            got.error = (outcome.error_class or "provider-error", outcome.error_message or "provider failed")
        got.phase = "grading"
        got.graded = await grade_outcome(trial, outcome, agent_started=agent_started)
        if outcome.ok and needs_judge(trial.case):
            since = time.monotonic()
            try:
                await _judge(trial, outcome, got)
            finally:
                got.judging = time.monotonic() - since
    finally:
        if slots is not None:
            slots.give()


async def _judge(trial: Trial, outcome: ProviderResult, got: _Attempt) -> None:
    """Grade the case's judged checks and rubrics with the run's judge; an undecided required one is a
    grader-error (never a pass)."""
    session = trial.settings.judge
    assert got.graded is not None
    if session is None:
        got.error = got.error or (
            "grader-error",
            f"case {trial.case.id!r} has judged checks but the run has no judge; pass --judge PROVIDER:MODEL",
        )
        return
    judged = await judge_trial(
        session,
        trial.case,
        outcome.trace,
        got.graded,
        workspace=trial.layout.workspace if trial.isolated else None,
        trial_dir=trial.folder,
        skills=trial.suite.skills,
        suite_root=_resolved(trial.suite.root),
    )
    got.graded, got.judged, got.judge_warnings = judged.grade, judged.file, judged.warnings
    if judged.undecided_required and got.error is None:
        got.error = ("grader-error", "; ".join(judged.undecided_required))


async def prepare_workspace(trial: Trial, provider: Provider) -> ProviderRequest:
    """Make the trial's folder (and, when isolated, its workspace); the request to hand the provider.

    Raises ``EnvironmentSetupError`` when the workspace cannot be built, and OSError when the trial's
    folder cannot be made (the run dir is gone or unwritable).
    """
    cwd = trial.layout.workspace
    settings = trial.settings
    if trial.isolated:
        ready = await materialize(
            trial.layout,
            suite=trial.suite,
            case=trial.case,
            condition=trial.condition,
            preset=trial.preset,
            env=trial.env,
            skill_dirs=provider.skill_dirs,
            home_env=provider.home_env,
            sandbox=trial.sandbox,
            secrets=trial.secrets,
            # The trial's folder and prompt.txt, from the worker thread that makes the workspace: on a
            # busy disk a mkdir can take a millisecond, and the loop runs the other trials meanwhile.
            first=functools.partial(
                _make_with_prompt, settings.run_dir, trial.folder, scrub(trial.prompt, trial.secrets)
            ),
        )
        cwd = ready.cwd
    else:
        _make_below(settings.run_dir, trial.folder)
    record_path = _record_path(trial.suite, trial.item, provider) if settings.record else None
    return _request(trial, cwd=cwd, record_path=record_path)


async def invoke(provider: Provider, request: ProviderRequest) -> ProviderResult:
    """The provider's answer, bounded by the case budget; an adapter that raises is a provider-error."""
    # A bare scope rather than fail_after(): the same deadline without a generator per trial.
    deadline = anyio.current_time() + request.timeout_s + DEADLINE_GRACE_S
    try:
        with anyio.CancelScope(deadline=deadline):
            return await provider.invoke(request)
    except SandboxUnavailable:
        raise  # the machine's fault, not the adapter's: an environment error
    except Exception as exc:  # an adapter bug is this trial's provider error, not the run's crash
        message = f"provider {provider.name!r} raised {type(exc).__name__}: {exc}"
        return ProviderResult(ok=False, trace=Trace(), error_class="provider-error", error_message=message)
    # Only the deadline gets here: any other cancellation propagates out of the scope.
    message = f"provider {provider.name!r} did not return within {request.timeout_s:g}s (case budget)"
    return ProviderResult(ok=False, trace=Trace(), error_class="timeout", error_message=message)


class GraderError(SkillgymError, RuntimeError):
    """The suite's grading broke on this trial (a verifier error or a grader crash): a grader-error."""


async def grade_outcome(trial: Trial, outcome: ProviderResult, *, agent_started: float) -> Grade:
    """The lane grader's verdict on the provider's outcome; raises GraderError when grading itself broke."""
    layout = trial.layout
    context = GradeContext(
        provider_ok=outcome.ok,
        workspace=layout.workspace,
        trial_dir=layout.trial_dir,
        fixture_log_dir=layout.fixture_log_dir,
        tmux_tmpdir=layout.tmux_tmpdir,
        env=trial.env,
        skills=tuple(s.name for s in trial.suite.skills),
        suite_rules=trial.suite.anti_patterns,
        agent_started_at=agent_started,
        suite_root=_resolved(trial.suite.root),
        sandbox=trial.sandbox,
    )
    case = trial.case
    try:
        return await grade(case, outcome.trace, context)
    except VerifierError as exc:  # the suite's verifier is broken: not a verdict on the agent
        raise GraderError(f"case {case.id!r}: {exc}") from exc
    except SandboxUnavailable:
        raise
    except Exception as exc:
        raise GraderError(f"grader crashed on case {case.id!r}: {type(exc).__name__}: {exc}") from exc


async def record(
    trial: Trial,
    outcome: ProviderResult | None,
    graded: Grade | None,
    error: Failure | None,
    *,
    waited: float,
    started: float,
    clock: Callable[[], float] = time.time,
    judged: JudgeFile | None = None,
    judge_warnings: tuple[str, ...] = (),
    judging: float = 0.0,
) -> TrialResult:
    """Clean up, write the trial's files and result.json; the result, with secrets scrubbed."""
    settings = trial.settings
    status: Status = "errored" if error else ("passed" if graded is not None and graded.passed else "failed")
    keep = settings.keep_workspaces or status != "passed"
    # What cleanup could not undo (a process that outlived SIGKILL) is worth a warning, never a failure.
    warnings = [*outcome.warnings] if outcome else []
    warnings += judge_warnings
    if trial.isolated:
        warnings += await _clean_up(trial, keep=keep)
    trace = outcome.trace if outcome else None
    if trace is not None and trace.usage is not None:
        trace = msgspec.structs.replace(trace, usage=with_total(trace.usage))
    item = trial.item
    model = (
        (outcome.model if outcome and outcome.model else None)
        or (trace.model if trace else None)
        or item.model
    )
    paths = _write_files(
        trial,
        trace,
        usage=_token_usage(trace, item, trial.case, model),
        keep_workspace=keep and trial.isolated,
        cassette=outcome.cassette if outcome else None,
    )
    if judged is not None:
        write_judge_file(trial.folder, judged, trial.secrets)
        paths = msgspec.structs.replace(paths, judge=f"{paths.dir}{os.sep}judge.json")
    finished = clock()
    result = TrialResult(
        id=item.id,
        category=trial.case.category,
        model=model,
        status=status,
        error_class=error[0] if error else None,
        error_message=scrub(error[1], trial.secrets) if error else None,
        grade=graded,
        usage=trace.usage if trace else None,
        cost=_cost(trace, model, settings.prices),
        judge_usage=judged.usage if judged is not None else None,
        warnings=tuple(scrub(w, trial.secrets) for w in warnings),
        started_at=started,
        finished_at=finished,
        duration_s=round(finished - started - waited - judging, 6),
        paths=paths,
        waited_s=round(waited, 6),
        judge_s=round(judging, 6),
        node=settings.node,
    )
    return _write_result(trial, result)


def lost_result(
    case: Case, item: WorkItem, settings: TrialSettings, error: Failure, *, started: float
) -> TrialResult:
    """The result of a trial that ran elsewhere and never reported back (its node died on every attempt):
    an error that is not the agent's, written as the trial folder's result.json."""
    folder = trial_dir(settings, item)
    os.makedirs(folder, exist_ok=True)
    here = folder[len(settings.run_dir) + 1 :]
    finished = time.time()
    result = TrialResult(
        id=item.id,
        category=case.category,
        model=item.model,
        status="errored",
        error_class=error[0],
        error_message=error[1],
        started_at=started,
        finished_at=finished,
        duration_s=round(finished - started, 6),
        paths=TrialPaths(dir=here, result=f"{here}{os.sep}result.json"),
        node=settings.node,
    )
    result, encoded = scrubbed_json(result, settings.secrets)
    write_atomic(f"{folder}{os.sep}result.json", encoded)
    return result


def _cost(trace: Trace | None, model: str | None, prices: PriceTable | None) -> Cost | None:
    if trace is None:
        return None
    return trial_cost(trace.cost_usd, trace.usage, model, prices or PriceTable(models={}))


def _write_result(trial: Trial, result: TrialResult) -> TrialResult:
    # Scrub the record itself, not just its file: the same object goes into events and reports, and grade
    # reasons can quote whatever the agent printed.
    result, encoded = scrubbed_json(result, trial.secrets)
    write_atomic(f"{trial.folder}{os.sep}result.json", encoded)
    return result


def _past_the_wall(phase: _Phase, wall: float) -> Failure:
    """The error of a trial the case's wall-clock limit stopped, by whose time ran out.

    Only the agent's own time is its timeout; a setup or a grading too slow for the limit is not its doing.
    """
    limit = f"the case's max_wall_clock_s of {wall:g}s"
    if phase == "setup":
        return "environment-error", f"the workspace setup ran past {limit} (template, skills, bootstrap)"
    if phase == "grading":
        return "grader-error", f"grading ran past {limit} (a verifier too slow for it?)"
    return "timeout", f"trial ran past {limit} while the agent ran (setup, agent and grading count)"


async def _take(slots: AgentSlots, wall_scope: anyio.CancelScope | None) -> float:
    """Take an agent slot; the seconds waited for it, during which the wall-clock limit stands still."""
    if wall_scope is None:
        return await slots.take()
    # Moved once, to its final value: a deadline set in the past, even for a moment, cancels the scope.
    deadline, wall_scope.deadline = wall_scope.deadline, math.inf
    since = anyio.current_time()
    try:
        return await slots.take()
    finally:
        wall_scope.deadline = deadline + (anyio.current_time() - since)


async def _clean_up(trial: Trial, *, keep: bool) -> tuple[str, ...]:
    """Stop what the trial left running and remove its files; the problems cleanup could not fix."""
    secrets = trial.secrets
    unscrubbed: list[tuple[str, str]] = []
    with anyio.CancelScope(shield=True):
        # The sandbox first: it names every process still running, the tmux servers among them.
        stopped = await trial.sandbox.close()
        report = await cleanup(trial.layout, trial_id=trial.tag, keep_workspace=keep)
        if secrets:  # streams, logs and kept workspaces may hold what the agent echoed
            unscrubbed = await anyio.to_thread.run_sync(scrub_tree, trial.folder, secrets)
    cut = len(trial.settings.run_dir) + 1
    left = tuple(
        f"{path[cut:]} may still hold a secret value: it could not be scrubbed ({why})"
        for path, why in unscrubbed
    )
    return (*stopped, *report.problems, *left)


def _request(trial: Trial, *, cwd: str, record_path: str | None) -> ProviderRequest:
    item, budget = trial.item, trial.case.budget
    return ProviderRequest(
        id=item.id,
        model=item.model,
        prompt=trial.prompt,
        workspace=cwd,
        trial_dir=trial.folder,
        env=trial.env,
        timeout_s=budget.timeout_s,
        max_turns=budget.max_turns,
        stdout_path=trial.layout.stdout,
        stderr_path=trial.layout.stderr,
        record_path=record_path,
        sandbox=trial.sandbox,
        secrets=trial.secrets,
    )


@functools.lru_cache(maxsize=8)
def _resolved(root: str) -> str:
    return str(Path(root).resolve())  # once per run, not per trial: resolve() stats every component


def _make_with_prompt(root: str, folder: str, prompt: str) -> None:
    _make_below(root, folder)
    write_atomic(os.path.join(folder, "prompt.txt"), prompt)


class _Folders:
    """Folders known to exist below the current run dir, so a trial usually costs one mkdir."""

    root = ""
    known: set[str] = set()


def _make_below(root: str, folder: str) -> None:
    """Create ``folder`` and its missing parents below ``root``, never ``root`` itself.

    If the run directory was removed during the run this raises FileNotFoundError instead of quietly
    building a new, half-empty one; the runner then stops with a clear error.
    """
    if _Folders.root != root:
        _Folders.root, _Folders.known = root, set()
    try:
        _make_missing(root, folder, _Folders.known)
    except FileNotFoundError:
        # A folder made earlier was removed under us: forget them all and make every level below the run
        # dir again. Always retried, whoever cleared the set: trials may make folders from several threads.
        _Folders.known.clear()
        _make_missing(root, folder, frozenset())


def _make_missing(root: str, folder: str, known: AbstractSet[str]) -> None:
    # Top down from the deepest folder known to exist: one mkdir per new folder, none that is sure to fail.
    missing: list[str] = []
    while folder not in known and len(folder) > len(root):
        missing.append(folder)
        folder = os.path.dirname(folder)
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(path)
        _Folders.known.add(path)


def _record_path(suite: Suite, item: WorkItem, provider: Provider) -> str:
    """--record: the trial's own cassette path in the suite, ready to commit and replay offline."""
    first, _ = cassette_candidates(
        Path(suite.root),
        provider=provider.name,
        model=item.model,
        lane=item.id.lane,
        case=item.id.case_id,
        condition=item.id.condition,
        trial=item.id.trial,
    )
    return str(first.resolve())


def _token_usage(trace: Trace | None, item: WorkItem, case: Case, model: str | None) -> TrialTokens | None:
    """token-usage.json: the usage with its provider, model, case fingerprint and budget (None: no usage)."""
    if trace is None or trace.usage is None:
        return None
    return trial_tokens(
        trace.usage,
        id=item.id,
        model=model,
        token_budget_percent=case.token_budget.max_regression_percent,
    )


def _write_files(
    trial: Trial,
    trace: Trace | None,
    *,
    usage: TrialTokens | None,
    keep_workspace: bool,
    cassette: str | None,
) -> TrialPaths:
    s, folder, case, layout_workspace = trial.settings, trial.folder, trial.case, trial.layout.workspace
    cut = len(s.run_dir) + 1  # every trial file lives under the run dir: relative paths by slicing

    def rel(path: str) -> str:
        return path[cut:]

    # The files are named beside ``folder`` by concatenation: os.path.join cost a microsecond a call here.
    here = rel(folder)
    secrets = trial.secrets
    scrubbed, encoded = scrubbed_json(trace or Trace(), secrets)
    write_atomic(f"{folder}{os.sep}trace.json", encoded)
    transcript = render_transcript(trial.item.id.key, trial.prompt, scrubbed)
    write_atomic(f"{folder}{os.sep}transcript.md", scrub(transcript, secrets) if secrets else transcript)
    usage_path = None
    if usage is not None:
        usage_path = f"{here}{os.sep}token-usage.json"
        write_atomic(f"{folder}{os.sep}token-usage.json", _json.encode(usage))
    stdout = f"{here}{os.sep}stdout.txt" if os.path.exists(f"{folder}{os.sep}stdout.txt") else None
    stderr = f"{here}{os.sep}stderr.txt" if os.path.exists(f"{folder}{os.sep}stderr.txt") else None
    bundle = os.path.join(layout_workspace, case.bundle_path) if isinstance(case, DogfoodCase) else None
    return TrialPaths(
        dir=here,
        result=f"{here}{os.sep}result.json",
        trace=f"{here}{os.sep}trace.json",
        transcript=f"{here}{os.sep}transcript.md",
        stdout=stdout,
        stderr=stderr,
        token_usage=usage_path,
        workspace=rel(layout_workspace) if keep_workspace and os.path.isdir(layout_workspace) else None,
        bundle=rel(bundle) if keep_workspace and bundle is not None and os.path.exists(bundle) else None,
        # Replayed or recorded cassettes live in the suite: relative to the run dir, like every path here.
        cassette=os.path.relpath(cassette, s.run_dir) if cassette and os.path.exists(cassette) else None,
    )
