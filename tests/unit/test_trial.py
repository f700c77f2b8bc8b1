"""One trial: its folders (made top down, never the run dir itself), its wall-clock limit, its agent slot."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import anyio
import msgspec
import pytest

from skillgym import trial
from skillgym.loader import load_suite
from skillgym.plan import build_plan
from skillgym.providers.base import Detection, ProviderRequest, ProviderResult
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
        item.case_id: await trial.run_trial(suite, cases[item.case_id], item, Sleepy(), settings)
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
    (item,) = (i for i in plan.items if i.case_id == "slow")
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
    (item,) = (i for i in plan.items if i.case_id == "unlimited")
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
