"""Tests for skillgym.workspaces.cleanup with real tmux servers and real daemonized processes."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from skillgym.model import Command
from skillgym.workspaces import TrialLayout, background_removal, cleanup, layout_for, materialize, remove_tree
from skillgym.workspaces.removal import discard

from .support import make_case, make_condition, make_preset, make_suite, trial_env

pytestmark = pytest.mark.anyio
sweep_module = importlib.import_module("skillgym.workspaces.sweep")

# Cleanup finds a trial's processes by this tag machine-wide: a run id of its own, so another test
# process running these tests at the same time (another checkout, another session) is never taken for ours.
RUN = f"run-{uuid.uuid4().hex[:12]}"


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting for a parent that will never reap it."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            state = file.read().rsplit(b")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in (b"Z", b"X")


@pytest.fixture
def started() -> Iterator[list[int]]:
    """PIDs a test started; any still running at the end are killed so no test leaks a process."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            os.kill(pid, 9)


def daemonize(env: dict[str, str]) -> int:
    """Start `sleep` in its own session, orphaned (as a detaching agent command would), return its pid."""
    out = subprocess.run(
        ["bash", "-c", "setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $!"],
        env=env,
        capture_output=True,
        check=True,
        text=True,
    )
    return int(out.stdout.strip())


def make_dirs(layout: TrialLayout) -> None:
    for path in (layout.workspace, layout.home, layout.tmux_tmpdir, layout.fixture_log_dir):
        Path(path).mkdir(parents=True, exist_ok=True)


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
async def test_kills_a_real_tmux_server_started_under_the_trial_socket_dir(
    layout: TrialLayout, started: list[int]
) -> None:
    make_dirs(layout)
    # Deliberately untagged: the socket sweep alone must find and stop it.
    env = {"PATH": os.environ["PATH"], "TMUX_TMPDIR": layout.tmux_tmpdir, "TERM": "xterm"}
    subprocess.run(["tmux", "new-session", "-d", "-s", "agent", "sleep 300"], env=env, check=True)
    pid = int(
        subprocess.run(
            ["tmux", "display-message", "-p", "-t", "agent", "#{pid}"],
            env=env,
            capture_output=True,
            check=True,
            text=True,
        ).stdout
    )
    started.append(pid)
    assert alive(pid)

    report = await cleanup(layout, trial_id="trial-tmux", keep_workspace=False)

    assert len(report.tmux_sockets) == 1
    assert report.tmux_sockets[0].startswith(layout.tmux_tmpdir)
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
    assert not Path(layout.tmux_tmpdir).exists()


async def test_kills_a_daemon_tagged_with_the_trial_id_and_spares_others(
    layout: TrialLayout, started: list[int]
) -> None:
    make_dirs(layout)
    base = {"PATH": os.environ["PATH"]}
    mine = daemonize({**base, "SKILLGYM_TRIAL_ID": f"{RUN}/trial-1"})
    other = daemonize({**base, "SKILLGYM_TRIAL_ID": f"{RUN}/trial-10"})
    started += [mine, other]
    assert alive(mine)
    assert alive(other)

    report = await cleanup(layout, trial_id=f"{RUN}/trial-1", keep_workspace=False)

    assert report.killed == (mine,)
    assert report.survivors == ()
    assert report.problems == (
        f"still running when the trial ended, stopped by cleanup: `sleep 300` (PID {mine})",
    )
    assert not alive(mine)
    assert alive(other)


async def test_a_daemon_a_bootstrap_command_left_behind_is_killed(
    layout: TrialLayout, suite_root: Path, started: list[int]
) -> None:
    # The bootstrap command exits once its setsid child leads its own session (so the group kill at exit
    # cannot reach it); the child keeps the trial tag in its environment.
    script = (
        "setsid sleep 300 >/dev/null 2>&1 </dev/null & p=$!; echo $p > daemon.pid; "
        "for i in $(seq 250); do [ \"$(awk '{print $6}' /proc/$p/stat)\" = $p ] && break; sleep 0.02; done"
    )
    preset = make_preset(bootstrap=(Command(argv=("bash", "-c", script)),))
    env = trial_env(layout, suite_root, trial_id=f"{RUN}/daemon-trial")
    await materialize(
        layout,
        suite=make_suite(suite_root),
        case=make_case(),
        condition=make_condition(),
        preset=preset,
        env=env,
        skill_dirs=(),
    )
    pid = int((Path(layout.workspace) / "daemon.pid").read_text())
    started.append(pid)
    assert alive(pid)

    await cleanup(layout, trial_id=f"{RUN}/daemon-trial", keep_workspace=True)

    assert not alive(pid)


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[frozenset[str]]:
    """The trial ids each real /proc scan was made for, in order."""
    made: list[frozenset[str]] = []
    real = sweep_module.processes_by_env

    def counted(key: str, values: frozenset[str]) -> dict[str, list[int]]:
        made.append(values)
        return real(key, values)

    monkeypatch.setattr(sweep_module, "processes_by_env", counted)
    return made


async def test_trials_ending_together_share_process_scans(
    tmp_path: Path, started: list[int], scans: list[frozenset[str]]
) -> None:
    base = {"PATH": os.environ["PATH"]}
    daemons = {
        f"run-2/trial-{n}": daemonize({**base, "SKILLGYM_TRIAL_ID": f"run-2/trial-{n}"}) for n in range(6)
    }
    started += daemons.values()
    reports = {}

    async def one(trial_id: str) -> None:
        layout = layout_for(tmp_path / "run" / trial_id)
        reports[trial_id] = await cleanup(layout, trial_id=trial_id, keep_workspace=False)

    async with anyio.create_task_group() as tg:
        for trial_id in daemons:
            tg.start_soon(one, trial_id)

    assert {trial_id: report.killed for trial_id, report in reports.items()} == {
        trial_id: (pid,) for trial_id, pid in daemons.items()
    }
    assert not any(alive(pid) for pid in daemons.values())
    assert 1 <= len(scans) <= 2, "the first trial scans; the rest share the next scan"
    assert set().union(*scans) == set(daemons)


async def test_a_trial_asking_during_a_scan_gets_a_later_scan(
    tmp_path: Path, started: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first scan has read /proc before the late daemon starts: its answer must not serve the late
    # trial, which asked after that daemon existed.
    gate = threading.Event()
    real = sweep_module.processes_by_env
    scans: list[frozenset[str]] = []

    def held(key: str, values: frozenset[str]) -> dict[str, list[int]]:
        found = real(key, values)
        scans.append(values)
        if len(scans) == 1:
            gate.wait(timeout=30)
        return found

    monkeypatch.setattr(sweep_module, "processes_by_env", held)
    base = {"PATH": os.environ["PATH"]}
    found: dict[str, tuple[int, ...]] = {}

    async def one(trial_id: str) -> None:
        report = await cleanup(
            layout_for(tmp_path / "run" / trial_id), trial_id=trial_id, keep_workspace=False
        )
        found[trial_id] = report.killed

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "run-3/early")
        while not scans:
            await anyio.sleep(0.01)
        late = daemonize({**base, "SKILLGYM_TRIAL_ID": "run-3/late"})
        started.append(late)
        tg.start_soon(one, "run-3/late")
        await anyio.sleep(0.05)
        gate.set()

    assert found == {"run-3/early": (), "run-3/late": (late,)}
    assert scans == [frozenset({"run-3/early"}), frozenset({"run-3/late"})]
    assert not alive(late)


async def test_while_trials_end_together_a_scan_waits_for_the_rest_of_the_wave(
    scans: list[frozenset[str]],
) -> None:

    async def ask(trial_id: str) -> None:
        await sweep_module.tagged_pids(trial_id)

    # A lone trial scans at once, and is alone: the next one does not wait for company.
    await ask("solo-1")
    await ask("solo-2")
    assert scans == [frozenset({"solo-1"}), frozenset({"solo-2"})]
    # Two trials at once: the second asks while the first one's scan runs, so it gets the next scan.
    async with anyio.create_task_group() as tg:
        tg.start_soon(ask, "wave-1a")
        tg.start_soon(ask, "wave-1b")
    assert scans[2:] == [frozenset({"wave-1a"}), frozenset({"wave-1b"})]
    # From then on a scan waits a moment: a trial that asks once the first one is already waiting (not in
    # the same instant) shares its scan.
    async with anyio.create_task_group() as tg:
        tg.start_soon(ask, "wave-2a")
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(ask, "wave-2b")
    assert scans[4:] == [frozenset({"wave-2a", "wave-2b"})]


async def test_removes_workspace_and_home_unless_kept(layout: TrialLayout) -> None:
    make_dirs(layout)
    (Path(layout.workspace) / "snapshot.txt").write_text("x")
    (Path(layout.fixture_log_dir) / "hello.jsonl").write_text("{}")

    await cleanup(layout, trial_id="kept", keep_workspace=True)
    assert (Path(layout.workspace) / "snapshot.txt").exists()
    assert Path(layout.home).is_dir()
    assert not Path(layout.tmux_tmpdir).exists()

    await cleanup(layout, trial_id="kept", keep_workspace=False)
    assert not Path(layout.workspace).exists()
    assert not Path(layout.home).exists()
    assert (Path(layout.fixture_log_dir) / "hello.jsonl").exists(), "fixture logs are evidence"


async def test_nothing_there_is_not_an_error(layout: TrialLayout) -> None:
    report = await cleanup(layout, trial_id="never-started", keep_workspace=False)
    assert report.tmux_sockets == ()
    assert report.killed == ()
    assert report.problems == ()


async def test_read_only_dirs_inside_the_workspace_are_removed(layout: TrialLayout) -> None:
    make_dirs(layout)
    locked = Path(layout.workspace) / "go" / "pkg" / "mod"
    locked.mkdir(parents=True)
    (locked / "file.go").write_text("package x\n")
    locked.chmod(0o500)
    locked.parent.chmod(0o500)
    report = await cleanup(layout, trial_id="ro", keep_workspace=False)
    assert report.problems == ()
    assert not Path(layout.workspace).exists()


def test_remove_tree_removes_a_symlink_not_its_target(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep.txt").write_text("x")
    link = tmp_path / "workspace"
    link.symlink_to(target)
    remove_tree(link)
    assert not link.exists()
    assert (target / "keep.txt").exists()


def _tree(root: Path, name: str) -> Path:
    path = root / name / "deep" / "er"
    path.mkdir(parents=True)
    (path / "file.txt").write_text("x")
    return root / name


async def test_discard_outside_a_run_removes_at_once(tmp_path: Path) -> None:
    doomed = _tree(tmp_path, "a")
    assert await discard([str(doomed), str(tmp_path / "never-existed")]) == []
    assert not doomed.exists()


async def test_background_removal_hands_paths_over_and_waits_for_them_at_the_end(tmp_path: Path) -> None:
    first, second = _tree(tmp_path, "first"), _tree(tmp_path, "second")
    async with background_removal():
        assert await discard([str(first)]) == []
        await discard([str(second)])
    assert not first.exists() and not second.exists()


async def test_background_removal_says_what_it_could_not_remove(tmp_path: Path) -> None:
    doomed = _tree(tmp_path, "a")
    async with background_removal() as problems:
        # Not even root may unlink a file of /proc: a removal that really fails, in the background.
        await discard([str(doomed), "/proc/self/status"])
    assert not doomed.exists()
    assert len(problems) == 1
    assert problems[0].startswith("could not remove /proc/self/status: ")
    assert problems[0].endswith("; delete it by hand")


async def test_background_removal_finishes_even_when_its_block_is_cancelled(tmp_path: Path) -> None:
    doomed = [_tree(tmp_path, f"t{n}") for n in range(20)]
    with anyio.CancelScope() as scope:
        async with background_removal():
            for path in doomed:
                await discard([str(path)])
            scope.cancel()
            await anyio.sleep(30)
    assert not any(path.exists() for path in doomed)
