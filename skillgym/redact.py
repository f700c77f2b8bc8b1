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

_T = TypeVar("_T", str, bytes)

REDACTED = "<redacted>"
_SECRET_KEY = re.compile(
    r"(TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$|^(TOKEN|KEY|SECRET|PASSWORD)_", re.I
)
# Values this short are too likely to appear innocently (e.g. "1") to scrub from free text.
MIN_SECRET_LENGTH = 6
# Files are scrubbed a chunk at a time, so their size does not matter.
_CHUNK_BYTES = 4 * 1024 * 1024


def _longest_first(value: _T) -> tuple[int, _T]:
    # Ties in a fixed order: the same secrets give the same tuple in every process, whatever the hash seed.
    return -len(value), value


def is_secret_key(key: str) -> bool:
    """``*_TOKEN``, ``*_KEY``, ``*_SECRET``, ``*_PASSWORD`` (and bare ``TOKEN`` ...) are secret."""
    return bool(_SECRET_KEY.search(key))


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` with the values of secret-looking keys replaced."""
    return {k: (REDACTED if is_secret_key(k) else v) for k, v in env.items()}


def secret_values(*envs: Mapping[str, str]) -> tuple[str, ...]:
    """The values to scrub from free text, longest first so overlapping secrets are fully removed."""
    values = {v for env in envs for k, v in env.items() if is_secret_key(k) and len(v) >= MIN_SECRET_LENGTH}
    return tuple(sorted(values, key=_longest_first))


def with_secrets(known: tuple[str, ...], *envs: Mapping[str, str]) -> tuple[str, ...]:
    """``known`` plus the secret values of ``envs``, longest first; ``known`` itself when they add none."""
    extra = set(secret_values(*envs)).difference(known)
    if not extra:
        return known
    return tuple(sorted(extra.union(known), key=_longest_first))


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
    return with_secrets(tuple(sorted(marked, key=_longest_first)), *envs)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret value replaced."""
    for value in secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


_S = TypeVar("_S")
_encoder = msgspec.json.Encoder()


def json_forms(secrets: Iterable[str]) -> tuple[bytes, ...]:
    """Each secret as it can appear inside JSON text (raw UTF-8, and escaped where that differs)."""
    forms = {f for value in secrets for f in (value.encode(), msgspec.json.encode(value)[1:-1])}
    return tuple(sorted(forms, key=_longest_first))


def scrub_struct(value: _S, secrets: tuple[str, ...], forms: tuple[bytes, ...] | None = None) -> _S:
    """``value`` (a msgspec Struct: an event, a report, a plan) with every secret in its strings replaced.

    See ``scrubbed_json``; ``forms`` is ``json_forms(secrets)``, when the caller keeps it.
    """
    if not secrets:
        return value
    return scrubbed_json(value, secrets, forms)[0]


def scrubbed_json(
    value: _S, secrets: tuple[str, ...], forms: tuple[bytes, ...] | None = None
) -> tuple[_S, bytes]:
    """``value`` scrubbed as ``scrub_struct`` does, and its JSON encoding (written without encoding again).

    Searched in its JSON encoding, in C: most values hold no secret and are returned as they are. One that
    does is rebuilt with its strings (mapping keys too) scrubbed, never by editing the JSON text, which a
    secret that reads like a number (a timestamp's digits) would break.
    """
    encoded = _encoder.encode(value)
    if not secrets:
        return value, encoded
    needles = json_forms(secrets) if forms is None else forms
    if not any(needle in encoded for needle in needles):
        return value, encoded
    cleaned = _scrub_builtins(msgspec.to_builtins(value), secrets)
    rebuilt: _S = msgspec.convert(cleaned, type(value))
    return rebuilt, _encoder.encode(rebuilt)


def _scrub_builtins(data: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(data, str):
        return scrub(data, secrets)
    if isinstance(data, dict):
        return {_scrub_builtins(k, secrets): _scrub_builtins(v, secrets) for k, v in data.items()}
    if isinstance(data, (list, tuple)):  # to_builtins keeps a tuple a tuple
        return [_scrub_builtins(item, secrets) for item in data]
    return data


class ByteScrubber:
    """Replaces secret values in a byte stream fed in chunks of any size, as it goes.

    The last ``overlap`` bytes of the stream (the longest secret's length less one) wait for the next
    chunk: a secret that starts before them ends inside what was fed, so one cut by a chunk boundary is
    matched whole on the next round. Longest first: at any position the longest secret wins; where two
    overlap, the one that starts first is replaced and the rest of the other stays, so none is left whole.
    """

    __slots__ = ("_carry", "_needles", "_overlap", "_pattern", "replaced")

    def __init__(self, secrets: Iterable[str]) -> None:
        values = sorted({v.encode() for v in secrets if v}, key=_longest_first)
        self._needles = tuple(values)
        self._pattern = re.compile(b"|".join(re.escape(v) for v in values)) if values else None
        self._overlap = len(values[0]) - 1 if values else 0
        self._carry = b""
        self.replaced = False  # whether any secret was found so far

    def feed(self, chunk: bytes) -> bytes:
        """The scrubbed stream up to all but the last ``overlap`` bytes fed so far."""
        return self._take(chunk, final=False)

    def finish(self) -> bytes:
        """The rest of the stream, scrubbed: what the last ``feed`` held back."""
        return self._take(b"", final=True)

    def _take(self, chunk: bytes, *, final: bool) -> bytes:
        buffer = self._carry + chunk if self._carry else chunk
        cut = len(buffer) if final else max(len(buffer) - self._overlap, 0)
        if self._pattern is None or not any(needle in buffer for needle in self._needles):
            # The usual case, searched in C: nothing to replace, only the tail waits.
            self._carry = buffer[cut:]
            return buffer[:cut]
        marker = REDACTED.encode()
        pieces: list[bytes] = []
        done = 0
        for match in self._pattern.finditer(buffer):
            if match.start() >= cut:
                break
            pieces += (buffer[done : match.start()], marker)
            done = match.end()
            self.replaced = True
        cut = max(cut, done)
        pieces.append(buffer[done:cut])
        self._carry = buffer[cut:]
        return b"".join(pieces)


def scrub_tree(
    root: str, secrets: Iterable[str], *, chunk_bytes: int = _CHUNK_BYTES
) -> list[tuple[str, str]]:
    """Replace secret values inside every regular file under ``root`` (streams, logs, kept workspaces).

    Files of any size are read in chunks, and rewritten (atomically, keeping their mode) only when they
    contain a secret; symlinks are not followed. Returns each file that could not be scrubbed, with why,
    so the caller can say so.
    """
    values = tuple(v for v in secrets if v)
    unscrubbed: list[tuple[str, str]] = []
    if not values:
        return unscrubbed
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            try:
                _scrub_file(path, values, chunk_bytes)
            except OSError as exc:
                unscrubbed.append((path, exc.strerror or str(exc)))
    return unscrubbed


def _scrub_file(path: str, secrets: tuple[str, ...], chunk_bytes: int) -> None:
    # Two passes rather than a temp copy of every file: most files hold no secret and are only read.
    finder = ByteScrubber(secrets)
    for _piece in _scrubbed(path, finder, chunk_bytes):
        if finder.replaced:
            break
    else:
        return
    # A short temp name of its own: the file's name may already be as long as a name can be.
    fd, tmp = tempfile.mkstemp(prefix=".scrub-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as out:
            for piece in _scrubbed(path, ByteScrubber(secrets), chunk_bytes):
                out.write(piece)
        shutil.copymode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _scrubbed(path: str, scrubber: ByteScrubber, chunk_bytes: int) -> Iterator[bytes]:
    """The file's bytes with every secret replaced, in pieces."""
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_bytes):
            yield scrubber.feed(chunk)
    yield scrubber.finish()
