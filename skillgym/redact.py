"""Secret redaction: env keys that look like credentials, and their values wherever they appear."""

from __future__ import annotations

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
