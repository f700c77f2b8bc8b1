"""Secret redaction: env keys that look like credentials, and their values wherever they appear."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

REDACTED = "<redacted>"
_SECRET_KEY = re.compile(
    r"(TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$|^(TOKEN|KEY|SECRET|PASSWORD)_", re.I
)
# Values this short are too likely to appear innocently (e.g. "1") to scrub from free text.
_MIN_SCRUB_LENGTH = 6


def is_secret_key(key: str) -> bool:
    """``*_TOKEN``, ``*_KEY``, ``*_SECRET``, ``*_PASSWORD`` (and bare ``TOKEN`` ...) are secret."""
    return bool(_SECRET_KEY.search(key))


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` with the values of secret-looking keys replaced."""
    return {k: (REDACTED if is_secret_key(k) else v) for k, v in env.items()}


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """The values to scrub from free text, longest first so overlapping secrets are fully removed."""
    values = {v for k, v in env.items() if is_secret_key(k) and len(v) >= _MIN_SCRUB_LENGTH}
    return tuple(sorted(values, key=len, reverse=True))


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret value replaced."""
    for value in secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def scrub_tree(root: str, secrets: Iterable[str], *, max_bytes: int = 16 * 1024 * 1024) -> list[str]:
    """Replace secret values inside every regular file under ``root`` (kept workspaces and homes).

    Files are rewritten in place only when they contain a secret; symlinks are not followed. Returns
    the files that could not be checked (too large or unreadable) so the caller can say so.
    """
    values = [v.encode() for v in secrets]
    unchecked: list[str] = []
    if not values:
        return unchecked
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            try:
                if os.path.getsize(path) > max_bytes:
                    unchecked.append(path)
                    continue
                with open(path, "rb") as handle:
                    data = handle.read()
                cleaned = data
                for value in values:
                    cleaned = cleaned.replace(value, REDACTED.encode())
                if cleaned != data:
                    with open(path, "wb") as handle:
                        handle.write(cleaned)
            except OSError:
                unchecked.append(path)
    return unchecked
