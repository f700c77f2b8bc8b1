"""Secret redaction: env keys that look like credentials, and their values wherever they appear."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

if TYPE_CHECKING:
    from .model import Suite

REDACTED = "<redacted>"
_SECRET_KEY = re.compile(
    r"(TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$|^(TOKEN|KEY|SECRET|PASSWORD)_", re.I
)
# Values this short are too likely to appear innocently (e.g. "1") to scrub from free text.
MIN_SECRET_LENGTH = 6
# Files are scrubbed a chunk at a time, so their size does not matter.
_CHUNK_BYTES = 4 * 1024 * 1024


def is_secret_key(key: str) -> bool:
    """``*_TOKEN``, ``*_KEY``, ``*_SECRET``, ``*_PASSWORD`` (and bare ``TOKEN`` ...) are secret."""
    return bool(_SECRET_KEY.search(key))


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` with the values of secret-looking keys replaced."""
    return {k: (REDACTED if is_secret_key(k) else v) for k, v in env.items()}


def secret_values(*envs: Mapping[str, str]) -> tuple[str, ...]:
    """The values to scrub from free text, longest first so overlapping secrets are fully removed."""
    values = {v for env in envs for k, v in env.items() if is_secret_key(k) and len(v) >= MIN_SECRET_LENGTH}
    return tuple(sorted(values, key=len, reverse=True))


def with_secrets(known: tuple[str, ...], *envs: Mapping[str, str]) -> tuple[str, ...]:
    """``known`` plus the secret values of ``envs``, longest first; ``known`` itself when they add none."""
    extra = set(secret_values(*envs)).difference(known)
    if not extra:
        return known
    return tuple(sorted(extra.union(known), key=len, reverse=True))


def suite_secrets(suite: Suite, known: Iterable[str] = ()) -> tuple[str, ...]:
    """``known`` plus every secret the suite holds, longest first: the values it marked with
    ``skillgym.secret()`` and the values of the secret-looking env keys of its presets, bootstrap
    commands, conditions and cases.

    Read once per run: a trial can print another trial's secret (a shared cache, a file left behind), and
    the run's events, reports and console carry every case's.
    """
    envs: list[Mapping[str, str]] = [c.env for c in suite.conditions]
    envs += [c.env for c in suite.cases]
    for preset in suite.presets:
        envs += [preset.env, *(step.env for step in preset.bootstrap)]
    marked = {*known, *suite.secrets}
    return with_secrets(tuple(sorted(marked, key=len, reverse=True)), *envs)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret value replaced."""
    for value in secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


_S = TypeVar("_S")


def json_forms(secrets: Iterable[str]) -> tuple[bytes, ...]:
    """Each secret as it can appear inside JSON text (raw UTF-8, and escaped where that differs)."""
    forms = {f for value in secrets for f in (value.encode(), msgspec.json.encode(value)[1:-1])}
    return tuple(sorted(forms, key=len, reverse=True))


def scrub_struct(value: _S, secrets: tuple[str, ...], forms: tuple[bytes, ...] | None = None) -> _S:
    """``value`` (a msgspec Struct: an event, a report, a plan) with every secret in its strings replaced.

    Searched in its JSON encoding, in C: most values hold no secret and are returned as they are. One that
    does is rebuilt with its strings (mapping keys too) scrubbed, never by editing the JSON text, which a
    secret that looks like a number would break. ``forms`` is ``json_forms(secrets)``, when the caller
    keeps it.
    """
    if not secrets:
        return value
    needles = json_forms(secrets) if forms is None else forms
    encoded = msgspec.json.encode(value)
    if not any(needle in encoded for needle in needles):
        return value
    cleaned = _scrub_builtins(msgspec.to_builtins(value), secrets)
    rebuilt: _S = msgspec.convert(cleaned, type(value))
    return rebuilt


def _scrub_builtins(data: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(data, str):
        return scrub(data, secrets)
    if isinstance(data, dict):
        return {_scrub_builtins(k, secrets): _scrub_builtins(v, secrets) for k, v in data.items()}
    if isinstance(data, (list, tuple)):  # to_builtins keeps a tuple a tuple
        return [_scrub_builtins(item, secrets) for item in data]
    return data


def scrub_tree(
    root: str, secrets: Iterable[str], *, chunk_bytes: int = _CHUNK_BYTES
) -> list[tuple[str, str]]:
    """Replace secret values inside every regular file under ``root`` (streams, logs, kept workspaces).

    Files of any size are read in chunks, and rewritten (atomically, keeping their mode) only when they
    contain a secret; symlinks are not followed. Returns each file that could not be scrubbed, with why,
    so the caller can say so.
    """
    values = sorted({v.encode() for v in secrets if v}, key=len, reverse=True)
    unscrubbed: list[tuple[str, str]] = []
    if not values:
        return unscrubbed
    # Longest first: at any position the longest secret wins. Where two overlap, the one that starts first
    # is replaced and the rest of the other stays, so no secret is left whole.
    pattern = re.compile(b"|".join(re.escape(v) for v in values))
    overlap = len(values[0]) - 1
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            try:
                _scrub_file(path, pattern, overlap, chunk_bytes)
            except OSError as exc:
                unscrubbed.append((path, exc.strerror or str(exc)))
    return unscrubbed


def _scrub_file(path: str, pattern: re.Pattern[bytes], overlap: int, chunk_bytes: int) -> None:
    # Two passes rather than a temp copy of every file: most files hold no secret and are only read.
    if not any(replaced for _piece, replaced in _scrubbed(path, pattern, overlap, chunk_bytes)):
        return
    # A short temp name of its own: the file's name may already be as long as a name can be.
    fd, tmp = tempfile.mkstemp(prefix=".scrub-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as out:
            for piece, _replaced in _scrubbed(path, pattern, overlap, chunk_bytes):
                out.write(piece)
        shutil.copymode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _scrubbed(
    path: str, pattern: re.Pattern[bytes], overlap: int, chunk_bytes: int
) -> Iterator[tuple[bytes, bool]]:
    """The file's bytes with every secret replaced, in pieces, each with whether it had one.

    The last ``overlap`` bytes of each chunk wait for the next: a secret that starts before them ends
    inside the chunk, so one cut by a chunk boundary is matched whole on the next round.
    """
    marker = REDACTED.encode()
    carry = b""
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(chunk_bytes)
            buffer = carry + chunk
            cut = len(buffer) - overlap if chunk else len(buffer)  # at the end nothing waits
            pieces: list[bytes] = []
            done, replaced = 0, False
            for match in pattern.finditer(buffer):
                if match.start() >= cut:
                    break
                pieces += (buffer[done : match.start()], marker)
                done, replaced = match.end(), True
            cut = max(cut, done, 0)
            pieces.append(buffer[done:cut])
            carry = buffer[cut:]
            yield b"".join(pieces), replaced
            if not chunk:
                return
