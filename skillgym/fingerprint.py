"""BLAKE3 fingerprints of compiled cases: stable across processes, blind to cosmetic fields."""

from __future__ import annotations

from typing import Any

import blake3
import msgspec

from .model import Case

# Changing the context (or the excluded fields) changes every fingerprint: bump the version when you do.
_CONTEXT = "skillgym 2026-11 case fingerprint v1"
# Struct fields that never change what the agent is asked or how it is graded. ``conditions`` is excluded
# because a trial runs under one condition: adding a condition to a case must not invalidate the others;
# ``token_budget`` is a cost guardrail beside grading, so tuning it must not mark snapshots stale.
EXCLUDED_FIELDS = frozenset(
    {"origin", "description", "tags", "category", "fingerprint", "conditions", "token_budget"}
)
SHORT_LENGTH = 12

_encoder = msgspec.json.Encoder(order="deterministic")


# Struct fields that hold the user's own mappings: their keys are data, never stripped.
_USER_DATA = frozenset({"env", "config"})


def _strip(data: dict[str, Any]) -> dict[str, Any]:
    # Works on msgspec.to_builtins output (C-fast); every dict below a Struct field is a Struct's
    # except the user's own mappings, whose keys are kept even when one is called "description".
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in EXCLUDED_FIELDS:
            continue
        kind = type(value)
        if kind is dict and key not in _USER_DATA:
            value = _strip(value)
        elif (kind is tuple or kind is list) and value and type(value[0]) is dict:
            value = [_strip(item) for item in value]
        out[key] = value
    return out


def canonical_bytes(case: Case) -> bytes:
    """The deterministic encoding the fingerprint is taken over (useful to explain a change)."""
    return _encoder.encode(_strip(msgspec.to_builtins(case)))


def fingerprint(case: Case) -> str:
    """The full hex BLAKE3 digest (derive-key mode) of ``canonical_bytes(case)``."""
    return blake3.blake3(canonical_bytes(case), derive_key_context=_CONTEXT).hexdigest()


def short(digest: str) -> str:
    """The prefix shown to people; the full digest is what gets stored and compared."""
    return digest[:SHORT_LENGTH]
