"""Snapshot files on disk: strict reading with file:line errors, byte-stable atomic writes, and a lock.

A file that does not parse or validate is never overwritten: every write goes through a read that
succeeded. Writes are a temp file and an ``os.replace`` (readers see the old or the new file), and a
read-modify-write holds an exclusive ``flock`` on a hidden lock file beside the snapshot, so two
concurrent updates both land instead of one losing the other's entries.
"""

from __future__ import annotations

import fcntl
import os
import re
import stat
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import tomli_w

from ..errors import SkillgymError
from ..files import write_atomic
from ..model import LANES
from .model import SNAPSHOT_SCHEMA, Figures, SnapshotEntry, SnapshotFile

HEADER = (
    "# skillgym token snapshots: the per-trial token baseline of each case, for one provider and model.\n"
    "# Written by `skillgym snapshots update` (or `run --snapshot-update`); review changes like code.\n"
    "# Hand edits are welcome but comments are not kept: use an entry's `note`. Format: snapshots/README.md\n"
)
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_TOML_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_PATH_AT = re.compile(r" - at `\$([^`]*)`$")
_FIELD = re.compile(r"field `([^`]+)`")


class SnapshotError(SkillgymError, ValueError):
    """A snapshot file cannot be read or written; names the file and, when known, the line."""

    def __init__(self, message: str, *, path: str | Path, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")


def file_name(name: str) -> str:
    """A provider or model name as a file name: unsafe characters become ``-`` (``a/b`` -> ``a-b``)."""
    safe = _SAFE.sub("-", name).lstrip(".")
    return safe or "default"


def snapshot_path(directory: str | Path, provider: str, model: str) -> Path:
    """``<directory>/<provider>/<model>.toml``."""
    return Path(directory) / file_name(provider) / f"{file_name(model)}.toml"


def provider_files(directory: str | Path, provider: str) -> list[Path]:
    """Every snapshot file of one provider, sorted."""
    folder = Path(directory) / file_name(provider)
    return sorted(folder.glob("*.toml")) if folder.is_dir() else []


# --- reading ---------------------------------------------------------------------------------------


def parse_snapshot(
    data: bytes, path: str | Path, *, provider: str | None = None, model: str | None = None
) -> SnapshotFile:
    """Decode and validate one file's bytes; every problem is a SnapshotError naming file and line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SnapshotError(f"not UTF-8 text ({exc.reason}); {_FIX}", path=path, line=line) from exc
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = _TOML_AT.search(message)
        at = int(found.group(1)) if found else None
        problem = _TOML_AT.sub("", message)
        column = f" (column {found.group(2)})" if found else ""
        raise SnapshotError(f"not valid TOML: {problem}{column}; {_FIX}", path=path, line=at) from exc
    _check_schema(raw, text, path)
    try:
        snapshot = msgspec.convert(raw, SnapshotFile)
    except msgspec.ValidationError as exc:
        message = str(exc)
        raise SnapshotError(
            f"not a valid snapshot: {message}; {_FIX}", path=path, line=_line_of(text, message)
        ) from exc
    for name, expected in (("provider", provider), ("model", model)):
        found_value = getattr(snapshot, name)
        if expected is not None and found_value != expected:
            raise SnapshotError(
                f"{name} is {found_value!r} but this file is where {name} {expected!r} is kept; "
                f"move the file or fix the `{name}` key",
                path=path,
                line=_key_line(text, name),
            )
    seen: set[tuple[str, str, str]] = set()
    for index, entry in enumerate(snapshot.entries):
        if entry.key in seen:
            raise SnapshotError(
                f"a second entry for {'/'.join(entry.key)}; keep one of the two",
                path=path,
                line=_entry_line(text, index),
            )
        seen.add(entry.key)
    return snapshot


_FIX = "fix it by hand (or delete it and run `skillgym snapshots update`); it was left untouched"


def read_snapshot(
    path: str | Path, *, provider: str | None = None, model: str | None = None
) -> SnapshotFile | None:
    """The file at ``path``, or None when there is none yet."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SnapshotError(f"cannot be read: {exc.strerror}", path=path) from exc
    return parse_snapshot(data, path, provider=provider, model=model)


def _check_schema(raw: dict[str, Any], text: str, path: str | Path) -> None:
    schema = raw.get("schema")
    if schema is None:
        raise SnapshotError(
            f"no `schema` key: not a skillgym snapshot file (it starts with `schema = {SNAPSHOT_SCHEMA}`)",
            path=path,
            line=1,
        )
    if type(schema) is not int or schema != SNAPSHOT_SCHEMA:
        raise SnapshotError(
            f"schema {schema!r} is not the schema {SNAPSHOT_SCHEMA} this skillgym reads; use the skillgym "
            f"version that wrote it (or, if it was edited by hand, set `schema = {SNAPSHOT_SCHEMA}`)",
            path=path,
            line=_key_line(text, "schema"),
        )


def _key_line(text: str, key: str, start: int = 0, stop: int | None = None) -> int | None:
    """The 1-based line of ``key = ...`` or a ``[... .key]`` header, within 0-based lines [start, stop)."""
    lines = text.splitlines()
    pattern = re.compile(rf"^\s*(?:\"?{re.escape(key)}\"?\s*=|\[+[^\]]*\b{re.escape(key)}\]+\s*$)")
    for number in range(start, len(lines) if stop is None else min(stop, len(lines))):
        if pattern.match(lines[number]):
            return number + 1
    return None


def _next_header(text: str, after: int, stop: int | None) -> int | None:
    """The 0-based index of the first table header after 0-based line ``after`` (or ``stop``)."""
    lines = text.splitlines()
    for number in range(after + 1, len(lines) if stop is None else min(stop, len(lines))):
        if lines[number].lstrip().startswith("["):
            return number
    return stop


def _entry_starts(text: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines()) if re.match(r"^\s*\[\[\s*entry\s*\]\]", line)]


def _entry_line(text: str, index: int) -> int | None:
    starts = _entry_starts(text)
    return starts[index] + 1 if index < len(starts) else None


def _line_of(text: str, message: str) -> int | None:
    """Best effort: the line a msgspec error path such as ``$.entry[2].median.total`` points at."""
    found = _PATH_AT.search(message)
    if not found:
        return None
    path = found.group(1)
    names = re.findall(r"\.([A-Za-z0-9_-]+)", path)
    field = _FIELD.search(message)  # "unknown field `x`", "missing required field `x`": point at x
    if field is not None:
        names.append(field.group(1))
    starts = _entry_starts(text)
    entry = re.match(r"^\.entry\[(\d+)\]", path)
    if entry is None:  # a top-level key, before the first entry
        return _key_line(text, names[0], 0, starts[0] if starts else None) if names else None
    index = int(entry.group(1))
    if index >= len(starts):
        return None
    stop = starts[index + 1] if index + 1 < len(starts) else None
    line = starts[index]  # 0-based; walk down: a sub-table header, then the key inside that table
    table_stop = _next_header(text, line, stop)
    for name in names[1:]:
        hit = _key_line(text, name, line, table_stop if name == names[-1] else stop)
        if hit is None:
            break
        line = hit - 1
        table_stop = _next_header(text, line, stop)
    return line + 1


# --- writing ---------------------------------------------------------------------------------------


def _number(value: float | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else round(float(value), 1)


def _figures(figures: Figures) -> dict[str, int | float]:
    out: dict[str, int | float] = {}
    for name in ("input", "output", "cached", "total"):
        value = _number(getattr(figures, name))
        if value is not None:
            out[name] = value
    return out


def sort_key(entry: SnapshotEntry) -> tuple[int, str, str]:
    return (LANES.index(entry.lane), entry.case, entry.condition)


def render_snapshot(snapshot: SnapshotFile) -> str:
    """The file's text: header comment, then entries sorted by lane, case, condition; one trailing newline.

    The same snapshot always renders to the same bytes, so an update that changes nothing changes no byte.
    """
    head: dict[str, Any] = {"schema": snapshot.schema, "provider": snapshot.provider, "model": snapshot.model}
    parts = [HEADER + tomli_w.dumps(head)]
    for entry in sorted(snapshot.entries, key=sort_key):
        literals: dict[str, Any] = {
            "lane": entry.lane,
            "case": entry.case,
            "condition": entry.condition,
            "fingerprint": entry.fingerprint,
            "trials": entry.trials,
        }
        if entry.run:
            literals["run"] = entry.run
        if entry.note:
            literals["note"] = entry.note
        tables = {"median": _figures(entry.median), "min": _figures(entry.min), "max": _figures(entry.max)}
        if entry.judge is not None:
            tables["judge"] = _figures(entry.judge)  # the judge's own median, apart from the agent's
        # Composed by hand so every entry is a [[entry]] block whatever its length (tomli-w would inline
        # a short one), keeping the file uniform to read and to diff.
        parts.append("[[entry]]\n" + tomli_w.dumps(literals) + "\n" + tomli_w.dumps({"entry": tables}))
    return "\n".join(parts)


def write_snapshot(path: str | Path, snapshot: SnapshotFile) -> bool:
    """Write atomically; False (and no write at all) when the file already holds exactly these bytes.

    A committed file keeps its permissions; a new one is world-readable (0644), like any source file.
    """
    target = Path(path)
    data = render_snapshot(snapshot).encode("utf-8")
    try:
        current = target.stat()
        if target.read_bytes() == data:
            return False
        mode = stat.S_IMODE(current.st_mode)
    except FileNotFoundError:
        mode = 0o644
    try:
        write_atomic(target, data)
        os.chmod(target, mode)  # the temp file was created 0600
    except OSError as exc:
        raise SnapshotError(f"cannot be written: {exc.strerror}", path=path) from exc
    return True


@contextmanager
def locked(path: str | Path) -> Iterator[None]:
    """Hold an exclusive lock for a read-modify-write of ``path``: a lock on the folder that holds it.

    The folder, not a lock file beside the snapshot: a lock file would have to stay behind (removing it
    lets a waiter lock a file no longer on disk), and the folder outlives every write into it.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise SnapshotError(f"cannot open its folder to lock it: {exc.strerror}", path=path) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
