"""Suite loading: import each case file in sorted order as a transaction, then validate the whole."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

from .errors import CollectionError, DefinitionError, UsageError
from .model import Fixture, Suite
from .registry import Registry, use_registry

# Directories inside a suite that hold data rather than case files: never imported.
DATA_DIRS = frozenset({"fixtures", "skills", "cassettes", "templates", "__pycache__"})
_MODULE_PREFIX = "_skillgym_suite"


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
    if not root.is_dir():
        raise UsageError(
            f"suite directory {root} does not exist; pass --suite DIR pointing at a folder of case files"
        )
    registry = Registry()
    errors: list[str] = []
    with use_registry(registry), _importable(root):
        for path in suite_files(root):
            mark = registry.mark()
            try:
                _import_file(path, root)
            except Exception as exc:  # a broken file is data: report it and keep loading the others
                registry.rollback(mark)
                errors.append(describe_load_error(exc, path))
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
    line = None
    target = str(path.resolve())
    for frame in traceback.extract_tb(exc.__traceback__):
        if str(Path(frame.filename).resolve()) == target:
            line = frame.lineno
    where = f"{_display(path)}:{line}" if line is not None else _display(path)
    return f"{where}: {type(exc).__name__}: {exc}"
