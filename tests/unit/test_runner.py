"""The run's stages, each alone: detect, replay kept results, schedule, finish."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest

from skillgym.bus import running_bus
from skillgym.events import (
    CaseFinish,
    CaseStart,
    Event,
    LaneFinish,
    LaneStart,
    RunFinish,
    TrialFinish,
    TrialStart,
)
from skillgym.loader import load_suite
from skillgym.model import Suite
from skillgym.plan import Plan, build_plan
from skillgym.providers.base import Detection, ProviderRequest, ProviderResult
from skillgym.results import TrialResult
from skillgym.runner import (
    Brackets,
    OutputError,
    ProviderUnavailable,
    RunContext,
    RunOptions,
    Scheduled,
    detect_providers,
    finish,
    replay_kept,
    run_context,
    run_start,
    schedule,
)
from skillgym.trace import Trace
from tests.results import result_for

CASES = """
from skillgym import prompt_case

for name in ("a", "b"):
    with prompt_case(name) as c:
        c.category("trigger")
        c.prompt("answer")
        c.expect_skill(None)
"""


class Recorder:
    name = "recorder"

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def on_event(self, event: Event) -> None:
        self.events.append(event)

    async def finish(self) -> None:
        pass


def _shape(events: list[Event]) -> list[str]:
    """Each event's type and the trial or group it is about."""
    shapes = []
    for e in events:
        match e:
            case LaneStart() | LaneFinish():
                shapes.append(f"{type(e).__name__} {e.lane}")
            case CaseStart() | CaseFinish():
                shapes.append(f"{type(e).__name__} {e.case_id}/{e.condition}")
            case TrialStart():
                shapes.append(f"{type(e).__name__} {e.id.key}")
            case TrialFinish():
                shapes.append(f"{type(e).__name__} {e.result.id.key} {e.result.status}")
            case _:
                shapes.append(type(e).__name__)
    return shapes


def _suite(tmp_path: Path, answers: dict[str, str]) -> Suite:
    (tmp_path / "evals" / "stubs").mkdir(parents=True)
    (tmp_path / "evals" / "cases.py").write_text(CASES)
    for case, text in answers.items():
        (tmp_path / "evals" / "stubs" / f"{case}.md").write_text(text)
    return load_suite(tmp_path / "evals")


async def _context(tmp_path: Path, suite: Suite, plan: Plan, **options: object) -> RunContext:
    run_options = RunOptions(output=str(tmp_path / "runs"), **options)  # type: ignore[arg-type]
    providers = await detect_providers(plan, suite, run_options)
    run_dir = tmp_path / "runs" / "r"
    run_dir.mkdir(parents=True)
    return run_context(plan, suite, run_options, providers, run_id="r", run_dir=run_dir)


@pytest.mark.anyio
async def test_detecting_an_unavailable_provider_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    suite = _suite(tmp_path, {})
    plan = build_plan(suite, providers=("command",), conditions=("none",))
    options = RunOptions(output=str(tmp_path / "runs"), agent_command=str(tmp_path / "nowhere"))
    with pytest.raises(
        ProviderUnavailable, match=r"provider 'command' is not available: agent command .*nowhere"
    ):
        await detect_providers(plan, suite, options)
    assert not (tmp_path / "runs").exists()


@pytest.mark.anyio
async def test_scheduling_runs_every_trial_inside_its_brackets(tmp_path: Path) -> None:
    suite = _suite(tmp_path, {"a": "done", "b": "done"})
    plan = build_plan(suite, providers=("stub",), conditions=("none",), trials=2)
    run = await _context(tmp_path, suite, plan, concurrency=1)
    recorder = Recorder()
    async with running_bus(recorder) as bus:
        scheduled = await schedule(run, plan.items, Brackets(plan, bus, "r"), bus)
    assert (scheduled.interrupted, scheduled.output_error, scheduled.leftovers) == (False, None, ())
    assert [r.id for r in scheduled.results] == [i.id for i in plan.items]  # one at a time: in plan order
    assert _shape(recorder.events) == [
        "LaneStart prompt",
        "CaseStart a/none",
        "TrialStart prompt/a/none/stub/trial-1",
        "TrialFinish prompt/a/none/stub/trial-1 passed",
        "TrialStart prompt/a/none/stub/trial-2",
        "TrialFinish prompt/a/none/stub/trial-2 passed",
        "CaseFinish a/none",
        "CaseStart b/none",
        "TrialStart prompt/b/none/stub/trial-1",
        "TrialFinish prompt/b/none/stub/trial-1 passed",
        "TrialStart prompt/b/none/stub/trial-2",
        "TrialFinish prompt/b/none/stub/trial-2 passed",
        "CaseFinish b/none",
        "LaneFinish prompt",
    ]


@pytest.mark.anyio
async def test_replaying_kept_results_posts_them_as_if_they_had_just_run(tmp_path: Path) -> None:
    suite = _suite(tmp_path, {"a": "done"})  # b has no canned answer: it fails
    plan = build_plan(suite, providers=("stub",), conditions=("none",))
    run = await _context(tmp_path, suite, plan)
    async with running_bus() as bus:
        kept = (await schedule(run, plan.items, Brackets(plan, bus, "r"), bus)).results
    recorder = Recorder()
    async with running_bus(recorder) as bus:
        await replay_kept(run, sorted(kept, key=lambda r: r.id.key), Brackets(plan, bus, "r"), bus)
    assert _shape(recorder.events) == [
        "LaneStart prompt",
        "CaseStart a/none",
        "TrialStart prompt/a/none/stub/trial-1",
        "TrialFinish prompt/a/none/stub/trial-1 passed",
        "CaseFinish a/none",
        "CaseStart b/none",
        "TrialStart prompt/b/none/stub/trial-1",
        "TrialFinish prompt/b/none/stub/trial-1 errored",
        "CaseFinish b/none",
        "LaneFinish prompt",
    ]
    finished = [e.result for e in recorder.events if isinstance(e, TrialFinish)]
    assert finished == sorted(kept, key=lambda r: r.id.key)  # the very results, not rebuilt ones


class RemovesTheRunDir:
    """An in-process stand-in that deletes the run directory while its trial runs."""

    name = "stub"
    skill_dirs: tuple[str, ...] = ()
    runs_agent = False
    passthrough_env: tuple[str, ...] = ()
    network = "none"
    sandbox_readable: tuple[str, ...] = ()
    home_env: dict[str, str] = {}
    stream_format = None

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir

    async def detect(self) -> Detection:
        return Detection(provider=self.name, available=True)

    async def invoke(self, request: ProviderRequest) -> ProviderResult:
        shutil.rmtree(self.run_dir)
        return ProviderResult(ok=True, trace=Trace(final_text="done"))


@pytest.mark.anyio
async def test_a_run_dir_removed_during_a_trial_stops_the_schedule(tmp_path: Path) -> None:
    suite = _suite(tmp_path, {"a": "done", "b": "done"})
    plan = build_plan(suite, providers=("stub",), conditions=("none",))
    run = await _context(tmp_path, suite, plan, concurrency=1)
    run = msgspec.structs.replace(run, providers={"stub": RemovesTheRunDir(run.run_dir)})
    async with running_bus() as bus:
        scheduled = await schedule(run, plan.items, Brackets(plan, bus, "r"), bus)
    assert scheduled.results == () and scheduled.interrupted
    assert scheduled.output_error is not None
    assert scheduled.output_error.startswith(str(run.run_dir / "trials" / "prompt" / "a"))
    assert scheduled.output_error.endswith("No such file or directory")
    assert not run.run_dir.exists()  # the trial after it did not make a husk of it


@pytest.mark.anyio
async def test_a_run_dir_removed_between_trials_stops_the_schedule_before_the_next(tmp_path: Path) -> None:
    suite = _suite(tmp_path, {"a": "done", "b": "done"})
    plan = build_plan(suite, providers=("stub",), conditions=("none",))
    run = await _context(tmp_path, suite, plan)
    shutil.rmtree(run.run_dir)
    async with running_bus() as bus:
        scheduled = await schedule(run, plan.items, Brackets(plan, bus, "r"), bus)
    assert scheduled == Scheduled(results=(), interrupted=True, output_error=f"{run.run_dir} was removed")
    assert not run.run_dir.exists()


def _result(key: str, status: str) -> TrialResult:
    return result_for(key, status, category="trigger")


A, B = "prompt/a/none/stub/trial-1", "prompt/b/none/stub/trial-1"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("statuses", "scheduled", "exit_code"),
    [
        (("passed", "passed"), {}, 0),
        (("passed", "failed"), {}, 1),
        (("passed", "errored"), {}, 1),
        (("passed",), {"interrupted": True}, 130),
        (("passed",), {"interrupted": True, "output_error": "gone"}, OutputError.exit_code),
    ],
)
async def test_finishing_judges_the_run_and_publishes_run_finish(
    tmp_path: Path, statuses: tuple[str, ...], scheduled: dict[str, object], exit_code: int
) -> None:
    suite = _suite(tmp_path, {})
    plan = build_plan(suite, providers=("stub",), conditions=("none",))
    run = await _context(tmp_path, suite, plan)
    results = [_result(key, status) for key, status in zip((A, B), statuses, strict=False)]
    recorder = Recorder()
    async with running_bus(recorder) as bus:
        brackets = Brackets(plan, bus, "r")
        for result in results:
            brackets.before(next(i for i in plan.items if i.id.key == result.id.key), {})
            brackets.after(result)
        end = await finish(
            run,
            results,
            Scheduled(results=(), **scheduled),
            brackets,
            bus,
            duration_s=1.25,  # type: ignore[arg-type]
        )
    assert (end.exit_code, end.counts.total, end.duration_s) == (exit_code, len(results), 1.25)
    assert end.interrupted == bool(scheduled.get("interrupted"))
    assert recorder.events[-1] == end
    assert sum(isinstance(e, RunFinish) for e in recorder.events) == 1
    # An interruption closes the lane it left open (with the trials it got) before run.finish.
    shapes = _shape(recorder.events)
    assert shapes[-2] == "LaneFinish prompt" and shapes.count("LaneFinish prompt") == 1


@pytest.mark.anyio
async def test_the_run_secrets_hold_the_providers_credentials_whatever_their_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(tmp_path, {"a": "done", "b": "done"})
    plan = build_plan(suite, providers=("stub",), conditions=("none",))
    options = RunOptions(output=str(tmp_path / "runs"))
    providers = await detect_providers(plan, suite, options)
    monkeypatch.setattr(providers["stub"], "credentials", ("MY_AGENT_LOGIN", "MY_AGENT_PIN"), raising=False)
    monkeypatch.setenv("MY_AGENT_LOGIN", "login-credential-value")
    monkeypatch.setenv("MY_AGENT_PIN", "12")  # too short to scrub from free text
    run = run_context(plan, suite, options, providers, run_id="r", run_dir=tmp_path / "runs" / "r")
    assert run.settings.secrets == ("login-credential-value",)


class _SlowStandIn:
    default_concurrency = 3


@pytest.mark.anyio
async def test_concurrency_defaults_to_the_providers_own_the_smallest_with_several(tmp_path: Path) -> None:
    suite = _suite(tmp_path, {"a": "done", "b": "done"})
    plan = build_plan(suite, providers=("stub",), conditions=("none",))
    options = RunOptions(output=str(tmp_path / "runs"))
    providers = await detect_providers(plan, suite, options)
    run = run_context(plan, suite, options, providers, run_id="r", run_dir=tmp_path / "runs" / "r")
    assert run.options.concurrency == 16  # the stub's own
    assert run_start(run, resumed=False).concurrency == 16
    given = msgspec.structs.replace(options, concurrency=2)
    assert run_context(plan, suite, given, providers, run_id="r", run_dir=tmp_path).options.concurrency == 2
    several = {**providers, "slow": _SlowStandIn()}  # a provider without the attribute would mean 4
    run = run_context(plan, suite, options, several, run_id="r", run_dir=tmp_path)  # type: ignore[arg-type]
    assert run.options.concurrency == 3
