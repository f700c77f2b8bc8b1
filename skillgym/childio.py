"""A child process's pipes and exit, driven by readiness callbacks on the asyncio event loop.

This is the one module in skillgym that reaches past anyio's public API: it registers the child's pipes
and a pidfd (Linux's handle on a process's exit) with the running asyncio loop's ``add_reader`` and
``add_writer``, and wakes its waiters through loop futures. Everything else runs children through
``skillgym.process.run_process``, which uses only ``Child`` below and anyio's public API.

Why not ``anyio.open_process``: asyncio's subprocess transport behind it, with a task per pipe, costs
the event loop about 1.7 times the CPU time per child, and before Python 3.12 it waits for each child in
a thread of its own. At dozens of agents at once the loop starts them one after another, so that time
delays the last agent of each wave, and the run with it (figures in BENCHMARKS.md, "Process and bus code
confined"). Here a child costs a ``Popen`` (which returns once the child has exec'd, about a
millisecond), two or three readers and no task, thread or child watcher. The loop must be asyncio's
(anyio's asyncio backend), as it is for the rest of skillgym's runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

_CHUNK: Final = 64 * 1024
# Without pidfds, the exit is polled: quickly at first (most agents here are short), then less often.
_POLL_FIRST_S: Final = 0.002
_POLL_MAX_S: Final = 0.05

Sink = Callable[[bytes], None]


class Child:
    """A started child in its own session, its stdin fed and its stdout and stderr read by the loop.

    stdin gets ``stdin_data`` and is then closed (a child that stops reading early is not an error);
    without ``stdin_data`` it reads end of file at once. Each chunk of stdout and stderr goes to its sink,
    on the event loop, as it arrives. The first exception a sink raises stops all input and output and
    is raised by the next ``exited`` or ``output_ended``. The exit is reaped as soon as it is noticed:
    as a zombie the child would still count as a member of its process group.
    """

    __slots__ = (
        "_failure",
        "_loop",
        "_open_outputs",
        "_pidfd",
        "_poll",
        "_poll_delay",
        "_popen",
        "_readers",
        "_stdin",
        "_waiter",
        "_writer",
        "_writing",
        "pid",
    )

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        popen: subprocess.Popen[bytes],
        stdin_data: bytes | None,
        stdout: Sink,
        stderr: Sink,
    ) -> None:
        self._loop = loop
        self._popen = popen
        self.pid = popen.pid
        self._pidfd = _pidfd(popen.pid)
        self._failure: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._readers: dict[int, Sink] = {}
        self._stdin = _fd_of(popen.stdin)
        self._writing: memoryview | None = None
        self._writer = False  # a writer callback is registered for stdin
        self._poll_delay = _POLL_FIRST_S
        self._poll: asyncio.TimerHandle | None = None
        for stream, sink in ((popen.stdout, stdout), (popen.stderr, stderr)):
            fd = _fd_of(stream)
            if fd is not None:
                self._loop.add_reader(fd, self._read, fd, sink)
                self._readers[fd] = sink
        self._open_outputs = len(self._readers)
        if self._stdin is not None:
            self._writing = memoryview(stdin_data or b"")
            self._write()  # a prompt usually fits the pipe at once: no writer callback at all
        if self._pidfd is not None:
            self._loop.add_reader(self._pidfd, self._noticed_exit)
        else:
            self._poll = self._loop.call_later(self._poll_delay, self._check_exit)

    @classmethod
    def start(
        cls,
        argv: tuple[str, ...],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin_data: bytes | None,
        stdout: Sink,
        stderr: Sink,
    ) -> Child:
        """Start ``argv`` in its own session (so its own process group) and begin the exchange.

        Blocks until the child has exec'd. Raises OSError as ``Popen`` does (missing program, working
        directory, ...), and RuntimeError outside an asyncio event loop.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError("skillgym runs child processes on anyio's asyncio backend only") from None
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        for stream in (popen.stdin, popen.stdout, popen.stderr):
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
        return cls(loop, popen, stdin_data, stdout, stderr)

    @property
    def returncode(self) -> int | None:
        """The exit code once the child has exited and been reaped (negative: the signal that ended it)."""
        return self._popen.returncode

    @property
    def drained(self) -> bool:
        """stdout and stderr reached end of file (which needs everything holding them gone)."""
        return self._open_outputs == 0

    async def exited(self) -> int:
        """Wait for the child to exit, reaped; its exit code (negative: the signal that ended it)."""
        await self._until(lambda: self._popen.returncode is not None)
        code = self._popen.returncode
        assert code is not None
        return code

    async def output_ended(self) -> None:
        """Wait until stdout and stderr both reach end of file."""
        await self._until(lambda: self.drained)

    def close(self) -> None:
        """Stop feeding stdin and reading output, and close those pipes: no sink is called after this.

        The exit is still watched, and ``exited`` still works; the pidfd goes once the exit is noticed.
        """
        for fd in self._readers:
            self._loop.remove_reader(fd)
        self._readers.clear()
        if self._writer and self._stdin is not None:
            self._loop.remove_writer(self._stdin)
        self._writer = False
        self._writing = None
        popen = self._popen
        for stream in (popen.stdin, popen.stdout, popen.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._stdin = None
        if popen.returncode is None and popen.poll() is not None:
            self._stop_watching_exit()

    async def _until(self, done: Callable[[], bool]) -> None:
        while not done() and self._failure is None:
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _fail(self, exc: BaseException) -> None:
        if self._failure is None:
            self._failure = exc
        self.close()
        self._wake()

    def _read(self, fd: int, sink: Sink) -> None:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""  # an unreadable pipe ends like a closed one
        if not chunk:
            self._loop.remove_reader(fd)
            del self._readers[fd]
            self._open_outputs -= 1
            self._wake()
            return
        try:
            sink(chunk)
        except Exception as exc:
            self._fail(exc)

    def _write(self) -> None:
        fd, view = self._stdin, self._writing
        assert fd is not None and view is not None
        try:
            while view:
                view = view[os.write(fd, view) :]
        except BlockingIOError:
            pass  # the pipe is full: go on when it has room
        except OSError:  # the child closed stdin or exited: that is how it ended, not an error here
            view = view[:0]
        if view:
            self._writing = view
            if not self._writer:
                self._loop.add_writer(fd, self._write)
                self._writer = True
            return
        if self._writer:
            self._loop.remove_writer(fd)
            self._writer = False
        self._writing = None
        if self._popen.stdin is not None:
            with contextlib.suppress(OSError):
                self._popen.stdin.close()
        self._stdin = None

    def _noticed_exit(self) -> None:
        self._popen.poll()  # exited: reaps at once
        self._stop_watching_exit()
        self._wake()

    def _check_exit(self) -> None:
        if self._popen.poll() is None:
            self._poll_delay = min(self._poll_delay * 2, _POLL_MAX_S)
            self._poll = self._loop.call_later(self._poll_delay, self._check_exit)
            return
        self._poll = None
        self._stop_watching_exit()
        self._wake()

    def _stop_watching_exit(self) -> None:
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        if self._poll is not None:
            self._poll.cancel()
            self._poll = None


def _pidfd(pid: int) -> int | None:
    # A child that already exited is a zombie until reaped, so its pidfd still opens (and is readable).
    if not hasattr(os, "pidfd_open"):
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:  # Linux < 5.3, or a sandbox that forbids it: poll instead
        return None


def _fd_of(stream: object) -> int | None:
    return stream.fileno() if stream is not None and hasattr(stream, "fileno") else None
