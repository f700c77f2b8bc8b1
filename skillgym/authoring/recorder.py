"""Recorders: where a user's call came from, and the open-then-closed life of every builder."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from types import TracebackType
from typing import Generic, Self, TypeVar

from ..errors import DefinitionError, RecorderClosedError

_T = TypeVar("_T")

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=512)
def _inside_package(filename: str) -> bool:
    if filename.startswith("<"):
        return False
    return Path(filename).resolve().is_relative_to(_PACKAGE_DIR)


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
    path = Path(os.path.abspath(filename))
    if path.is_relative_to(cwd):
        return path.relative_to(cwd).as_posix()
    return path.as_posix()


def caller_origin() -> str:
    """``path:line`` of the innermost frame outside the skillgym package: the user's call."""
    frame = sys._getframe(1)
    while _inside_package(frame.f_code.co_filename):
        if frame.f_back is None:
            break
        frame = frame.f_back
    return f"{display_path(frame.f_code.co_filename)}:{frame.f_lineno}"


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
        at = caller_origin()
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
