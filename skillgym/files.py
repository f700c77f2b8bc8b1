"""Writing files so that a crash never leaves one half-written: temp file in the same dir, then rename."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` atomically (readers see the old or the new file, never a mix).

    No fsync: the guarantee is against a crashed or killed process, which is what loses results in
    practice; paying a disk flush per trial file would dominate large runs.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    # The folder must exist: creating it here would quietly rebuild a run directory someone removed.
    target = os.fspath(path)
    folder, sep, name = target.rpartition(os.sep)  # not os.path.split and join: every trial writes here
    # Named by process and thread: no two live writers share a temp file, so there is no need for
    # mkstemp's random names and retries (a leftover from a crashed writer is simply truncated).
    tmp = f"{folder}{sep}.{name}.{os.getpid()}-{threading.get_ident()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    try:
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
