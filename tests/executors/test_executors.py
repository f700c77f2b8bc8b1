"""The executor seam without a cluster: flags, refusals, what a run records, and the node's own helpers."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import tarfile
import threading
from pathlib import Path

import pytest

from skillgym.errors import UsageError
from skillgym.executors import ExecutorSettings
from skillgym.executors.flags import executor_settings
from skillgym.executors.ray_node import _unmasked, pack, unpack
from skillgym.hashing import suite_files_hash
from skillgym.plugins import EXECUTORS
from tests.conftest import run_cli, run_dirs, write_suite

SUITE = {
    "suite.py": """
        from skillgym import prompt_case

        with prompt_case("one") as c:
            c.category("trigger")
            c.prompt("should we wait?")
            c.expect_skill(None)
            with c.step("waits") as s:
                s.must_mention("wait")
    """,
    "stubs/one.md": "I would wait.\n",
}


def _stub_run(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("run", "--suite", str(root), "--provider", "stub", *args, cwd=root.parent, env=env)


def test_the_registry_lists_local_and_ray_and_local_is_the_default() -> None:
    assert {"local", "ray"} <= set(EXECUTORS.names())
    assert ExecutorSettings().name == "local"


def test_a_local_run_records_its_executor_and_no_node(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", SUITE)
    done = _stub_run(root, "--output", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stderr
    (run_dir,) = run_dirs(tmp_path / "runs")
    settings = json.loads((run_dir / "run.json").read_text())["settings"]
    assert settings["executor"] == {
        "name": "local",
        "address": None,
        "trial_cpus": 1.0,
        "trial_memory_mb": None,
        "transfer": "auto",
    }
    (result,) = run_dir.glob("trials/**/result.json")
    assert json.loads(result.read_text())["node"] is None


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--executor", "nope"], "unknown executor 'nope' given to --executor; valid executors: local, ray"),
        (["--trial-cpus", "2"], "--trial-cpus only apply to trials on a cluster: add --executor ray"),
        (
            ["--ray-address", "h:1", "--trial-files", "copy"],
            "--ray-address, --trial-files only apply to trials on a cluster",
        ),
        (["--executor", "ray", "--trial-cpus", "0"], "expected a positive number of CPUs, got '0'"),
        (["--executor", "ray", "--trial-memory-mb", "x"], "expected a whole number of megabytes"),
    ],
)
def test_executor_flag_mistakes_exit_2_before_anything_is_written(
    tmp_path: Path, args: list[str], said: str
) -> None:
    root = write_suite(tmp_path / "evals", SUITE)
    done = _stub_run(root, "--output", str(tmp_path / "runs"), *args)
    assert done.returncode == 2
    assert said in done.stderr
    assert not (tmp_path / "runs").exists()


def test_ray_that_cannot_be_imported_is_a_configuration_error_naming_the_extra(tmp_path: Path) -> None:
    # A `ray` package that fails to import, first on the path: what a machine without the extra sees.
    fake = tmp_path / "noray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    root = write_suite(tmp_path / "evals", SUITE)
    env = {"PYTHONPATH": f"{fake.parent}{os.pathsep}{Path(__file__).resolve().parents[2]}"}
    done = _stub_run(root, "--executor", "ray", "--output", str(tmp_path / "runs"), env=env)
    assert done.returncode == 2, done.stderr
    assert "--executor ray needs Ray, which is not installed here: pip install 'skillgym[ray]'" in done.stderr
    assert not (tmp_path / "runs").exists()


def test_a_resume_keeps_the_recorded_executor_unless_told_otherwise() -> None:
    recorded = {
        "name": "ray",
        "address": "h:1",
        "trial_cpus": 2.0,
        "trial_memory_mb": 512,
        "transfer": "copy",
    }
    same = executor_settings({}, recorded)
    assert same == ExecutorSettings(
        name="ray", address="h:1", trial_cpus=2.0, trial_memory_mb=512, transfer="copy"
    )
    moved = executor_settings({"ray_address": "other:2"}, recorded)
    assert moved.address == "other:2" and moved.trial_cpus == 2.0 and moved.transfer == "copy"
    # Back on one machine: the cluster's options do not carry over.
    assert executor_settings({"executor": "local"}, recorded) == ExecutorSettings()
    with pytest.raises(UsageError, match="--trial-cpus only apply to trials on a cluster"):
        executor_settings({"executor": "local", "trial_cpus": 2.0}, recorded)


def test_a_trial_on_a_node_starts_its_processes_with_no_signal_blocked() -> None:
    # A Ray worker blocks SIGINT; a process it started would inherit that (tmux's C-c would do nothing).
    seen: list[str] = []

    def worker() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        blocked_here = _blocked()
        started = _unmasked(lambda: _blocked())  # type: ignore[arg-type,return-value]
        seen.extend([blocked_here, started])

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert int(seen[0], 16) & (1 << (signal.SIGINT - 1))
    assert int(seen[1], 16) == 0


def _blocked() -> str:
    status = subprocess.run(["cat", "/proc/self/status"], capture_output=True, text=True, check=True).stdout
    return next(line.split()[1] for line in status.splitlines() if line.startswith("SigBlk:"))


def test_a_packed_trial_folder_unpacks_whole_over_what_an_earlier_attempt_left(tmp_path: Path) -> None:
    trial = tmp_path / "node" / "trial-1"
    (trial / "workspace" / "sub").mkdir(parents=True)
    (trial / "result.json").write_text("{}")
    (trial / "workspace" / "sub" / "notes.txt").write_bytes(b"\x00binary\xff")
    (trial / "workspace" / "skill").symlink_to("/opt/elsewhere/skill")  # a link may point anywhere
    there = tmp_path / "run" / "trial-1"
    there.mkdir(parents=True)
    (there / "half-written.txt").write_text("from the attempt whose node died")
    unpack(pack(str(trial)), str(there))
    assert sorted(str(p.relative_to(there)) for p in there.rglob("*")) == [
        "result.json",
        "workspace",
        "workspace/skill",
        "workspace/sub",
        "workspace/sub/notes.txt",
    ]
    assert (there / "workspace" / "sub" / "notes.txt").read_bytes() == b"\x00binary\xff"
    assert os.readlink(there / "workspace" / "skill") == "/opt/elsewhere/skill"


@pytest.mark.skipif(not hasattr(tarfile, "tar_filter"), reason="Python before 3.11.4 has no tar filters")
def test_an_unpacked_folder_never_writes_outside_itself(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"bad"))
    with pytest.raises(tarfile.OutsideDestinationError):
        unpack(buffer.getvalue(), str(tmp_path / "run" / "trial-1"))
    assert not (tmp_path / "run" / "escaped.txt").exists()


def test_the_suite_files_hash_sees_every_file_but_caches_and_run_folders(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", SUITE)
    before = suite_files_hash(str(root))
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "suite.cpython.pyc").write_bytes(b"cache")
    (root / "runs" / "r1").mkdir(parents=True)
    (root / "runs" / "r1" / "run.json").write_text("{}")
    assert suite_files_hash(str(root)) == before
    (root / "stubs" / "one.md").write_text("I would not.\n")
    assert suite_files_hash(str(root)) != before


def test_help_lists_the_executors(tmp_path: Path) -> None:
    done = run_cli("run", "--help", cwd=tmp_path)
    assert "executor (where trials run)" in done.stdout
    assert "local, ray (default local" in " ".join(done.stdout.split())


@pytest.mark.anyio
async def test_what_a_node_is_sent_holds_none_of_the_driver_s_own_secrets(tmp_path: Path) -> None:
    from skillgym.executors.ray_driver import node_run
    from skillgym.executors.ray_node import encode
    from skillgym.loader import load_suite
    from skillgym.plan import build_plan
    from skillgym.runner import RunOptions, detect_providers, run_context

    root = write_suite(tmp_path / "evals", SUITE)
    suite = load_suite(root)
    plan = build_plan(suite, providers=("stub",))
    driver_secret = "sk-driver-only-0123456789abcdef"
    options = RunOptions(output=str(tmp_path / "runs"), secrets=(driver_secret,))
    providers = await detect_providers(plan, suite, options)
    run = run_context(plan, suite, options, providers, run_id="r", run_dir=tmp_path / "runs" / "r")
    assert driver_secret in run.settings.secrets  # a local trial scrubs it...
    blob = encode(node_run(run, "auto"))
    assert driver_secret.encode() not in blob  # ...and a node never gets it: its trials cannot see it
    assert str(root.resolve()).encode() in blob  # the suite travels, at its absolute path
