"""``<output>/latest``: the newest run folder, as a symlink (or a one-line text file where there are none)."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Final

from .files import write_atomic

LATEST: Final = "latest"


def point_latest(run_dir: Path) -> str | None:
    """Make ``<output>/latest`` point at ``run_dir`` (its sibling); None, or why it could not.

    The link is relative (the run's folder name), so moving the output folder keeps it right, and it is
    replaced atomically: a reader sees the old run or the new one. Where symlinks cannot be made (some
    Windows accounts, some network or FAT filesystems) ``latest`` is a text file holding the folder name,
    which ``latest_run_dir`` reads alike. A ``latest`` that is a real folder is the user's and is left alone.
    """
    link = run_dir.parent / LATEST
    if link.is_dir() and not link.is_symlink():
        return f"{link} is a folder, not skillgym's link to the newest run; it was left as it is"
    tmp = run_dir.parent / f".{LATEST}.{os.getpid()}-{threading.get_ident()}.tmp"
    try:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        try:
            tmp.symlink_to(run_dir.name, target_is_directory=True)
        except (OSError, NotImplementedError):
            write_atomic(link, run_dir.name + "\n")
            return None
        os.replace(tmp, link)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return f"cannot point {link} at {run_dir.name}: {exc.strerror or exc}"
    return None


def latest_run_dir(output: Path) -> Path | None:
    """The run folder ``<output>/latest`` names (symlink or text file), when it is still there."""
    link = output / LATEST
    if link.is_symlink():
        target = link.resolve()
    elif link.is_file():
        try:
            name = link.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        if not name or "/" in name or os.sep in name or name in (".", ".."):
            return None
        target = output / name
    else:
        return None
    return target if target.is_dir() else None
