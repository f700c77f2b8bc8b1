"""Recorders: where a user's call came from, and the open-then-closed life of every builder."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from types import CodeType, FrameType, TracebackType
from typing import Generic, Self, TypeVar

from ..errors import DefinitionError, RecorderClosedError
from ..registry import load_directory

_T = TypeVar("_T")

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


# Line numbers by (code object id, instruction offset). Python finds a frame's line by scanning its code's
# line table from the start, so in a long suite module (cases defined at top level) every lookup costs
# more than the last; a call site's line never changes. The code object is kept to guard the id.
_lines: dict[tuple[int, int], tuple[CodeType, int]] = {}
_MAX_LINES = 8192


def _line(frame: FrameType) -> int:
    code = frame.f_code
    key = (id(code), frame.f_lasti)
    known = _lines.get(key)
    if known is not None and known[0] is code:
        return known[1]
    if len(_lines) >= _MAX_LINES:
        _lines.clear()
    line = frame.f_lineno
    _lines[key] = (code, line)
    return line


def caller_origin(skip: int = 0) -> str:
    """``path:line`` of the innermost frame outside the skillgym package: the user's call.

    ``skip`` frames above the caller are known to lie inside the package (``_use`` and the public
    method that called it), so they are not looked at.
    """
    try:
        frame = sys._getframe(1 + skip)
    except ValueError:  # a shallower stack than the caller promised
        frame = sys._getframe(1)
    while True:
        filename = frame.f_code.co_filename
        inside = _inside.get(filename)
        if inside is None:
            inside = _inside_package(filename)
        if not inside or frame.f_back is None:
            break
        frame = frame.f_back
    cwd = load_directory()
    shown = display_path(filename) if cwd is None else _display(filename, cwd)
    return f"{shown}:{_line(frame)}"


class Slot(Generic[_T]):
    """A case field set by one call at most; it remembers where that call was."""

    __slots__ = ("call", "origin", "value")

    def __init__(self, call: str, default: _T) -> None:
        self.call = call
        self.value = default
        self.origin: str | None = None

    @property
    def is_set(self) -> bool:
        return self.origin is not None

    def set(self, value: _T, *, origin: str, case_id: str) -> None:
        if self.origin is not None:
            raise DefinitionError(
                f"{self.call} was already called at {self.origin}; a case takes it once: "
                "remove one of the calls",
                case_id=case_id,
                origin=origin,
            )
        self.value = value
        self.origin = origin


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
        at = caller_origin(2)
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
        at = caller_origin()
        if self._closed:
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
