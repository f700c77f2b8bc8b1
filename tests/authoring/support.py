"""Helpers for the authoring tests: where a marked line is, and minimal valid cases to extend."""

from __future__ import annotations

import inspect
import os
from functools import cache
from pathlib import Path


def shown(path: str) -> str:
    """How an origin shows ``path``: relative to the working directory when under it, else absolute."""
    full = Path(os.path.abspath(path))
    cwd = Path(os.getcwd())
    return full.relative_to(cwd).as_posix() if full.is_relative_to(cwd) else full.as_posix()


@cache
def _lines(path: str) -> tuple[str, ...]:
    return tuple(Path(path).read_text(encoding="utf-8").splitlines())


def at(marker: str) -> str:
    """``path:line`` of the line in the calling test file that carries the comment ``# @marker``."""
    caller = inspect.stack()[1].filename
    hits = [n for n, line in enumerate(_lines(caller), start=1) if line.rstrip().endswith(f"# @{marker}")]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times in {caller}"
    return f"{shown(caller)}:{hits[0]}"
