"""One trial: its folders (made top down, never the run dir itself), its wall-clock limit, its agent slot."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import msgspec
import pytest

from skillgym import trial
from skillgym.loader import load_suite
from skillgym.plan import build_plan
from skillgym.providers.base import Detection, ProviderRequest, ProviderResult
from skillgym.results import TrialResult
from skillgym.slots import AgentSlots
from skillgym.trace import Trace
from skillgym.workspaces import TrialLayout
from skillgym.workspaces.cleanup import CleanupReport


@pytest.fixture
def mkdirs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    made: list[str] = []
    real = os.mkdir

    def mkdir(path: str, *args: object, **kwargs: object) -> None:
        made.append(os.fspath(path))
        real(path)

    monkeypatch.setattr(trial.os, "mkdir", mkdir)
    return made


def test_each_new_folder_costs_one_mkdir(tmp_path: Path, mkdirs: list[str]) -> None:
    root = str(tmp_path)
    first = os.path.join(root, "trials", "prompt", "a", "none", "stub", "trial-1")
    trial._make_below(root, first)
    assert os.path.isdir(first)
    assert len(mkdirs) == 6  # trials, prompt, a, none, stub, trial-1: none tried before its parent exists
    mkdirs.clear()
    trial._make_below(root, os.path.join(root, "trials", "prompt", "a", "stale", "stub", "trial-1"))
    assert [p[len(root) :] for p in mkdirs] == [
        "/trials/prompt/a/stale",
        "/trials/prompt/a/stale/stub",
        "/trials/prompt/a/stale/stub/trial-1",
    ]


def test_a_folder_removed_during_the_run_is_made_again(tmp_path: Path) -> None:
    root = str(tmp_path)
    trial._make_below(root, os.path.join(root, "trials", "prompt", "a", "none", "stub", "trial-1"))
    shutil.rmtree(os.path.join(root, "trials", "prompt"))
    again = os.path.join(root, "trials", "prompt", "a", "none", "stub", "trial-2")
    trial._make_below(root, again)
    assert os.path.isdir(again)


def test_a_removed_run_dir_is_never_made_again(tmp_path: Path) -> None:
    root = str(tmp_path / "run")
    os.mkdir(root)
    trial._make_below(root, os.path.join(root, "trials", "prompt", "a", "none", "stub", "trial-1"))
    shutil.rmtree(root)
    with pytest.raises(FileNotFoundError):
        trial._make_below(root, os.path.join(root, "trials", "prompt", "b", "none", "stub", "trial-1"))
    assert not os.path.exists(root)


def test_an_existing_folder_is_fine(tmp_path: Path) -> None:
    root = str(tmp_path)
    folder = os.path.join(root, "trials", "prompt", "a", "none", "stub", "trial-1")
    os.makedirs(folder)
    trial._make_below(root, folder)
    assert os.path.isdir(folder)


WALL_SUITE = """
from skillgym import prompt_case

for name, wall in (("slow", 0.2), ("unlimited", None)):
    with prompt_case(name) as c:
        c.category("trigger")
        c.prompt("answer")
        c.expect_skill(None)
        if wall is not None:
            c.budget(max_wall_clock_s=wall)
"""


class Sleepy:
    """A stand-in that takes ``seconds`` (half a second by default) to answer and starts no process."""

    name = "stub"
    skill_dirs: tuple[str, ...] = ()
    runs_agent = False
    passthrough_env: tuple[str, ...] = ()
    network = "none"
    sandbox_readable: tuple[str, ...] = ()
    home_env: dict[str, str] = {}
    stream_format = None

    def __init__(self, seconds: float = 0.5) -> None:
        self.seconds = seconds

    async def detect(self) -> Detection:
        return Detection(provider=self.name, available=True)

    async def invoke(self, request: ProviderRequest) -> ProviderResult:
        await anyio.sleep(self.seconds)
        return ProviderResult(ok=True, trace=Trace(final_text="done"))


@pytest.mark.anyio
async def test_the_wall_clock_limit_ends_a_trial_and_no_limit_lets_it_finish(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "cases.py").write_text(WALL_SUITE)
    suite = load_suite(tmp_path / "evals")
    plan = build_plan(suite, providers=("stub",), conditions=("none",))
    (tmp_path / "run").mkdir()
    settings = trial.TrialSettings(run_dir=str(tmp_path / "run"), run_id="r")
    cases = {c.id: c for c in suite.cases}
    results = {
        item.id.case_id: await trial.run_trial(suite, cases[item.id.case_id], item, Sleepy(), settings)
        for item in plan.items
    }
    assert results["slow"].status == "errored"
    assert results["slow"].error_class == "timeout"
    assert "max_wall_clock_s of 0.2s" in (results["slow"].error_message or "")
    assert results["unlimited"].status == "passed"


@pytest.mark.anyio
@pytest.mark.parametrize(("answer_s", "status"), [(0.05, "passed"), (0.5, "errored")])
async def test_waiting_for_an_agent_slot_does_not_count_against_the_wall_clock_limit(
    tmp_path: Path, answer_s: float, status: str
) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "cases.py").write_text(WALL_SUITE)
    suite = load_suite(tmp_path / "evals")
    plan = build_plan(suite, providers=("stub",), conditions=("none",))
    (item,) = (i for i in plan.items if i.id.case_id == "slow")
    (case,) = (c for c in suite.cases if c.id == "slow")
    (tmp_path / "run").mkdir()
    settings = trial.TrialSettings(run_dir=str(tmp_path / "run"), run_id="r")
    slots = AgentSlots(1)

    async def hold(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        await slots.take()
        task_status.started()
        await anyio.sleep(0.4)  # twice the case's 0.2 s limit
        slots.give()

    async with anyio.create_task_group() as tg:
        await tg.start(hold)
        started = anyio.current_time()
        result = await trial.run_trial(suite, case, item, Sleepy(answer_s), settings, slots=slots)
        waited = anyio.current_time() - started
    assert waited >= 0.4
    # The limit still holds for the trial's own time: an answer slower than 0.2 s times out after the wait.
    assert result.status == status, result.error_message
    if status == "errored":
        assert result.error_class == "timeout"
    # The wait is recorded apart from the trial's duration, which is its own time only.
    assert result.waited_s >= 0.3
    assert result.finished_at - result.started_at >= 0.35
    assert result.duration_s == pytest.approx(
        result.finished_at - result.started_at - result.waited_s, abs=1e-5
    )


class Warned(Sleepy):
    """An agent-running stand-in whose answer comes with a warning, as a stale cassette's does."""

    runs_agent = True

    async def invoke(self, request: ProviderRequest) -> ProviderResult:
        return ProviderResult(ok=True, trace=Trace(final_text="done"), warnings=("cassette is stale",))


@pytest.mark.anyio
async def test_what_cleanup_could_not_undo_joins_the_providers_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A process that outlives SIGKILL (uninterruptible sleep) cannot be made on demand: cleanup runs for
    # real and then reports one, as it would.
    real = trial.cleanup

    async def cleanup(layout: TrialLayout, *, trial_id: str, keep_workspace: bool) -> CleanupReport:
        done = await real(layout, trial_id=trial_id, keep_workspace=keep_workspace)
        return msgspec.structs.replace(done, survivors=(42,), problems=("processes [42] survived SIGKILL",))

    monkeypatch.setattr(trial, "cleanup", cleanup)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "cases.py").write_text(WALL_SUITE)
    suite = load_suite(tmp_path / "evals")
    plan = build_plan(suite, providers=("stub",), conditions=("none",))
    (item,) = (i for i in plan.items if i.id.case_id == "unlimited")
    (case,) = (c for c in suite.cases if c.id == "unlimited")
    (tmp_path / "run").mkdir()
    settings = trial.TrialSettings(run_dir=str(tmp_path / "run"), run_id="r")
    result = await trial.run_trial(suite, case, item, Warned(), settings)
    assert result.status == "passed"  # never a failure
    assert result.warnings == ("cassette is stale", "processes [42] survived SIGKILL")
    written = json.loads((tmp_path / "run" / result.paths.result).read_text())
    assert written["warnings"] == list(result.warnings)


def test_the_trial_dir_is_the_key_below_the_run_dirs_trials_folder(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "cases.py").write_text(WALL_SUITE)
    suite = load_suite(tmp_path / "evals")
    item = build_plan(suite, providers=("stub",), conditions=("none",)).items[0]
    settings = trial.TrialSettings(run_dir=str(tmp_path / "run"), run_id="r")
    folder = os.path.join(str(tmp_path / "run"), "trials", "prompt", "slow", "none", "stub", "trial-1")
    assert trial.trial_dir(settings, item) == folder
    plan = trial.workspace_plan(suite, suite.cases[0], item, settings)
    assert plan["workspace"] == os.path.join(folder, "workspace")


def test_a_walk_that_fails_after_another_thread_forgot_the_folders_still_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = str(tmp_path)
    trial._make_below(root, os.path.join(root, "trials", "prompt", "a", "none", "stub", "trial-1"))
    shutil.rmtree(os.path.join(root, "trials", "prompt", "a"))
    real = os.mkdir
    calls: list[str] = []

    def mkdir(path: str, *args: object, **kwargs: object) -> None:
        if not calls:  # another trial's thread noticed the removal first and cleared what was known
            trial._Folders.known.clear()
        calls.append(path)
        real(path)

    monkeypatch.setattr(trial.os, "mkdir", mkdir)
    again = os.path.join(root, "trials", "prompt", "a", "stale", "stub", "trial-1")
    trial._make_below(root, again)
    assert os.path.isdir(again)


STAGES_SUITE = """
from skillgym import execution_case, prompt_case, workspace_preset

workspace_preset("slow", bootstrap=[["sleep", "30"]])

with prompt_case("answer") as c:
    c.category("trigger")
    c.prompt("tell me the s3cret word")
    c.expect_skill(None)

with execution_case("broken-check") as c:
    c.category("session")
    c.task("make done.txt")
    with c.assertions() as a:
        a.custom("_checks:leaves")

with execution_case("slow-check") as c:
    c.category("session")
    c.task("make done.txt")
    c.budget(max_wall_clock_s=0.3)
    with c.assertions() as a:
        a.custom("_checks:blocks")

with execution_case("slow-setup") as c:
    c.category("session")
    c.workspace("slow")
    c.task("make done.txt")
    c.budget(max_wall_clock_s=0.3)
    with c.assertions() as a:
        a.file_exists("done.txt")
"""

CHECKS = """
import sys

import anyio

def leaves(ctx, config):
    sys.exit(3)

async def blocks(ctx, config):
    await anyio.sleep(60)
    return True
"""


class Agent(Sleepy):
    """A stand-in that counts as running an agent: its trials get a workspace and a hermetic home."""

    runs_agent = True


def _stage_trial(tmp_path: Path, case_id: str, provider: object, **settings: object) -> trial.Trial:
    (tmp_path / "evals").mkdir(exist_ok=True)
    (tmp_path / "evals" / "cases.py").write_text(STAGES_SUITE)
    (tmp_path / "evals" / "_checks.py").write_text(CHECKS)
    suite = load_suite(tmp_path / "evals")
    plan = build_plan(suite, providers=("stub",), conditions=("none",), case_ids=(case_id,))
    (tmp_path / "run").mkdir(exist_ok=True)
    run = trial.TrialSettings(run_dir=str(tmp_path / "run"), run_id="r", **settings)  # type: ignore[arg-type]
    (case,) = suite.cases if len(suite.cases) == 1 else (c for c in suite.cases if c.id == case_id)
    return trial.resolve(suite, case, plan.items[0], provider, run)  # type: ignore[arg-type]


def test_resolving_a_trial_touches_no_file_and_isolates_only_what_runs_a_process(tmp_path: Path) -> None:
    text = _stage_trial(tmp_path, "answer", Sleepy())
    assert not text.isolated and text.env == {}
    assert text.folder == os.path.join(
        str(tmp_path / "run"), "trials", "prompt", "answer", "none", "stub", "trial-1"
    )
    assert text.tag == "r/prompt/answer/none/stub/trial-1"
    assert "tell me the s3cret word" in text.prompt
    agent = _stage_trial(tmp_path, "answer", Agent())
    assert agent.isolated
    assert agent.env["HOME"].startswith(agent.folder)
    assert list((tmp_path / "run").iterdir()) == []


@pytest.mark.anyio
async def test_preparing_a_text_answer_makes_its_folder_and_nothing_else(tmp_path: Path) -> None:
    text = _stage_trial(tmp_path, "answer", Sleepy(), record=True)
    request = await trial.prepare_workspace(text, Sleepy())
    assert os.listdir(text.folder) == []
    assert (request.id.key, request.id.case_id, request.trial_dir) == (
        text.item.id.key,
        "answer",
        text.folder,
    )
    assert request.workspace == text.layout.workspace and request.env == {}
    # --record: the cassette goes into the suite, where replay finds it.
    assert request.record_path is not None
    assert request.record_path.startswith(str((tmp_path / "evals").resolve()))


@pytest.mark.anyio
async def test_preparing_an_agents_trial_builds_its_workspace_and_a_scrubbed_prompt(tmp_path: Path) -> None:
    agent = _stage_trial(tmp_path, "answer", Agent(), secrets=("s3cret",))
    request = await trial.prepare_workspace(agent, Agent())
    assert os.path.isdir(request.workspace)
    prompt = Path(agent.folder, "prompt.txt").read_text()
    assert "tell me the" in prompt and "s3cret" not in prompt
    assert request.env == agent.env and request.record_path is None


class Raises(Sleepy):
    async def invoke(self, request: ProviderRequest) -> ProviderResult:
        raise KeyError("oops")


class Stuck(Sleepy):
    """Ignores its own deadline entirely."""

    async def invoke(self, request: ProviderRequest) -> ProviderResult:
        await anyio.sleep(60)
        raise AssertionError("the harness's deadline must end it first")


@pytest.mark.anyio
async def test_invoking_turns_an_adapter_bug_and_a_stuck_adapter_into_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _stage_trial(tmp_path, "answer", Sleepy())
    request = msgspec.structs.replace(await trial.prepare_workspace(text, Sleepy()), timeout_s=0.05)
    raised = await trial.invoke(Raises(), request)
    assert (raised.ok, raised.error_class) == (False, "provider-error")
    assert raised.error_message == "provider 'stub' raised KeyError: 'oops'"
    monkeypatch.setattr(trial, "DEADLINE_GRACE_S", 0.05)
    stuck = await trial.invoke(Stuck(), request)
    assert (stuck.ok, stuck.error_class) == (False, "timeout")
    assert stuck.error_message == "provider 'stub' did not return within 0.05s (case budget)"


@pytest.mark.anyio
async def test_grading_gives_the_verdict_or_a_grader_error_when_the_suites_check_breaks(
    tmp_path: Path,
) -> None:
    text = _stage_trial(tmp_path, "answer", Sleepy())
    answer = ProviderResult(ok=True, trace=Trace(final_text="done"))
    graded = await trial.grade_outcome(text, answer, agent_started=0.0)
    assert graded.passed
    broken = _stage_trial(tmp_path, "broken-check", Agent())
    await trial.prepare_workspace(broken, Agent())
    with pytest.raises(trial.GraderError, match=r"custom verifier '_checks:leaves' called sys.exit\(3\)"):
        await trial.grade_outcome(broken, answer, agent_started=0.0)


@pytest.mark.anyio
async def test_a_secret_that_reads_like_a_number_leaves_the_trials_json_whole(tmp_path: Path) -> None:
    agent = _stage_trial(tmp_path, "answer", Agent(), secrets=("1733000123",))
    await trial.prepare_workspace(agent, Agent())
    outcome = ProviderResult(ok=True, trace=Trace(final_text="pin 1733000123, then done"))
    times = iter([1733000123.5])
    result = await trial.record(
        agent, outcome, None, None, waited=0.0, started=1733000123.25, clock=lambda: next(times)
    )
    # Only strings are scrubbed: the timestamps that hold the same digits stay numbers, the files JSON.
    assert (result.started_at, result.finished_at) == (1733000123.25, 1733000123.5)
    written = msgspec.json.decode((tmp_path / "run" / result.paths.result).read_bytes(), type=TrialResult)
    assert written == result
    trace = msgspec.json.decode((tmp_path / "run" / (result.paths.trace or "")).read_bytes(), type=Trace)
    assert trace.final_text == "pin <redacted>, then done"


@pytest.mark.anyio
async def test_recording_writes_the_scrubbed_result_it_returns(tmp_path: Path) -> None:
    agent = _stage_trial(tmp_path, "answer", Agent(), secrets=("s3cret",))
    await trial.prepare_workspace(agent, Agent())
    outcome = ProviderResult(ok=False, trace=Trace(final_text="the s3cret is out"), warnings=("stale",))
    times = iter([10.0])
    result = await trial.record(
        agent,
        outcome,
        None,
        ("provider-error", "agent printed s3cret"),
        waited=2.0,
        started=5.0,
        clock=lambda: next(times),
    )
    assert (result.status, result.error_class) == ("errored", "provider-error")
    assert result.error_message is not None and "s3cret" not in result.error_message
    assert result.warnings == ("stale",)
    assert (result.started_at, result.finished_at, result.duration_s, result.waited_s) == (
        5.0,
        10.0,
        3.0,
        2.0,
    )
    written = msgspec.json.decode((tmp_path / "run" / result.paths.result).read_bytes(), type=TrialResult)
    assert written == result
    assert "s3cret" not in Path(tmp_path / "run" / (result.paths.trace or "")).read_text()
    # A trial that did not pass keeps its workspace for a look; cleanup ran (nothing left to warn about).
    assert result.paths.workspace is not None and os.path.isdir(tmp_path / "run" / result.paths.workspace)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("case_id", "error_class", "says"),
    [
        (
            "slow-setup",
            "environment-error",
            "the workspace setup ran past the case's max_wall_clock_s of 0.3s",
        ),
        ("slow-check", "grader-error", "grading ran past the case's max_wall_clock_s of 0.3s"),
    ],
)
async def test_the_wall_clock_limit_names_the_stage_whose_time_ran_out(
    tmp_path: Path, case_id: str, error_class: str, says: str
) -> None:
    # The agent's own time past the limit is its timeout (above); a setup or grading past it is not.
    staged = _stage_trial(tmp_path, case_id, Agent(0.0))
    result = await trial.run_trial(staged.suite, staged.case, staged.item, Agent(0.0), staged.settings)
    assert (result.status, result.error_class) == ("errored", error_class)
    assert result.error_message is not None and says in result.error_message


@contextlib.contextmanager
def _unscrubbable(path: Path) -> Iterator[None]:
    """``path`` made impossible to rewrite for real: unreadable, or immutable where we run as root."""
    if os.geteuid() != 0:
        path.chmod(0)
        try:
            yield
        finally:
            path.chmod(0o644)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)], check=False).returncode:
        pytest.skip("no way to make a file unwritable for root here (chattr +i)")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@pytest.mark.anyio
async def test_a_file_that_could_not_be_scrubbed_is_a_warning_naming_it(tmp_path: Path) -> None:
    agent = _stage_trial(tmp_path, "answer", Agent(), secrets=("s3cret-value",))
    await trial.prepare_workspace(agent, Agent())
    stuck = Path(agent.layout.workspace) / "notes.txt"
    stuck.write_text("the s3cret-value again")
    with _unscrubbable(stuck):
        result = await trial.record(
            agent, ProviderResult(ok=True, trace=Trace()), None, None, waited=0, started=0
        )
    (warning,) = result.warnings
    rel = os.path.relpath(stuck, tmp_path / "run")
    assert warning.startswith(f"{rel} may still hold a secret value: it could not be scrubbed (")
    written = json.loads((tmp_path / "run" / result.paths.result).read_text())
    assert written["warnings"] == [warning]


def test_the_suites_secret_looking_env_joins_the_runs_secrets(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "cases.py").write_text(
        """
from skillgym import Command, condition, execution_case, workspace_preset

workspace_preset("ws", env={"PRESET_API_KEY": "preset-secret", "MODE": "plain-value"},
                 bootstrap=[Command(argv=("true",), env={"SETUP_TOKEN": "setup-secret"})])
condition("none", env={"COND_PASSWORD": "condition-secret"})

with execution_case("c") as c:
    c.category("session")
    c.workspace("ws")
    c.env({"CASE_TOKEN": "case-secret-longer", "PIN_KEY": "1"})
    c.task("t")
    with c.assertions() as a:
        a.file_exists("x")
"""
    )
    suite = load_suite(tmp_path / "evals")
    plan = build_plan(suite, providers=("stub",), conditions=("none",))
    (tmp_path / "run").mkdir()
    settings = trial.TrialSettings(
        run_dir=str(tmp_path / "run"), run_id="r", secrets=("run-wide-secret-value",)
    )
    for provider in (Agent(), Sleepy()):  # with a workspace and without one
        got = trial.resolve(suite, suite.cases[0], plan.items[0], provider, settings)  # type: ignore[arg-type]
        assert got.secrets == (
            "run-wide-secret-value",
            "case-secret-longer",
            "condition-secret",
            "preset-secret",
            "setup-secret",
        )
