"""Cassettes: a recorded provider stream (JSONL) behind one metadata line, stored under the suite.

Layout, looked up in this order::

    cassettes/<provider>/<model>/<lane>/<case>/<condition>/trial-<n>.jsonl   one trial
    cassettes/<provider>/<model>/<lane>/<case>/<condition>.jsonl             every trial of the condition

Line 1 is the header (``CassetteMeta``); every further line is one raw line of the provider's stream, in
the ``format`` the header names (a key of ``tracefmt.PARSERS``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final

import msgspec

from ..errors import SkillgymError, UsageError
from ..files import write_atomic
from ..model import Data, Lane
from ..results import ErrorClass
from ..workspaces.paths import UnsafePathError, check_segment

CASSETTE_VERSION: Final = 1
CASSETTES_DIR: Final = "cassettes"
# The path segment for a cassette recorded without an explicit --model (the CLI's own default).
DEFAULT_MODEL: Final = "default"


class CassetteError(SkillgymError, ValueError):
    """A cassette is missing, malformed, or would live outside the cassettes dir."""


class CassetteMeta(Data, frozen=True, kw_only=True, omit_defaults=True):
    """Line 1 of a cassette: what was recorded, for which case fingerprint, and when.

    ``error_class``/``error_message`` are set when the recorded invocation failed, so a replay fails
    the same way instead of grading a broken run as if it were whole.
    """

    cassette: int
    provider: str
    model: str
    format: str
    lane: Lane
    case: str
    condition: str
    trial: int | None
    fingerprint: str
    recorded_at: str
    error_class: ErrorClass | None = None
    error_message: str | None = None


_meta_decoder: Final = msgspec.json.Decoder(CassetteMeta)
_encoder: Final = msgspec.json.Encoder()


def cassettes_root(suite_root: Path) -> Path:
    """``<suite_root>/cassettes``."""
    return Path(suite_root) / CASSETTES_DIR


def cassette_candidates(
    suite_root: Path,
    *,
    provider: str,
    model: str | None,
    lane: str,
    case: str,
    condition: str,
    trial: int,
) -> tuple[Path, Path]:
    """The trial's own cassette path, then the condition-level fallback, in lookup order.

    Raises ``CassetteError`` when an id is not a safe file name or the path would leave the cassettes
    dir (for example through a symlinked folder).
    """
    root = cassettes_root(suite_root)
    try:
        parts = [
            check_segment(provider, what="provider"),
            check_segment(model or DEFAULT_MODEL, what="model"),
            check_segment(lane, what="lane"),
            check_segment(case, what="case id"),
        ]
        folder = root.joinpath(*parts)
        cond = check_segment(condition, what="condition id")
    except UnsafePathError as exc:
        raise CassetteError(f"no cassette path for this trial: {exc}") from exc
    candidates = (folder / cond / f"trial-{trial}.jsonl", folder / f"{cond}.jsonl")
    base = root.resolve()
    for path in candidates:
        if not path.resolve().is_relative_to(base):
            raise CassetteError(
                f"cassette path {path} resolves to {path.resolve()}, outside {base}; "
                "remove the symlink that leads out of the cassettes dir"
            )
    return candidates


def check_record_paths(suite_root: Path, trials: Iterable[tuple[str, str | None, str, str, str]]) -> None:
    """Refuse, before a --record run writes anything, a trial whose cassette could not be saved.

    ``trials`` are ``(provider, model, lane, case, condition)``. ``--model`` is the one segment the user
    types on the command line: a model id with a ``/`` is fine for an agent CLI but not as a folder name.
    """
    for provider, model, lane, case, condition in dict.fromkeys(trials):
        try:
            check_segment(model or DEFAULT_MODEL, what="model")
        except UnsafePathError as exc:
            raise UsageError(
                f"--record keeps cassettes in {CASSETTES_DIR}/<provider>/<model>/, so --model {model!r} "
                "must be usable as one folder name (non-empty, not '.' or '..', no '/', '\\' or NUL); "
                "drop --record or pass a model id without them"
            ) from exc
        try:
            cassette_candidates(
                suite_root, provider=provider, model=model, lane=lane, case=case, condition=condition, trial=1
            )
        except CassetteError as exc:
            raise UsageError(f"--record cannot save {provider}/{lane}/{case}/{condition}: {exc}") from exc


def find_cassette(candidates: Iterable[Path]) -> Path | None:
    """The first candidate that is a file, or None."""
    return next((path for path in candidates if path.is_file()), None)


def read_cassette(path: Path) -> CassetteMeta:
    """Read and validate a cassette's header line; errors name the file, the line and the fix."""
    try:
        with open(path, "rb") as file:
            header = file.readline()
    except FileNotFoundError as exc:
        raise CassetteError(f"cassette {path} does not exist; record it with --record") from exc
    except OSError as exc:
        raise CassetteError(f"cannot read cassette {path}: {exc.strerror or exc}") from exc
    if not header.strip():
        raise CassetteError(
            f"{path}:1: expected a cassette header line "
            f'({{"cassette": {CASSETTE_VERSION}, "provider": ..., "format": ...}}), found an empty line; '
            "re-record it with --record"
        )
    try:
        version = msgspec.json.decode(header, type=dict[str, object]).get("cassette")
    except msgspec.DecodeError as exc:
        raise CassetteError(f"{path}:1: the cassette header is not a JSON object: {exc}") from exc
    if version != CASSETTE_VERSION:
        raise CassetteError(
            f'{path}:1: expected cassette version {CASSETTE_VERSION} in the header\'s "cassette" field, '
            f"found {version!r}; re-record it with this skillgym's --record"
        )
    try:
        return _meta_decoder.decode(header)
    except msgspec.DecodeError as exc:
        raise CassetteError(f"{path}:1: invalid cassette header: {exc}; fix the field or re-record") from exc


def iter_cassette_lines(path: Path) -> Iterator[bytes]:
    """The recorded stream lines (header excluded), one at a time, without their line endings."""
    with open(path, "rb") as file:
        file.readline()
        for line in file:
            yield line.rstrip(b"\r\n")


def write_cassette(path: Path, meta: CassetteMeta, lines: Iterable[bytes]) -> None:
    """Write a cassette atomically: readers see the old file or the whole new one, never a part."""
    body = [_encoder.encode(meta)]
    for number, line in enumerate(lines, start=2):
        line = line.rstrip(b"\r\n")
        if b"\n" in line:
            raise CassetteError(
                f"cannot write cassette {path}: stream line {number - 1} contains a newline; pass the "
                "stream split into lines"
            )
        body.append(line)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, b"\n".join(body) + b"\n")
