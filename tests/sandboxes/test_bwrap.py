"""The bubblewrap backend for real: one keeper per trial, every command entered into it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from skillgym.process import ProcessStartError
from skillgym.sandboxes import SandboxSpec, SandboxUnavailable, make_backend
from skillgym.sandboxes.bwrap import Bubblewrap, BwrapSandbox

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]
ENV = {"PATH": os.environ.get("PATH", os.defpath)}


def _daemon(marker: str) -> str:
    """Shell that leaves `sleep <marker>` running in a session of its own, and returns once it has."""
    start = f"setsid sh -c 'touch /tmp/up; exec sleep {marker}' > /dev/null 2>&1 &"
    return f"{start} while [ ! -f /tmp/up ]; do sleep 0.01; done"


def _spec(tmp_path: Path, **changes: object) -> SandboxSpec:
    trial = tmp_path / "trial"
    (trial / "workspace").mkdir(parents=True, exist_ok=True)
    fields: dict[str, object] = {"trial_dir": str(trial), "tmp": str(trial / "tmp"), "network": "none"}
    return SandboxSpec(**{**fields, **changes})  # type: ignore[arg-type]


def _box(spec: SandboxSpec) -> BwrapSandbox:
    backend = make_backend("bwrap")
    assert isinstance(backend, Bubblewrap)
    box = backend.open(spec)
    assert isinstance(box, BwrapSandbox)
    return box


async def test_the_backend_works_here() -> None:
    assert await make_backend("bwrap").problem() is None


async def test_the_parent_of_the_working_directory_is_the_sandboxs_not_the_hosts(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    box = _box(spec)
    workspace = Path(spec.trial_dir) / "workspace"
    try:
        result = await box.run(
            ["sh", "-c", "echo x > ../../escape; echo x > ../inside; pwd"],
            cwd=workspace,
            env=ENV,
            timeout_s=30,
        )
    finally:
        await box.close()
    assert result.stdout.decode().strip() == str(workspace)
    assert not (tmp_path / "escape").exists()
    assert (Path(spec.trial_dir) / "inside").exists()  # the trial's own folder is writable
    assert result.argv == ("sh", "-c", "echo x > ../../escape; echo x > ../inside; pwd")  # as asked


async def test_commands_of_one_trial_share_its_tmp_and_its_processes(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    box = _box(spec)
    cwd = Path(spec.trial_dir)
    marker = f"1000.{uuid.uuid4().int % 10**6}"
    try:
        first = await box.run(
            ["sh", "-c", f"echo shared > /tmp/note; {_daemon(marker)}"],
            cwd=cwd,
            env=ENV,
            timeout_s=30,
        )
        second = await box.run(["sh", "-c", "cat /tmp/note; ps -eo args"], cwd=cwd, env=ENV, timeout_s=30)
        assert first.exit_code == 0 and second.exit_code == 0
        assert second.stdout.decode().splitlines()[0] == "shared"
        assert f"sleep {marker}" in second.stdout.decode()  # the daemon outlived the first command
        assert (Path(spec.tmp) / "note").read_text() == "shared\n"
    finally:
        warnings = await box.close()
    assert any(f"`sleep {marker}`" in w and "stopped by its sandbox" in w for w in warnings)
    assert subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True).returncode == 1
    assert await box.close() == ()  # closing twice is harmless


async def test_a_missing_program_or_folder_is_a_start_error_as_without_a_sandbox(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    box = _box(spec)
    try:
        with pytest.raises(ProcessStartError, match="not found"):
            await box.run(["no-such-program-here"], cwd=Path(spec.trial_dir), env=ENV, timeout_s=5)
        with pytest.raises(ProcessStartError, match="does not exist"):
            await box.run(["true"], cwd=tmp_path / "nowhere", env=ENV, timeout_s=5)
    finally:
        await box.close()


async def test_a_closed_sandbox_starts_nothing_more(tmp_path: Path) -> None:
    box = _box(_spec(tmp_path))
    assert await box.close() == ()  # never started: nothing to stop
    with pytest.raises(SandboxUnavailable, match="closed"):
        await box.command(["true"], cwd=str(tmp_path))


async def test_the_network_is_loopback_only_unless_host(tmp_path: Path) -> None:
    links = ["sh", "-c", "cat /proc/net/dev | tail -n +3 | cut -d: -f1"]
    for network, expect_only_lo in (("none", True), ("host", False)):
        spec = _spec(tmp_path / network, network=network)
        box = _box(spec)
        try:
            result = await box.run(links, cwd=Path(spec.trial_dir), env=ENV, timeout_s=30)
        finally:
            await box.close()
        names = {line.strip() for line in result.stdout.decode().splitlines() if line.strip()}
        assert (names == {"lo"}) is expect_only_lo, (network, names)


UNPRIVILEGED = textwrap.dedent(
    """
    import anyio, os, sys
    from pathlib import Path
    from skillgym.sandboxes import SandboxSpec, make_backend

    async def main():
        trial = Path(sys.argv[1])
        (trial / "workspace").mkdir(parents=True)
        spec = SandboxSpec(trial_dir=str(trial), tmp=str(trial / "tmp"), network="none")
        box = make_backend("bwrap").open(spec)
        env = {"PATH": os.defpath}
        result = await box.run(
            ["sh", "-c", "id -u; echo x > ../../escape; " + sys.argv[2]],
            cwd=trial / "workspace", env=env, timeout_s=30,
        )
        print(result.stdout.decode().strip(), result.exit_code, len(await box.close()))

    anyio.run(main)
    """
)


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to become nobody"
)
def test_an_ordinary_user_gets_the_same_sandbox_as_their_own_uid(tmp_path: Path) -> None:
    """Unprivileged, bwrap nests a second user namespace; entering takes two hops and keeps the uid."""
    python = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    if not os.access(python, os.X_OK):
        pytest.skip(f"{python} is needed: this interpreter may live where nobody cannot read")
    tmp_path.chmod(0o777)
    for parent in tmp_path.parents:
        if str(parent) in ("/", "/tmp"):
            break
        parent.chmod(parent.stat().st_mode | 0o011)
    paths = [p for p in sys.path if p and os.path.isdir(p) and "site-packages" in p]
    env = {"PATH": os.defpath, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2]), *paths])}
    ran = subprocess.run(
        [
            *("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", UNPRIVILEGED),
            *(str(tmp_path / "t"), _daemon("1000.77")),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if "Operation not permitted" in ran.stderr and "uid map" in ran.stderr:
        pytest.skip("user namespaces are switched off for ordinary users here")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["65534", "0", "1"]
    assert not (tmp_path / "escape").exists()
    assert subprocess.run(["pgrep", "-f", "sleep 1000.77"], capture_output=True).returncode == 1


async def test_the_sandbox_outlives_the_worker_thread_that_waited_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --die-with-parent the kernel ends a sandbox when the thread that started it ends; anyio's
    worker threads end when idle, so the keeper must be started from the event loop's thread."""
    from anyio._backends import _asyncio

    monkeypatch.setattr(_asyncio.WorkerThread, "MAX_IDLE_TIME", 0.05)
    spec = _spec(tmp_path)
    box = _box(spec)
    try:
        first = await box.run(["true"], cwd=Path(spec.trial_dir), env=ENV, timeout_s=30)
        # Two workers, the one that may have started the keeper idle longest; anyio ends such a worker
        # when it hands out the next piece of work.
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.to_thread.run_sync, time.sleep, 0.1)
            await anyio.sleep(0.02)
            group.start_soon(anyio.to_thread.run_sync, time.sleep, 0.3)
        await anyio.sleep(0.2)
        await anyio.to_thread.run_sync(lambda: None)
        await anyio.sleep(0.5)
        second = await box.run(["echo", "still here"], cwd=Path(spec.trial_dir), env=ENV, timeout_s=30)
    finally:
        await box.close()
    assert (first.exit_code, second.exit_code, second.stdout) == (0, 0, b"still here\n")
