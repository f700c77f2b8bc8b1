"""A child process started and then driven from the event loop by callbacks.

``Child.spawn`` blocks its caller until the child has exec'd (about a millisecond). That is cheaper on the
loop than a hand-off to a worker thread: at dozens of agents at once the thread pool's queue and the
interpreter lock made each hand-off wait several milliseconds, on the path of the trial that was starting.
An ``Exchange`` then feeds stdin, reads stdout and stderr and notices the exit through readiness
callbacks on the loop (a pidfd for the exit on Linux, polling elsewhere): no task, thread or asyncio
child watcher per child. Like the rest of skillgym's runner this needs anyio's asyncio backend.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

import anyio

_CHUNK: Final = 64 * 1024
# Without pidfds, the exit is polled: quickly at first (most agents here are short), then less often.
_POLL_FIRST_S: Final = 0.002
_POLL_MAX_S: Final = 0.05

Sink = Callable[[bytes], None]


class Child:
    """A started child in its own session; owns its pipes and its pidfd until ``close``."""

    __slots__ = ("pid", "pidfd", "popen", "stderr", "stdin", "stdout")

    def __init__(self, popen: subprocess.Popen[bytes], pidfd: int | None) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.pidfd = pidfd
        self.stdin = _fd_of(popen.stdin)
        self.stdout = _fd_of(popen.stdout)
        self.stderr = _fd_of(popen.stderr)

    @classmethod
    def spawn(cls, argv: tuple[str, ...], *, cwd: Path, env: Mapping[str, str], with_stdin: bool) -> Child:
        """Start ``argv`` in its own session.

        Raises OSError as Popen does (missing program, working directory, ...).
        """
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if with_stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        for stream in (popen.stdin, popen.stdout, popen.stderr):
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
        return cls(popen, _pidfd(popen.pid))

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    async def wait(self) -> int:
        """Wait for the child to exit and reap it; its exit code (negative: the signal that ended it)."""
        if self.popen.returncode is not None:
            return self.popen.returncode
        if self.pidfd is not None:
            await anyio.wait_readable(self.pidfd)
            return self.popen.wait()  # exited: reaps at once
        delay = _POLL_FIRST_S
        while (code := self.popen.poll()) is None:
            await anyio.sleep(delay)
            delay = min(delay * 2, _POLL_MAX_S)
        return code

    def close_stdin(self) -> None:
        """Close the child's stdin, so it reads end of file."""
        if self.popen.stdin is not None:
            with contextlib.suppress(OSError):
                self.popen.stdin.close()
        self.stdin = None

    def close(self) -> None:
        """Close the pipes and the pidfd, and reap the child if it has exited (never blocks)."""
        self.close_stdin()
        for stream in (self.popen.stdout, self.popen.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.stdout = self.stderr = None
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        self.popen.poll()


class Exchange:
    """Everything that passes between the loop and a running child, as readiness callbacks.

    stdin gets ``stdin_data`` and is then closed (a child that stops reading early is not an error);
    each chunk of stdout and stderr goes to its sink as it arrives. The first exception a sink raises
    stops the exchange and is raised by the next ``until_exited`` or ``until_drained``. ``close``
    unregisters everything (the child's descriptors stay the child's to close).
    """

    def __init__(self, child: Child, stdin_data: bytes | None, stdout: Sink, stderr: Sink) -> None:
        self._loop = asyncio.get_running_loop()
        self._child = child
        self._failure: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._readers: list[int] = []
        self._writing: memoryview | None = None
        self._writer = False  # a writer callback is registered for stdin
        self._poll_delay = _POLL_FIRST_S
        self._poll: asyncio.TimerHandle | None = None
        self.exited = False
        for fd, sink in ((child.stdout, stdout), (child.stderr, stderr)):
            if fd is not None:
                self._loop.add_reader(fd, self._read, fd, sink)
                self._readers.append(fd)
        self._open_outputs = len(self._readers)
        if child.stdin is not None:
            self._writing = memoryview(stdin_data or b"")
            self._write()  # a prompt usually fits the pipe at once: no writer callback at all
        if child.pidfd is not None:
            self._loop.add_reader(child.pidfd, self._noticed_exit)
            self._readers.append(child.pidfd)
        else:
            self._poll = self._loop.call_later(self._poll_delay, self._check_exit)

    async def until_exited(self) -> None:
        await self._until(lambda: self.exited)

    @property
    def drained(self) -> bool:
        """stdout and stderr reached end of file (which needs everything holding them gone)."""
        return self._open_outputs == 0

    async def until_drained(self) -> None:
        await self._until(lambda: self.drained)

    def close(self) -> None:
        for fd in self._readers:
            self._loop.remove_reader(fd)
        self._readers.clear()
        if self._writer and self._child.stdin is not None:
            self._loop.remove_writer(self._child.stdin)
        self._writer = False
        self._writing = None
        if self._poll is not None:
            self._poll.cancel()
            self._poll = None

    async def _until(self, done: Callable[[], bool]) -> None:
        while not done() and self._failure is None:
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if self._failure is not None:
            raise self._failure

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
            self._readers.remove(fd)
            self._open_outputs -= 1
            self._wake()
            return
        try:
            sink(chunk)
        except Exception as exc:
            self._fail(exc)

    def _write(self) -> None:
        fd, view = self._child.stdin, self._writing
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
        self._child.close_stdin()

    def _noticed_exit(self) -> None:
        assert self._child.pidfd is not None
        self._loop.remove_reader(self._child.pidfd)
        self._readers.remove(self._child.pidfd)
        # Reaped now: as a zombie it would still count as a member of its group for the group kill.
        self._child.popen.poll()
        self._exited()

    def _check_exit(self) -> None:
        if self._child.popen.poll() is None:
            self._poll_delay = min(self._poll_delay * 2, _POLL_MAX_S)
            self._poll = self._loop.call_later(self._poll_delay, self._check_exit)
            return
        self._poll = None
        self._exited()

    def _exited(self) -> None:
        self.exited = True
        self._wake()


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
