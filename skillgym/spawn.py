"""A child process started off the event loop and then driven from it.

The event loop runs every trial, so it must not stall while a child starts: ``fork_exec`` blocks the
calling thread until the child has exec'd (about 2 ms here, more while the child closes inherited
descriptors), which at dozens of agents at once delays every other trial. ``Child.spawn`` is called
from a worker thread instead; the pipes are then read and written without blocking
on the loop, and the exit is awaited on a pidfd (Linux) or by polling (elsewhere). No asyncio child
watcher is involved, so no thread per child either.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Final

import anyio
import anyio.lowlevel

_CHUNK: Final = 64 * 1024
# Without pidfds, the exit is polled: quickly at first (most agents here are short), then less often.
_POLL_FIRST_S: Final = 0.002
_POLL_MAX_S: Final = 0.05


class Child:
    """A started child in its own session; owns its pipes and its pidfd until ``close``."""

    __slots__ = ("_pidfd", "pid", "popen", "stderr", "stdin", "stdout")

    def __init__(self, popen: subprocess.Popen[bytes], pidfd: int | None) -> None:
        self.popen = popen
        self.pid = popen.pid
        self._pidfd = pidfd
        self.stdin = _fd_of(popen.stdin)
        self.stdout = _fd_of(popen.stdout)
        self.stderr = _fd_of(popen.stderr)

    @classmethod
    def spawn(cls, argv: tuple[str, ...], *, cwd: Path, env: Mapping[str, str], with_stdin: bool) -> Child:
        """Start ``argv`` in its own session; call it from a worker thread, never from the event loop.

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
        if self._pidfd is not None:
            await anyio.wait_readable(self._pidfd)
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
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.stdin = self.stdout = self.stderr = None
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        self.popen.poll()


async def read_chunks(fd: int) -> AsyncIterator[bytes]:
    """What arrives on non-blocking pipe ``fd``, chunk by chunk, until end of file."""
    while True:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            await anyio.wait_readable(fd)
            continue
        if not chunk:
            return
        yield chunk
        # A child that writes without pause must not keep the loop from everything else.
        await anyio.lowlevel.checkpoint()


async def write_all(fd: int, data: bytes) -> None:
    """Write ``data`` to non-blocking pipe ``fd``; a reader that went away is not an error (see feed)."""
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            await anyio.wait_writable(fd)
            continue
        view = view[written:]


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
