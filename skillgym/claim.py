"""One process per run directory: a resume of a run that is still going is refused, not interleaved."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from .errors import UsageError

_HELD: dict[str, int] = {}  # run dirs this process holds, and how many claims are open on each


@contextlib.contextmanager
def claim_run_dir(run_dir: Path) -> Iterator[None]:
    """Hold ``run_dir`` for this process while the block runs; a UsageError if another process holds it.

    The claim is an advisory lock on the directory itself, so it ends with the process however that
    ends (a killed run can be resumed at once). Claims nest within one process: ``--resume`` holds the
    run before it reads and mends the log, and the run it starts claims it again.
    """
    key = str(run_dir.resolve())
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return
    try:
        fd = os.open(key, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise UsageError(
            f"cannot open the run directory {key}: {exc.strerror or exc}; check the path (a run's folder "
            "under runs/)"
        ) from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(
                f"the run {key} is still going in another skillgym process; wait for it to end (or stop "
                "it with Ctrl-C), then try again"
            ) from None
        except OSError:
            pass  # a filesystem without locks: the run goes on unguarded, as it did before claims
        _HELD[key] = 1
        try:
            yield
        finally:
            del _HELD[key]
    finally:
        os.close(fd)
