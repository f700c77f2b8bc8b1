"""Writing files so that a crash never leaves one half-written: temp file in the same dir, then rename."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def _file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_FILE_MODE = _file_mode()


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` atomically (readers see the old or the new file, never a mix).

    No fsync: the guarantee is against a crashed or killed process, which is what loses results in
    practice; paying a disk flush per trial file would dominate large runs.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    # The folder must exist: creating it here would quietly rebuild a run directory someone removed.
    folder, name = os.path.split(os.fspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
    try:
        os.fchmod(fd, _FILE_MODE)  # mkstemp makes 0600; results are meant to be read like any file
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
