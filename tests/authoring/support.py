"""Helpers for the authoring tests: where a marked line of the calling test is."""

from __future__ import annotations

import inspect
import os
from pathlib import Path


def shown(path: str) -> str:
    """How an origin shows ``path``: relative to the working directory when under it, else absolute."""
    full = Path(os.path.abspath(path))
    cwd = Path(os.getcwd())
    return full.relative_to(cwd).as_posix() if full.is_relative_to(cwd) else full.as_posix()


def at(marker: str) -> str:
    """``path:line`` of the line in the calling function that ends with the comment ``# @marker``."""
    frame = inspect.stack()[1]
    lines, first = inspect.getsourcelines(frame.frame.f_code)
    hits = [first + n for n, line in enumerate(lines) if line.rstrip().endswith(f"# @{marker}")]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times in {frame.function}"
    return f"{shown(frame.filename)}:{hits[0]}"
