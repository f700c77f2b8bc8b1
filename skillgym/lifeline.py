"""The lifeline: a watchdog process that kills every child process group when skillgym dies, however.

A sandboxed trial ends with skillgym through its PID namespace; an unsandboxed one (``--sandbox none``)
has no such tie, and its agent would run on after a ``kill -9`` of skillgym. So the first child started
also starts one small watchdog per skillgym process. It reads a pipe that only skillgym holds open:
each line names a process group to guard (``123``) or one that has ended (``-123``). At end of file,
which the kernel delivers whenever skillgym's process ends, it sends SIGKILL to every group it still
guards and exits. Telling it costs one short pipe write per start and per end, on the event loop,
and nothing in the child (no ``preexec_fn``, so ``Popen`` keeps its fast spawn path).

Groups are forgotten once ``run_process`` has killed them: Linux does not reuse a number while a
process group holds it, so a guarded number never names a stranger's group. A process that leaves its
group (``setsid``) leaves this guard too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import Final

# The watchdog's whole program: no imports beyond os and signal, so it starts in a few milliseconds.
_WATCHDOG: Final = """
import os, signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
groups, pending = set(), b""
while True:
    try:
        chunk = os.read(0, 65536)
    except InterruptedError:
        continue
    if not chunk:
        break
    *lines, pending = (pending + chunk).split(b"\\n")
    for line in lines:
        if line.startswith(b"-"):
            groups.discard(int(line[1:]))
        elif line:
            groups.add(int(line))
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""


class _Lifeline:
    """The pipe to this process's watchdog, started on first use (and again after a fork)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._pid = -1  # the process that started the watchdog: a forked child needs its own
        self._broken = False

    def guard(self, pgid: int) -> None:
        """Kill process group ``pgid`` if this process dies before ``release(pgid)``."""
        self._send(b"%d\n" % pgid)

    def release(self, pgid: int) -> None:
        """Stop guarding ``pgid``: it has been killed and waited for."""
        self._send(b"-%d\n" % pgid)

    def _send(self, line: bytes) -> None:
        with self._lock:
            if self._pid != os.getpid():
                self._start()
            if self._fd is None:
                return
            try:
                os.write(self._fd, line)  # far below PIPE_BUF: one atomic write, never a partial one
            except OSError:  # the watchdog was killed from outside: the guard is gone, the run goes on
                os.close(self._fd)
                self._fd = None

    def _start(self) -> None:
        self._pid = os.getpid()
        self._fd = None
        try:
            watchdog = subprocess.Popen(
                [sys.executable, "-S", "-E", "-c", _WATCHDOG],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C or a signal to skillgym's group must not end it first
            )
        except OSError:
            return  # no watchdog, no guard: the trials still run and their own cleanup still holds
        assert watchdog.stdin is not None
        # The write end is skillgym's alone (non-inheritable, as every pipe Python makes), so its end of
        # file comes exactly when skillgym's process ends. The Popen object is dropped without a wait:
        # the watchdog outlives skillgym by design, and reaps itself through init.
        self._fd = os.dup(watchdog.stdin.fileno())
        watchdog.stdin.close()
        watchdog.returncode = 0  # never waited for: keep Popen's destructor from warning about it


LIFELINE: Final = _Lifeline()
