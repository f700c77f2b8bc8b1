"""Tests for skillgym.childio with real child processes: the exchange, its failures and its close."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest

from skillgym import childio
from skillgym.childio import Child

pytestmark = pytest.mark.anyio

# Only a safety net against a hung test; no assertion measures time.
SAFETY_S = 30


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["pidfd", "polled"])
def exit_watch(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways the exit is noticed: a pidfd on Linux, polling where there is none."""
    if request.param == "polled":
        monkeypatch.setattr(childio, "_pidfd", lambda pid: None)
    return str(request.param)


def _start(
    argv: list[str], cwd: Path, stdin_data: bytes | None = None
) -> tuple[Child, list[bytes], list[bytes]]:
    out: list[bytes] = []
    err: list[bytes] = []
    child = Child.start(
        tuple(argv),
        cwd=cwd,
        env=dict(os.environ),
        stdin_data=stdin_data,
        stdout=out.append,
        stderr=err.append,
    )
    return child, out, err


async def test_the_exit_the_output_and_the_reap(tmp_path: Path, exit_watch: str) -> None:
    child, out, err = _start(["sh", "-c", "cat; echo oops >&2; exit 4"], tmp_path, stdin_data=b"hello")
    assert child.returncode is None
    with anyio.fail_after(SAFETY_S):
        assert await child.exited() == 4
        await child.output_ended()
    assert child.drained
    assert (b"".join(out), b"".join(err)) == (b"hello", b"oops\n")
    assert child.returncode == 4
    assert os.getpgid(os.getpid()) != child.pid  # it ran in its own session and group
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)  # reaped: no zombie left behind
    child.close()


async def test_a_failing_sink_is_raised_once_and_stops_the_exchange(tmp_path: Path, exit_watch: str) -> None:
    calls: list[bytes] = []

    def sink(chunk: bytes) -> None:
        calls.append(chunk)
        raise ValueError("bad line")

    child = Child.start(
        ("sh", "-c", "echo first; sleep 0.2; echo second; sleep 30"),
        cwd=tmp_path,
        env=dict(os.environ),
        stdin_data=None,
        stdout=sink,
        stderr=lambda chunk: None,
    )
    with anyio.fail_after(SAFETY_S):
        with pytest.raises(ValueError, match="bad line"):
            await child.exited()
        # Raised once: now it just waits. The pipes were closed, so the next echo ends the child.
        assert await child.exited() == -signal.SIGPIPE
    assert calls == [b"first\n"]
    child.close()


async def test_after_close_no_sink_is_called_and_the_exit_is_still_awaited(
    tmp_path: Path, exit_watch: str
) -> None:
    # SIGPIPE ignored: writing to the closed stdout fails and the script goes on to its exit code.
    child, out, _ = _start(["sh", "-c", "trap '' PIPE; sleep 0.2; echo late; exit 7"], tmp_path)
    child.close()
    with anyio.fail_after(SAFETY_S):
        assert await child.exited() == 7
    assert out == []
    assert child.returncode == 7
    child.close()  # twice is fine


def test_starting_outside_an_asyncio_loop_is_refused_before_any_process_exists(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    with pytest.raises(RuntimeError, match="asyncio backend"):
        _start(["touch", str(marker)], tmp_path)
    assert not marker.exists()


async def test_a_missing_program_raises_what_popen_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        _start(["skillgym-no-such-program"], tmp_path)
