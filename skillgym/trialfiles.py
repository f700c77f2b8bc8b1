"""Each trial's result.json held against events.jsonl, the truth, and rewritten from it where they differ."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import msgspec

from .eventlog import RunLog, nest_id
from .files import write_atomic
from .results import RESULT_SCHEMA, TrialResult
from .workspaces.paths import UnsafePathError, resolve_inside

# The encoder the trial itself writes result.json with: a file the log agrees with is byte for byte the same.
_encoder: Final = msgspec.json.Encoder()


def mend_result_files(run_dir: Path, log: RunLog) -> list[str]:
    """Check every trial's result.json against its trial.finish event; one warning line per file that is
    unreadable, truncated or different, each rewritten (atomically) from the event log.

    A file in an older schema that holds the same record is left as it is. A trial folder that is gone
    is not rebuilt for one file: its result stays in events.jsonl only, and the warning says so.
    """
    warnings: list[str] = []
    for result in log.results:
        try:
            path = resolve_inside(run_dir, result.paths.result, what=f"trial {result.id.key} result")
        except UnsafePathError as exc:
            warnings.append(f"{exc}; events.jsonl keeps its result, the file is not rewritten")
            continue
        expected = _encoder.encode(result)
        problem = _disagreement(path, expected, result, schema=log.start.schema)
        if problem is None:
            continue
        shown = path.relative_to(run_dir.resolve())
        if not path.parent.is_dir():
            warnings.append(
                f"{shown} {problem} and its trial folder is gone; its result is kept in events.jsonl only"
            )
            continue
        try:
            write_atomic(path, expected)
        except OSError as exc:
            warnings.append(
                f"{shown} {problem}; rewriting it from events.jsonl failed ({exc.strerror or exc}): "
                "make the trial folder writable and run `skillgym report` again"
            )
            continue
        warnings.append(f"{shown} {problem}; rewrote it from events.jsonl, the run's record")
    return warnings


def _disagreement(path: Path, expected: bytes, result: TrialResult, *, schema: int) -> str | None:
    """How the file at ``path`` disagrees with ``result``, or None when it holds the same record."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return "is missing"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if data == expected:
        return None
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return "is truncated or not JSON"
    if schema <= 1 and isinstance(raw, dict):  # written before the identity moved into `id`
        raw = {**nest_id(raw), "schema": RESULT_SCHEMA}
    try:
        on_disk = msgspec.convert(raw, TrialResult)
    except msgspec.ValidationError as exc:
        return f"is not a trial result ({exc})"
    if on_disk == result:
        return None
    fields = [f for f in TrialResult.__struct_fields__ if getattr(on_disk, f) != getattr(result, f)]
    return f"disagrees with events.jsonl ({', '.join(fields)} differ)"
