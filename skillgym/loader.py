"""Suite loading: import each case file in sorted order as a transaction, then validate the whole."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from .errors import CollectionError, DefinitionError, UsageError
from .model import Fixture, Suite
from .registry import Registry, use_registry

if TYPE_CHECKING:
    from _typeshed import TraceFunction

# Directories inside a suite that hold data rather than case files: never imported.
DATA_DIRS = frozenset({"fixtures", "skills", "cassettes", "templates", "__pycache__"})
_MODULE_PREFIX = "_skillgym_suite"
TIMEOUT_ENV = "SKILLGYM_LOAD_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 60.0
# After the timeout's raise, how long the import may take to unwind before the raise counts as swallowed.
_SWALLOWED_AFTER_S = 0.05


class _LoadTimeout(BaseException):
    """Raised into the import that is running when the load timeout fires.

    A BaseException, so a case file's own ``except Exception`` does not swallow it. A bare ``except:``
    would: when the import still runs shortly after the first raise, it is raised again, and at every
    line the import runs from then on (see ``_stop_every_line``), until it has left the case file.
    """


def suite_files(root: Path) -> list[Path]:
    """The suite's case files in the order they are imported: sorted, data dirs and ``_x``/``.x`` skipped."""
    found: list[Path] = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if any(p in DATA_DIRS or p.startswith((".", "_")) for p in parts):
            continue
        found.append(path)
    return found


def discover_fixtures(root: Path) -> tuple[Fixture, ...]:
    """Fixture apps are ``fixtures/<name>.py`` files; ``_helpers.py`` beside them are not fixtures."""
    folder = root / "fixtures"
    if not folder.is_dir():
        return ()
    return tuple(
        Fixture(name=p.stem, path=p.relative_to(root).as_posix())
        for p in sorted(folder.glob("*.py"))
        if not p.name.startswith(("_", "."))
    )


def load_suite(root: Path) -> Suite:
    """Load every case file under ``root``; raise CollectionError listing every file that failed."""
    if root.is_file():
        raise UsageError(
            f"--suite {root} is a file, but a suite is a folder of case files (such as evals/ holding "
            "suite.py, prompt/*.py and skills/); pass the folder that holds it"
        )
    if not root.is_dir():
        raise UsageError(
            f"suite directory {root} does not exist; pass --suite DIR pointing at a folder of case files"
        )
    timeout = load_timeout()
    registry = Registry()
    errors: list[str] = []
    current = root
    try:
        with use_registry(registry), _importable(root), _deadline(timeout):
            for current in suite_files(root):
                mark = registry.mark()
                try:
                    _import_file(current, root)
                except (Exception, SystemExit) as exc:  # a broken file is data: report it, load the others
                    registry.rollback(mark)
                    errors.append(describe_load_error(exc, current))
    except _LoadTimeout as exc:  # the time is up for every file still to come, too
        raise CollectionError([*errors, _describe_timeout(exc, current, timeout)]) from None
    try:
        suite = registry.build(_display(root), discover_fixtures(root))
    except CollectionError as exc:  # list reference problems alongside the files that failed
        raise CollectionError(errors + exc.errors) from None
    if errors:
        raise CollectionError(errors)
    return suite


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    safe = [part.replace("-", "_").replace(".", "_") for part in rel.parts]
    return ".".join((_MODULE_PREFIX, *safe))


def _import_file(path: Path, root: Path) -> None:
    name = _module_name(path, root)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - only for non-.py paths
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


@contextlib.contextmanager
def _importable(root: Path) -> Iterator[None]:
    # Case files may import helper modules that live beside them (``_common.py``).
    entry = str(root.resolve())
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def load_timeout() -> float:
    """Seconds the whole suite may take to import (``SKILLGYM_LOAD_TIMEOUT_S``); 0 means no limit."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise UsageError(
            f"{TIMEOUT_ENV}={text!r} is not a number of seconds; set it to a positive number such as 120, "
            "or 0 for no load timeout"
        )
    return seconds


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    # SIGALRM interrupts Python code only in the main thread; elsewhere (or without setitimer, or while
    # an outer timer is due sooner) the load runs without a timeout rather than taking over a timer.
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    outer = signal.getitimer(signal.ITIMER_REAL) if usable else (0.0, 0.0)
    if not seconds or not usable or 0 < outer[0] <= seconds:
        yield
        return

    tracer = sys.gettrace()
    fired = ended = False

    def expire(signum: int, frame: FrameType | None) -> None:
        nonlocal fired
        if ended:  # the load is over; the timer is being taken down
            return
        if fired:  # the first raise was swallowed (a bare except) and the import still runs
            signal.signal(signal.SIGALRM, previous)
            _stop_every_line(frame)
        else:  # the first raise says where the import was; a second comes soon unless the load ends
            signal.setitimer(signal.ITIMER_REAL, _SWALLOWED_AFTER_S)
        fired = True
        raise _LoadTimeout

    started = time.monotonic()
    # None: the handler was set outside Python, which cannot be put back; the default is the closest.
    previous = signal.signal(signal.SIGALRM, expire) or signal.SIG_DFL
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        ended = True
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.settrace(tracer)  # the tracer set when the time ran out goes; a debugger's comes back
        signal.signal(signal.SIGALRM, previous)
        if outer[0]:  # an outer timer keeps its own schedule: what was left of it, less the load's time
            left = max(outer[0] - (time.monotonic() - started), 1e-6)
            signal.setitimer(signal.ITIMER_REAL, left, outer[1])


def _stop_every_line(frame: FrameType | None) -> None:
    """From now on, raise ``_LoadTimeout`` at each line and call of code the case file's import runs.

    A bare ``except:`` that catches the first raise runs its own next line in a traced frame, so the
    raise escapes its handler; a loop of such handlers is left in one pass. Only frames below the
    loader's ``_import_file`` are traced: the loader's own ``except _LoadTimeout`` and the context
    managers around it run as usual, and ``_deadline`` then removes the tracer. Python code only, as the
    timer itself: a C call that never returns is not cut short.
    """

    def stop(traced: FrameType, event: str, arg: Any) -> TraceFunction | None:
        if event == "call" and not _under_import(traced):
            return None
        if event in ("call", "line"):
            raise _LoadTimeout
        return stop

    sys.settrace(stop)  # frames called from now on
    while frame is not None and frame.f_code.co_filename != __file__:  # and the import's running now
        frame.f_trace = stop
        frame.f_trace_lines = True
        frame = frame.f_back


def _under_import(frame: FrameType | None) -> bool:
    """True when ``frame`` was called, however deep, by the loader's import of a case file."""
    while frame is not None:
        if frame.f_code.co_filename == __file__:
            return frame.f_code is _import_file.__code__
        frame = frame.f_back
    return False


def _describe_timeout(exc: _LoadTimeout, path: Path, seconds: float) -> str:
    where = _where(exc, path)
    return (
        f"{where}: still importing after {seconds:g} s, so the suite load stopped here; a case file only "
        f"records definitions: look for a loop or a blocking call, or raise {TIMEOUT_ENV} if it is just slow"
    )


def _display(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd()).as_posix() or "."
    except ValueError:
        return str(path.resolve())


def describe_load_error(exc: BaseException, path: Path) -> str:
    """One line: ``file:line: what went wrong`` — the line is the deepest frame inside the suite file."""
    if isinstance(exc, DefinitionError) and exc.origin:
        return str(exc)
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        return f"{_display(path)}:{exc.lineno}: SyntaxError: {exc.msg}"
    if isinstance(exc, SystemExit):
        return (
            f"{_where(exc, path)}: SystemExit({exc.code!r}) while importing: a case file only records "
            "definitions and must not exit; remove the sys.exit(), or raise an exception saying what is wrong"
        )
    return f"{_where(exc, path)}: {type(exc).__name__}: {exc}"


def _where(exc: BaseException, path: Path) -> str:
    """``file:line`` of the deepest frame of ``exc`` inside ``path``, or just the file."""
    line = None
    target = str(path.resolve())
    for frame in traceback.extract_tb(exc.__traceback__):
        if str(Path(frame.filename).resolve()) == target:
            line = frame.lineno
    return f"{_display(path)}:{line}" if line is not None else _display(path)
