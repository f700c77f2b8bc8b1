"""Tests for skillgym.process with real child processes: output, deadlines, cancellation and cleanup."""

from __future__ import annotations

import errno
import os
import resource
import signal
import sys
import tracemalloc
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from skillgym import childio
from skillgym.errors import SkillgymError
from skillgym.process import (
    MAX_LINE_BYTES,
    ProcessStartError,
    kill_pids,
    kill_process_group,
    process_group_alive,
    processes_by_env,
    run_process,
)

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024
TRIAL_KEY = "SKILLGYM_TRIAL_ID"
# Only a safety net against a hung test; no assertion measures time.
SAFETY_S = 60


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def trial_env() -> Iterator[dict[str, str]]:
    """The test runner's environment tagged with a fresh trial id; leftovers are killed even on failure."""
    trial_id = f"test-process-{uuid.uuid4()}"
    yield {**os.environ, TRIAL_KEY: trial_id}
    for pid in processes_by_env(TRIAL_KEY, [trial_id]).get(trial_id, []):
        os.kill(pid, signal.SIGKILL)


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process; a zombie (init here may never reap orphans) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def read_pid(path: Path) -> int:
    return int(path.read_text().strip())


async def wait_for_file(path: Path) -> None:
    while not (path.exists() and path.read_text().endswith("\n")):
        await anyio.sleep(0.01)


async def test_normal_command_captures_streams_files_and_lines(
    tmp_path: Path, trial_env: dict[str, str]
) -> None:
    lines: list[bytes] = []
    with anyio.fail_after(SAFETY_S):
        result = await run_process(
            ["sh", "-c", "printf 'one\\ntwo\\n\\nlast'; printf 'oops\\n' >&2"],
            cwd=tmp_path,
            env=trial_env,
            timeout_s=30,
            stdout_path=tmp_path / "stdout.log",
            stderr_path=tmp_path / "stderr.log",
            on_stdout_line=lines.append,
        )
    assert result.exit_code == 0
    assert result.signal is None
    assert not result.timed_out
    assert result.argv == ("sh", "-c", "printf 'one\\ntwo\\n\\nlast'; printf 'oops\\n' >&2")
    assert result.pid > 0
    assert result.stdout == b"one\ntwo\n\nlast"
    assert result.stderr == b"oops\n"
    assert (result.stdout_bytes, result.stderr_bytes) == (13, 5)
    assert not result.truncated
    assert (tmp_path / "stdout.log").read_bytes() == b"one\ntwo\n\nlast"
    assert (tmp_path / "stderr.log").read_bytes() == b"oops\n"
    assert lines == [b"one", b"two", b"", b"last"]


async def test_stdin_is_fed_while_output_is_read(tmp_path: Path, trial_env: dict[str, str]) -> None:
    # 512 KiB through cat overflows the pipe buffers: it only finishes if feeding and reading overlap.
    data = b"".join(b"%07d\n" % i for i in range(MIB // 2 // 8))
    seen: list[bytes] = []
    with anyio.fail_after(SAFETY_S):
        result = await run_process(
            ["cat"], cwd=tmp_path, env=trial_env, timeout_s=30, stdin_data=data, on_stdout_line=seen.append
        )
    assert result.exit_code == 0
    assert result.stdout == data
    assert seen == data.splitlines()


async def test_a_child_that_never_reads_stdin_is_not_an_error(
    tmp_path: Path, trial_env: dict[str, str]
) -> None:
    # More than a pipe holds, to a child that exits without reading: the rest is dropped, no hang.
    with anyio.fail_after(SAFETY_S):
        result = await run_process(
            ["sh", "-c", "echo done"], cwd=tmp_path, env=trial_env, timeout_s=30, stdin_data=b"x" * MIB
        )
    assert (result.exit_code, result.stdout) == (0, b"done\n")


async def test_without_pidfds_the_exit_is_polled(
    tmp_path: Path, trial_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As on macOS, or Linux before 5.3: no pidfd for the child, so its exit is noticed by polling.
    monkeypatch.setattr(childio, "_pidfd", lambda pid: None)
    with anyio.fail_after(SAFETY_S):
        result = await run_process(
            ["sh", "-c", "cat; sleep 0.1; exit 3"],
            cwd=tmp_path,
            env=trial_env,
            timeout_s=30,
            stdin_data=b"hi",
        )
        timed = await run_process(["sleep", "30"], cwd=tmp_path, env=trial_env, timeout_s=0.2)
    assert (result.exit_code, result.stdout) == (3, b"hi")
    assert timed.timed_out and timed.signal == signal.SIGTERM


async def test_without_stdin_data_the_child_reads_end_of_file(
    tmp_path: Path, trial_env: dict[str, str]
) -> None:
    with anyio.fail_after(SAFETY_S):
        result = await run_process(["cat"], cwd=tmp_path, env=trial_env, timeout_s=30)
    assert result.exit_code == 0
    assert result.stdout == b""


async def test_long_lines_reach_the_callback_in_pieces(tmp_path: Path, trial_env: dict[str, str]) -> None:
    script = (
        "import sys; out = sys.stdout.buffer; "
        f"out.write(b'a' * ({2 * MAX_LINE_BYTES} + 5) + b'\\n'); "
        f"out.write(b'b' * {MAX_LINE_BYTES} + b'\\n'); out.write(b'tail')"
    )
    sizes: list[int] = []
    with anyio.fail_after(SAFETY_S):
        result = await run_process(
            [sys.executable, "-c", script],
            cwd=tmp_path,
            env=trial_env,
            timeout_s=30,
            on_stdout_line=lambda line: sizes.append(len(line)),
        )
    assert result.exit_code == 0
    assert sizes == [MAX_LINE_BYTES, MAX_LINE_BYTES, 5, MAX_LINE_BYTES, 4]


@pytest.mark.parametrize("program", ["skillgym-no-such-program", "/nonexistent/skillgym-program"])
async def test_missing_executable_raises_process_start_error(
    tmp_path: Path, trial_env: dict[str, str], program: str
) -> None:
    with pytest.raises(ProcessStartError) as caught:
        await run_process([program, "--help"], cwd=tmp_path, env=trial_env, timeout_s=30)
    error = caught.value
    assert isinstance(error, OSError)
    assert isinstance(error, SkillgymError)
    assert error.errno == errno.ENOENT
    assert error.executable == program
    assert program in str(error)
    assert str(tmp_path) in str(error)
    assert "not found" in str(error)


async def test_non_executable_file_raises_process_start_error(
    tmp_path: Path, trial_env: dict[str, str]
) -> None:
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    with pytest.raises(ProcessStartError, match="not executable") as caught:
        await run_process([str(script)], cwd=tmp_path, env=trial_env, timeout_s=30)
    assert caught.value.errno == errno.EACCES
    assert str(script) in str(caught.value)


async def test_missing_working_directory_is_named(tmp_path: Path, trial_env: dict[str, str]) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(ProcessStartError, match="working directory") as caught:
        await run_process(["true"], cwd=missing, env=trial_env, timeout_s=30)
    assert caught.value.cwd == missing
    assert str(missing) in str(caught.value)


async def test_an_unwritable_log_fails_before_any_process_starts(
    tmp_path: Path, trial_env: dict[str, str]
) -> None:
    marker = tmp_path / "started"
    with pytest.raises(FileNotFoundError):
        await run_process(
            ["touch", str(marker)],
            cwd=tmp_path,
            env=trial_env,
            timeout_s=30,
            stdout_path=tmp_path / "missing-dir" / "stdout.txt",
        )
    assert not marker.exists()


async def test_argv_must_be_a_list_not_a_shell_string(tmp_path: Path, trial_env: dict[str, str]) -> None:
    with pytest.raises(TypeError, match="never uses a shell"):
        await run_process("echo hi", cwd=tmp_path, env=trial_env, timeout_s=30)
    with pytest.raises(ValueError, match="argv is empty"):
        await run_process([], cwd=tmp_path, env=trial_env, timeout_s=30)


async def test_non_zero_exit(tmp_path: Path, trial_env: dict[str, str]) -> None:
    with anyio.fail_after(SAFETY_S):
        result = await run_process(["sh", "-c", "exit 3"], cwd=tmp_path, env=trial_env, timeout_s=30)
    assert (result.exit_code, result.signal, result.timed_out) == (3, None, False)


async def test_death_by_signal(tmp_path: Path, trial_env: dict[str, str]) -> None:
    with anyio.fail_after(SAFETY_S):
        result = await run_process(["sh", "-c", "kill -KILL $$"], cwd=tmp_path, env=trial_env, timeout_s=30)
    assert (result.exit_code, result.signal, result.timed_out) == (None, signal.SIGKILL, False)


async def test_timeout_kills_the_child_and_its_grandchild(tmp_path: Path, trial_env: dict[str, str]) -> None:
    with anyio.fail_after(SAFETY_S):
        result = await run_process(
            ["sh", "-c", "sleep 300 & echo $! > grandchild.pid; echo started; wait"],
            cwd=tmp_path,
            env=trial_env,
            # Long enough for sh to fork and write the pid file; it is the deadline under test, not a bound.
            timeout_s=2,
        )
    grandchild = read_pid(tmp_path / "grandchild.pid")
    assert result.timed_out
    assert result.exit_code is None
    assert result.signal == signal.SIGTERM
    assert result.stdout == b"started\n"
    assert not running(result.pid)
    assert not running(grandchild)
    assert not process_group_alive(result.pid)


async def test_normal_exit_kills_what_the_child_left_in_its_group(
    tmp_path: Path, trial_env: dict[str, str]
) -> None:
    # The background sleep keeps stdout open too: run_process must not wait for it to finish on its own.
    with anyio.fail_after(SAFETY_S):
        result = await run_process(
            ["sh", "-c", "sleep 300 & echo $! > grandchild.pid"], cwd=tmp_path, env=trial_env, timeout_s=None
        )
    assert (result.exit_code, result.timed_out) == (0, False)
    assert not running(read_pid(tmp_path / "grandchild.pid"))
    assert not process_group_alive(result.pid)


async def test_cancellation_kills_the_group_and_propagates(tmp_path: Path, trial_env: dict[str, str]) -> None:
    script = "echo $$ > child.pid; sleep 300 & echo $! > grandchild.pid; wait"
    outcome: list[str] = []

    async def trial() -> None:
        try:
            await run_process(["sh", "-c", script], cwd=tmp_path, env=trial_env, timeout_s=None)
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled")
            raise
        outcome.append("returned")

    with anyio.fail_after(SAFETY_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(trial)
            await wait_for_file(tmp_path / "grandchild.pid")
            child, grandchild = read_pid(tmp_path / "child.pid"), read_pid(tmp_path / "grandchild.pid")
            assert running(child)
            assert running(grandchild)
            # What Ctrl-C does to a run: the task group owning the trial is cancelled.
            tg.cancel_scope.cancel()
    assert outcome == ["cancelled"]
    assert not running(child)
    assert not running(grandchild)
    assert not process_group_alive(child)


async def test_failing_line_callback_propagates_unwrapped_after_cleanup(
    tmp_path: Path, trial_env: dict[str, str]
) -> None:
    def on_line(line: bytes) -> None:
        raise RuntimeError(f"cannot parse {line!r}")

    with anyio.fail_after(SAFETY_S), pytest.raises(RuntimeError, match="cannot parse b'ready'"):
        await run_process(
            ["sh", "-c", "echo $$ > child.pid; sleep 300 & echo $! > grandchild.pid; echo ready; wait"],
            cwd=tmp_path,
            env=trial_env,
            timeout_s=None,
            on_stdout_line=on_line,
        )
    assert not running(read_pid(tmp_path / "child.pid"))
    assert not running(read_pid(tmp_path / "grandchild.pid"))


async def test_huge_output_is_capped_counted_and_memory_stays_bounded(
    tmp_path: Path, trial_env: dict[str, str]
) -> None:
    # 10 MiB of stderr first: if stdout were read alone the child would block on a full stderr pipe.
    script = (
        "import sys\n"
        "sys.stderr.buffer.write(b'e' * (10 * 1024 * 1024))\n"
        "chunk = (b'x' * 1023 + b'\\n') * 1024\n"
        "for _ in range(100):\n"
        "    sys.stdout.buffer.write(chunk)\n"
    )
    line_count = 0

    def on_line(line: bytes) -> None:
        nonlocal line_count
        assert line == b"x" * 1023
        line_count += 1

    rss_before_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    try:
        with anyio.fail_after(SAFETY_S):
            result = await run_process(
                [sys.executable, "-c", script],
                cwd=tmp_path,
                env=trial_env,
                timeout_s=None,
                stdout_path=tmp_path / "stdout.log",
                stderr_path=tmp_path / "stderr.log",
                max_capture_bytes=1 * MIB,
                max_file_bytes=8 * MIB,
                on_stdout_line=on_line,
            )
        _, peak_bytes = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    rss_growth_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before_kib

    assert result.exit_code == 0
    assert (result.stdout_bytes, result.stderr_bytes) == (100 * MIB, 10 * MIB)
    assert result.stdout == (b"x" * 1023 + b"\n") * 1024
    assert result.stderr == b"e" * MIB
    assert (tmp_path / "stdout.log").stat().st_size == 8 * MIB
    assert (tmp_path / "stderr.log").stat().st_size == 8 * MIB
    assert result.truncated
    assert line_count == 100 * 1024
    # Holding the output would take over 110 MiB; the bounds leave room for the 1 MiB heads and buffers.
    assert peak_bytes < 32 * MIB
    assert rss_growth_kib < 100 * 1024


async def test_capture_cap_without_a_file_marks_truncated(tmp_path: Path, trial_env: dict[str, str]) -> None:
    with anyio.fail_after(SAFETY_S):
        result = await run_process(
            ["sh", "-c", "printf 0123456789"], cwd=tmp_path, env=trial_env, timeout_s=30, max_capture_bytes=4
        )
    assert (result.stdout, result.stdout_bytes, result.truncated) == (b"0123", 10, True)


async def test_capture_cap_with_a_file_keeps_everything_in_the_file(
    tmp_path: Path, trial_env: dict[str, str]
) -> None:
    with anyio.fail_after(SAFETY_S):
        result = await run_process(
            ["sh", "-c", "printf 0123456789"],
            cwd=tmp_path,
            env=trial_env,
            timeout_s=30,
            stdout_path=tmp_path / "stdout.log",
            max_capture_bytes=4,
        )
    assert (result.stdout, result.stdout_bytes, result.truncated) == (b"0123", 10, False)
    assert (tmp_path / "stdout.log").read_bytes() == b"0123456789"


async def test_daemon_that_left_the_group_is_found_by_env_and_killed(
    tmp_path: Path, trial_env: dict[str, str]
) -> None:
    # Like a tmux server: setsid puts it in its own session, out of reach of the group kill. It also keeps
    # the child's stdout open, which must not keep run_process waiting. The loop makes sh exit only once
    # the daemon has its own session, so the group kill cannot catch it before setsid.
    script = (
        "setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' & while [ ! -s daemon.pid ]; do sleep 0.01; done"
    )
    with anyio.fail_after(SAFETY_S):
        result = await run_process(["sh", "-c", script], cwd=tmp_path, env=trial_env, timeout_s=None)
    daemon = read_pid(tmp_path / "daemon.pid")
    assert result.exit_code == 0
    assert running(daemon)
    assert os.getpgid(daemon) != result.pid

    trial_id = trial_env[TRIAL_KEY]
    assert processes_by_env(TRIAL_KEY, [trial_id]) == {trial_id: [daemon]}
    assert processes_by_env(TRIAL_KEY, [trial_id + "-other"]) == {}
    assert processes_by_env(TRIAL_KEY, [""]) == {}
    # One pass for several values: each value maps to its own processes; prefixes do not match.
    assert processes_by_env(TRIAL_KEY, [trial_id, trial_id[:-1], "unknown"]) == {trial_id: [daemon]}
    found = [daemon]
    with anyio.fail_after(SAFETY_S):
        survivors = await kill_pids(found, grace_s=5)
    assert survivors == []
    assert not running(daemon)
    assert processes_by_env(TRIAL_KEY, [trial_id]) == {}


async def test_kill_process_group_escalates_to_sigkill(tmp_path: Path, trial_env: dict[str, str]) -> None:
    # Ignoring SIGTERM is inherited by sleep, so only SIGKILL ends this group.
    process = await anyio.open_process(
        ["sh", "-c", "trap '' TERM; sleep 300 & echo ready; wait"],
        cwd=tmp_path,
        env=trial_env,
        start_new_session=True,
    )
    async with process:
        assert process.stdout is not None
        with anyio.fail_after(SAFETY_S):
            assert await process.stdout.receive() == b"ready\n"
            assert process_group_alive(process.pid)
            assert await kill_process_group(process.pid, grace_s=0.2)
            assert await process.wait() == -signal.SIGKILL
    assert not process_group_alive(process.pid)
    # A group already gone is fine to kill again.
    assert await kill_process_group(process.pid, grace_s=0.2)


async def test_kill_helpers_refuse_our_own_group_and_process() -> None:
    with pytest.raises(ValueError, match="refusing"):
        await kill_process_group(os.getpgrp())
    with pytest.raises(ValueError, match="refusing"):
        await kill_process_group(0)
    with pytest.raises(ValueError, match="refusing"):
        await kill_pids([os.getpid()])
    with pytest.raises(ValueError, match="refusing"):
        await kill_pids([-1])


def test_processes_by_env_rejects_bad_names() -> None:
    with pytest.raises(ValueError, match="contain no '='"):
        processes_by_env("A=B", ["x"])
    with pytest.raises(ValueError, match="non-empty"):
        processes_by_env("", ["x"])


async def test_many_children_run_at_once_without_a_thread_each(
    tmp_path: Path, trial_env: dict[str, str]
) -> None:
    import threading

    codes: list[int | None] = []
    peak_threads = threading.active_count()

    async def one(code: int) -> None:
        result = await run_process(
            ["sh", "-c", f"sleep 0.3; exit {code}"], cwd=tmp_path, env=trial_env, timeout_s=30
        )
        codes.append(result.exit_code)

    async def watch_threads() -> None:
        nonlocal peak_threads
        while len(codes) < 16:
            peak_threads = max(peak_threads, threading.active_count())
            await anyio.sleep(0.02)

    with anyio.fail_after(SAFETY_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch_threads)
            for code in range(16):
                tg.start_soon(one, code)
    assert sorted(c for c in codes if c is not None) == list(range(16))
    if hasattr(os, "pidfd_open"):
        # Children are started on the loop and their exits noticed through pidfds: no thread each.
        assert peak_threads - threading.active_count() < 8


def test_processes_run_in_one_event_loop_after_another(tmp_path: Path) -> None:
    async def run_true() -> int | None:
        return (await run_process(["true"], cwd=tmp_path, env=dict(os.environ), timeout_s=30)).exit_code

    assert anyio.run(run_true) == 0
    assert anyio.run(run_true) == 0


async def test_secrets_never_reach_the_log_files_even_cut_across_reads(
    tmp_path: Path, trial_env: dict[str, str]
) -> None:
    secret = f"sk-stream-{uuid.uuid4().hex}"
    half = len(secret) // 2
    # Each half in its own write with a pause between: the two halves arrive in separate reads.
    script = (
        "import sys, time\n"
        f"s = {secret!r}\n"
        "for out in (sys.stdout, sys.stderr):\n"
        f"    out.write('before ' + s[:{half}]); out.flush(); time.sleep(0.2)\n"
        f"    out.write(s[{half}:] + ' after ' + s); out.flush()\n"
    )
    lines: list[bytes] = []
    with anyio.fail_after(SAFETY_S):
        result = await run_process(
            [sys.executable, "-c", script],
            cwd=tmp_path,
            env=trial_env,
            timeout_s=30,
            stdout_path=tmp_path / "stdout.log",
            stderr_path=tmp_path / "stderr.log",
            on_stdout_line=lines.append,
            secrets=(secret,),
        )
    assert result.exit_code == 0
    for name in ("stdout.log", "stderr.log"):
        assert (tmp_path / name).read_bytes() == b"before <redacted> after <redacted>"
    # What the caller keeps in memory is the child's own output: it scrubs what it stores of it.
    assert result.stdout == f"before {secret} after {secret}".encode() and lines == [result.stdout]
    assert result.stdout_bytes == len(result.stdout)
