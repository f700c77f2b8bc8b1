"""Recorders: where a user's call came from, and the open-then-closed life of every builder."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from types import CodeType, FrameType, TracebackType
from typing import Self

from ..errors import RecorderClosedError
from ..registry import load_directory

_PACKAGE_DIR = Path(__file__).resolve().parent.parent
# Whether each code file lies inside the package; a plain dict, since every recorded call consults it.
_inside: dict[str, bool] = {}


def _inside_package(filename: str) -> bool:
    known = _inside.get(filename)
    if known is None:
        known = not filename.startswith("<") and Path(filename).resolve().is_relative_to(_PACKAGE_DIR)
        _inside[filename] = known
    return known


def display_path(filename: str) -> str:
    """``filename`` relative to the working directory when it lies under it, else absolute."""
    if filename.startswith("<"):
        return filename
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was removed: absolute paths still say where
        return Path(os.path.abspath(filename)).as_posix()
    return _display(filename, cwd)


@lru_cache(maxsize=1024)
def _display(filename: str, cwd: str) -> str:
    # Cached: a suite records thousands of origins from a handful of files.
    if filename.startswith("<"):
        return filename
    path = Path(os.path.abspath(filename))
    if path.is_relative_to(cwd):
        return path.relative_to(cwd).as_posix()
    return path.as_posix()


# Origins by call site: (code object id, instruction offset) -> (code, working directory, "path:line").
# A suite records its cases from a few call sites (often in a loop or a helper), and a site's origin never
# changes while the working directory stays the same. It also spares the line lookup: Python finds a
# frame's line by scanning its code's line table from the start, so in a long suite module every lookup
# costs more than the last. The code object is kept to guard the id.
_sites: dict[tuple[int, int], tuple[CodeType, str, str]] = {}
_MAX_SITES = 8192


def caller_origin() -> str:
    """``path:line`` of the innermost frame outside the skillgym package: the user's call."""
    return _origin(sys._getframe(1))


def _origin(frame: FrameType) -> str:
    """``path:line`` of ``frame``, or of the first frame above it outside the package."""
    code = frame.f_code
    while True:
        filename = code.co_filename
        inside = _inside.get(filename)
        if inside is None:
            inside = _inside_package(filename)
        if not inside or frame.f_back is None:
            break
        frame = frame.f_back
        code = frame.f_code
    cwd = load_directory()
    if cwd is None:  # outside use_registry: read it per call
        try:
            cwd = os.getcwd()
        except OSError:  # the working directory was removed: absolute paths still say where
            return f"{display_path(filename)}:{frame.f_lineno}"
    key = (id(code), frame.f_lasti)
    known = _sites.get(key)
    if known is not None and known[0] is code and known[1] == cwd:
        return known[2]
    origin = f"{_display(filename, cwd)}:{frame.f_lineno}"
    if not inside:  # a user's frame; a frame inside the package leads to different users' lines
        if len(_sites) >= _MAX_SITES:
            _sites.clear()
        _sites[key] = (code, cwd, origin)
    return origin


class Recorder:
    """Base of every builder: knows its case and where it was opened, and refuses use once closed."""

    def __init__(self, *, case_id: str, opened_at: str) -> None:
        self._case_id = case_id
        self._opened_at = opened_at
        self._closed = False
        self._discarded = False

    @property
    def case_id(self) -> str:
        """The id of the case this builder records into."""
        return self._case_id

    @property
    def closed(self) -> bool:
        """True once the builder's block has ended; every further call raises RecorderClosedError."""
        return self._closed

    def _label(self) -> str:
        return type(self).__name__

    def _use(self, method: str) -> str:
        """Check the recorder is still open and return the user's ``path:line`` for this call."""
        try:
            frame = sys._getframe(2)  # past this method and the builder's public method that called it
        except ValueError:  # called from a shallower stack
            frame = sys._getframe(1)
        # _origin's first lookup, written out here since every recorded call makes it.
        code = frame.f_code
        known = _sites.get((id(code), frame.f_lasti))
        if known is not None and known[0] is code and known[1] == load_directory():
            at = known[2]
        else:
            at = _origin(frame)
        if self._closed:
            raise RecorderClosedError(
                f"{at}: {self._label()} of case {self._case_id!r} is closed: .{method}() was called "
                f"after its block ended (the block was opened at {self._opened_at}); move the call inside "
                "the `with` block (or inside the decorated function)"
            )
        return at

    def _close(self, *, discard: bool = False) -> None:
        self._closed = True
        self._discarded = self._discarded or discard


class Block(Recorder):
    """A nested recorder used as ``with c.<name>() as x:``; a body that raises discards what it recorded."""

    def __enter__(self) -> Self:
        if self._closed:
            at = caller_origin()
            raise RecorderClosedError(
                f"{at}: {self._label()} of case {self._case_id!r} is closed (its block was opened at "
                f"{self._opened_at}); a block is used once: call the case builder's method again for a "
                "new one"
            )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._close(discard=exc_type is not None)
