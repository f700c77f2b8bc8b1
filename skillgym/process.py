"""Running child processes: one process group each, streamed and capped output, and no survivors."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO, Final, TypeAlias

import anyio

from .childio import Child, Sink
from .errors import SkillgymError
from .lifeline import LIFELINE
from .model import Data
from .redact import ByteScrubber

_MIB: Final = 1024 * 1024
# Lines handed to `on_stdout_line` are at most this long, so one endless line cannot grow memory.
MAX_LINE_BYTES: Final = _MIB
# After the process group is gone, whatever is still buffered in the pipes is read within this time; a
# process that escaped the group (its own session) may hold the pipes open forever.
_DRAIN_S: Final = 2.0
# SIGKILL cannot be caught, but delivery to a process in uninterruptible sleep can lag.
_AFTER_KILL_S: Final = 2.0
_POLL_S: Final = 0.05
_PROC_READ: Final = 64 * 1024

LineCallback: TypeAlias = Callable[[bytes], None]


class ProcessStartError(SkillgymError, OSError):
    """The child could not be started: its executable or its working directory is missing or unusable."""

    def __init__(self, message: str, *, executable: str, cwd: Path, code: int | None) -> None:
        super().__init__(message)
        self.executable = executable
        self.cwd = cwd
        # Set after __init__ so str() stays our message rather than "[Errno 2] ...".
        self.errno = code


class ProcessResult(Data, frozen=True, kw_only=True):
    """How one child process ended and what it printed.

    ``exit_code`` is None when a signal ended the child (``signal`` names it). ``stdout`` and ``stderr``
    hold at most ``max_capture_bytes`` from the start of each stream; ``stdout_bytes`` and
    ``stderr_bytes`` count everything the child wrote. ``truncated`` means some output was kept nowhere:
    past the file cap, or past the capture cap when there was no file.
    """

    argv: tuple[str, ...]
    pid: int
    exit_code: int | None
    signal: int | None
    timed_out: bool
    duration_s: float
    stdout: bytes
    stderr: bytes
    stdout_bytes: int
    stderr_bytes: int
    truncated: bool


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float | None,
    stdout_path: Path | None = None,
    stderr_path: Path | None = None,
    stdin_data: bytes | None = None,
    max_capture_bytes: int = 16 * _MIB,
    max_file_bytes: int = 64 * _MIB,
    on_stdout_line: LineCallback | None = None,
    secrets: Iterable[str] = (),
) -> ProcessResult:
    """Run ``argv`` (never through a shell) in its own process group and return how it ended.

    stdout and stderr are read concurrently as they arrive, appended to ``stdout_path`` and
    ``stderr_path`` (up to ``max_file_bytes`` each) and kept in memory up to ``max_capture_bytes`` each.
    ``on_stdout_line`` gets each stdout line without its newline (longer lines in ``MAX_LINE_BYTES``
    pieces), called on the event loop as output arrives. ``env`` is the child's whole environment.
    Each of ``secrets`` is replaced in the files as the output streams in, so it never reaches the disk
    whatever the size; the in-memory head and the lines are the child's own bytes (a caller scrubs what it
    keeps of them).

    When the child exits, the deadline passes, or the caller is cancelled, the whole process group is
    killed (SIGTERM, up to 2 s grace, SIGKILL), so nothing the child started in its group survives the
    call; cancellation propagates after that cleanup. If ``on_stdout_line`` raises or a log file cannot
    be written, the group is killed the same way and that exception propagates unchanged.

    Raises ``ProcessStartError`` when the executable or ``cwd`` is missing or not usable.
    """
    if isinstance(argv, str):
        raise TypeError(
            f"argv must be a list of arguments, not the string {argv!r}; run_process never uses a shell, "
            "so pass for example ['sh', '-c', script] if a shell is really meant"
        )
    if not argv:
        raise ValueError("argv is empty; pass the program followed by its arguments")
    if max_capture_bytes < 0 or max_file_bytes < 0:
        raise ValueError(f"caps must be zero or more, got {max_capture_bytes=} and {max_file_bytes=}")
    command = tuple(argv)
    with contextlib.ExitStack() as files:
        # Unbuffered: each chunk is one write, so a log being tailed, or left behind by a crash, has
        # everything so far without a flush per chunk. An unwritable log path fails before any process
        # exists.
        out_file, err_file = (
            None if path is None else files.enter_context(open(path, "wb", buffering=0))
            for path in (stdout_path, stderr_path)
        )
        secrets = tuple(secrets)
        stdout = _Output(out_file, max_capture_bytes, max_file_bytes, secrets)
        stderr = _Output(err_file, max_capture_bytes, max_file_bytes, secrets)
        lines = _LineSplitter(MAX_LINE_BYTES) if on_stdout_line is not None else None

        def take_stdout(chunk: bytes) -> None:
            stdout.take(chunk)
            if lines is not None and on_stdout_line is not None:
                for line in lines.feed(chunk):
                    on_stdout_line(line)

        process = _start(command, cwd, env, stdin_data, take_stdout, stderr.take)
        started = time.monotonic()
        timed_out = False
        try:
            with anyio.move_on_after(timeout_s) as deadline:
                await process.exited()
            timed_out = deadline.cancelled_caught
            # Members left in the group hold the pipes open; killing them is what lets the reads end.
            await kill_process_group(process.pid)
            if not process.drained:
                with anyio.move_on_after(_DRAIN_S):
                    await process.output_ended()
            if lines is not None and on_stdout_line is not None and (last := lines.finish()) is not None:
                on_stdout_line(last)
        finally:
            process.close()  # after cancellation or a failing callback, no callback runs again
            with anyio.CancelScope(shield=True):
                # Idempotent after the call above; here it covers cancellation and a failing callback.
                await kill_process_group(process.pid)
                if process.returncode is None:
                    with anyio.move_on_after(_AFTER_KILL_S):
                        await process.exited()
                LIFELINE.release(process.pid)
            stdout.finish()  # what each scrubber still held back
            stderr.finish()
        duration_s = time.monotonic() - started
    returncode = process.returncode
    return ProcessResult(
        argv=command,
        pid=process.pid,
        exit_code=returncode if returncode is not None and returncode >= 0 else None,
        signal=-returncode if returncode is not None and returncode < 0 else None,
        timed_out=timed_out,
        duration_s=duration_s,
        stdout=bytes(stdout.head),
        stderr=bytes(stderr.head),
        stdout_bytes=stdout.seen,
        stderr_bytes=stderr.seen,
        truncated=stdout.dropped or stderr.dropped,
    )


async def kill_process_group(pgid: int, grace_s: float = 2.0) -> bool:
    """SIGTERM process group ``pgid``, wait up to ``grace_s`` for it to go, then SIGKILL what is left.

    Returns True once no member is running. Runs to the end even when the caller is cancelled (the
    cancellation is delivered afterwards), so cleanup cannot be cut short halfway.
    """
    if pgid <= 1 or pgid == os.getpgrp():
        raise ValueError(f"refusing to kill process group {pgid}: it is not a child's group")
    if not _signal_group(pgid, signal.SIGTERM):
        return True  # the usual case: the group is already gone, and nothing needs waiting for
    with anyio.CancelScope(shield=True):
        gone = await _terminate_group(pgid, grace_s)
    return gone


def process_group_alive(pgid: int) -> bool:
    """True while any member of process group ``pgid`` is running; zombies (exited, unreaped) do not count."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, it is just not ours
    if not _has_proc():
        return True
    # Orphans whose init never reaps them stay zombies in the group forever, so ask /proc for live ones.
    for pid in _proc_pids():
        stat = _read_stat(pid)
        if stat is not None and stat[1] == pgid and stat[0] not in "ZX":
            return True
    return False


def processes_by_env(key: str, values: Iterable[str]) -> dict[str, list[int]]:
    """This user's running processes whose environment holds ``key=<one of values>``, in one pass over
    ``/proc``: value -> PIDs, ascending (values no process holds are absent).

    The environment is the one each process was started with (``/proc/PID/environ``); this process is
    never listed. Processes of other users and processes that exit mid-scan are skipped. Without
    ``/proc`` (not Linux) the answer is empty.
    """
    if not key or "=" in key:
        raise ValueError(f"environment variable name {key!r} must be non-empty and contain no '='")
    wanted = {os.fsencode(value): value for value in values}
    marker = b"\0" + os.fsencode(key) + b"="
    me = os.getpid()
    found: dict[str, list[int]] = {}
    for pid in _proc_pids():
        if pid == me:
            continue
        environ = _read_proc(f"/proc/{pid}/environ")
        if environ is None:  # exited, or not ours to read
            continue
        environ = b"\0" + environ
        at = environ.find(marker)
        while at != -1:
            start = at + len(marker)
            end = environ.find(b"\0", start)
            value = wanted.get(environ[start:end] if end != -1 else environ[start:])
            if value is not None:
                found.setdefault(value, []).append(pid)
                break
            at = environ.find(marker, start)
    return found


def command_line(pid: int, limit: int = 200, *, proc: str = "/proc") -> str | None:
    """Process ``pid``'s command line as one string of at most ``limit`` characters; None once it is gone.

    ``proc`` is where the process's procfs is (a sandbox's own, for a PID of that sandbox).
    """
    try:
        with open(f"{proc}/{pid}/cmdline", "rb") as file:
            raw = file.read(4096)
    except OSError:
        return None
    return raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", errors="replace")[:limit]


def left_running(command: str, pid: int | str, *, by: str) -> str:
    """The warning for a process that outlived its trial: which one, and what stopped it."""
    return f"still running when the trial ended, stopped by {by}: `{command}` (PID {pid})"


async def kill_pids(pids: Iterable[int], grace_s: float = 2.0) -> list[int]:
    """SIGTERM each of ``pids``, wait up to ``grace_s``, SIGKILL the rest; return those still running.

    Like ``kill_process_group`` it runs to the end even when the caller is cancelled.
    """
    targets = list(dict.fromkeys(pids))
    if bad := [pid for pid in targets if pid <= 1 or pid == os.getpid()]:
        raise ValueError(f"refusing to signal {bad}: not a child process id")
    with anyio.CancelScope(shield=True):
        survivors = await _terminate_pids(targets, grace_s)
    return survivors


class _Output:
    """Private accumulator for one output stream: a bounded in-memory head, a capped file and counts."""

    __slots__ = ("_file", "_max_capture", "_max_file", "_scrubber", "dropped", "file_bytes", "head", "seen")

    def __init__(
        self,
        file: BinaryIO | None,
        max_capture_bytes: int,
        max_file_bytes: int,
        secrets: tuple[str, ...] = (),
    ) -> None:
        self._file = file
        self._max_capture = max_capture_bytes
        self._max_file = max_file_bytes
        self._scrubber = ByteScrubber(secrets) if secrets and file is not None else None
        self.head = bytearray()
        self.seen = 0
        self.file_bytes = 0  # of the child's output, before scrubbing: what the cap counts
        self.dropped = False

    def take(self, chunk: bytes) -> None:
        self.seen += len(chunk)
        room = self._max_capture - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        if self._file is None:
            self.dropped = self.dropped or len(chunk) > room
            return
        room = self._max_file - self.file_bytes
        part = chunk if len(chunk) <= room else chunk[: max(room, 0)]
        self.dropped = self.dropped or len(part) < len(chunk)
        if part:
            self.file_bytes += len(part)
            if self._scrubber is not None:
                part = self._scrubber.feed(part)
            # Written here, not in a worker thread: appending a chunk to the page cache takes
            # microseconds, less than the hand-off to a thread and back.
            _append(self._file, part)

    def finish(self) -> None:
        """Write what the scrubber held back at the end of the stream."""
        if self._scrubber is not None and self._file is not None:
            _append(self._file, self._scrubber.finish())


class _LineSplitter:
    """Private: cuts a byte stream into lines without their newline, overlong lines into pieces."""

    __slots__ = ("_buffer", "_limit")

    def __init__(self, limit: int) -> None:
        self._buffer = bytearray()
        self._limit = limit

    def feed(self, chunk: bytes) -> list[bytes]:
        buffer, limit = self._buffer, self._limit
        buffer += chunk
        lines: list[bytes] = []
        start = 0
        while True:
            # Searching one byte past the limit lets a line of exactly `limit` bytes come out whole.
            end = buffer.find(b"\n", start, start + limit + 1)
            if end != -1:
                lines.append(bytes(buffer[start:end]))
                start = end + 1
            elif len(buffer) - start > limit:
                lines.append(bytes(buffer[start : start + limit]))
                start += limit
            else:
                break
        del buffer[:start]
        return lines

    def finish(self) -> bytes | None:
        return bytes(self._buffer) if self._buffer else None


def _start(
    command: tuple[str, ...],
    cwd: Path,
    env: Mapping[str, str],
    stdin_data: bytes | None,
    stdout: Sink,
    stderr: Sink,
) -> Child:
    # Started right here, on the loop: a hand-off to a worker thread costs more than the start itself
    # (a millisecond or so) once dozens of trials want threads at once.
    try:
        child = Child.start(
            command, cwd=cwd, env=dict(env), stdin_data=stdin_data, stdout=stdout, stderr=stderr
        )
    except OSError as exc:
        raise _start_error(command[0], Path(cwd), exc) from exc
    LIFELINE.guard(child.pid)  # its own session: its pid is its group, which dies if skillgym does
    return child


def check_startable(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> None:
    """Raise the ``ProcessStartError`` that ``run_process(argv, cwd=cwd, env=env)`` would raise at start.

    For a program started through a wrapper (a sandbox's ``nsenter``), whose own start always succeeds:
    a missing program or working directory must still read as one, not as the wrapper's exit status.
    """
    program = argv[0]
    if not cwd.is_dir():
        raise _start_error(program, cwd, OSError(errno.ENOENT, "no such directory"))
    search = env.get("PATH", os.defpath)
    if "/" in program:
        path = program if os.path.isabs(program) else os.path.join(cwd, program)
        runnable = os.path.isfile(path) and os.access(path, os.X_OK)
        exists = os.path.lexists(path)
    else:
        runnable = shutil.which(program, path=search) is not None
        exists = runnable or shutil.which(program, mode=os.F_OK, path=search) is not None
    if not runnable:
        code = errno.EACCES if exists else errno.ENOENT
        raise _start_error(program, cwd, OSError(code, os.strerror(code)))


def _start_error(executable: str, cwd: Path, exc: OSError) -> ProcessStartError:
    if not cwd.is_dir():
        problem = f"its working directory {cwd} does not exist or is not a directory; create it first"
    elif exc.errno == errno.ENOENT:
        problem = (
            "the program was not found; install it, put it on the PATH given in env, or pass an absolute path"
        )
    elif exc.errno == errno.EACCES:
        problem = "the program is not executable (or is a directory); check its path and permissions"
    else:
        problem = f"{exc.strerror or exc}"
    message = f"cannot start {executable!r} in {cwd.absolute()}: {problem}"
    return ProcessStartError(message, executable=executable, cwd=cwd, code=exc.errno)


def _append(file: BinaryIO, data: bytes) -> None:
    view = memoryview(data)
    while view:  # an unbuffered write may take less than everything
        written = file.write(view)
        if not written:
            raise OSError(errno.EIO, f"could not append to {getattr(file, 'name', 'a log file')}")
        view = view[written:]


async def _terminate_group(pgid: int, grace_s: float) -> bool:
    # SIGTERM has been sent. A stopped member would hold SIGTERM pending forever; SIGCONT lets it act on it.
    _signal_group(pgid, signal.SIGCONT)
    if await _settle(lambda: process_group_alive(pgid), grace_s):
        return True
    _signal_group(pgid, signal.SIGKILL)
    return await _settle(lambda: process_group_alive(pgid), _AFTER_KILL_S)


async def _terminate_pids(pids: list[int], grace_s: float) -> list[int]:
    targets = [pid for pid in pids if _signal_pid(pid, signal.SIGTERM)]
    for pid in targets:
        _signal_pid(pid, signal.SIGCONT)

    def running() -> list[int]:
        return [pid for pid in targets if _pid_alive(pid)]

    if await _settle(lambda: bool(running()), grace_s):
        return []
    for pid in running():
        _signal_pid(pid, signal.SIGKILL)
    await _settle(lambda: bool(running()), _AFTER_KILL_S)
    return running()


async def _settle(running: Callable[[], bool], timeout_s: float) -> bool:
    """Poll until ``running()`` is false; True if that happened within ``timeout_s``."""
    with anyio.move_on_after(timeout_s):
        while running():
            await anyio.sleep(_POLL_S)
    return not running()


def _signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to the group; False when the group no longer exists."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, but we may not signal it; callers see it still alive
    return True


def _signal_pid(pid: int, signum: int) -> bool:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid_alive(pid: int) -> bool:
    if not _signal_pid(pid, 0):
        return False
    if not _has_proc():
        return True
    stat = _read_stat(pid)
    return stat is not None and stat[0] not in "ZX"


@functools.cache
def _has_proc() -> bool:
    return os.path.exists("/proc/self/stat")


def _proc_pids() -> list[int]:
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    return sorted(int(name) for name in names if name.isdigit())


def _read_proc(path: str) -> bytes | None:
    """A whole /proc file, or None if it is gone or not ours to read.

    Three system calls, where open() takes six or seven (stat, isatty, seek): scans read hundreds.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        parts = [os.read(fd, _PROC_READ)]
        while len(parts[-1]) == _PROC_READ:  # an environment can be larger than one read
            parts.append(os.read(fd, _PROC_READ))
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(parts)


def _read_stat(pid: int) -> tuple[str, int] | None:
    """The state letter and process group of ``pid`` from /proc, or None if it is gone."""
    stat = _read_proc(f"/proc/{pid}/stat")
    if stat is None:
        return None
    # The command name in parentheses may itself contain spaces and ')', so split after the last one.
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return fields[0].decode(), int(fields[2])
    except (IndexError, ValueError):
        return None
