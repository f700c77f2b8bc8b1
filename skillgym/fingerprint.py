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


_SCALARS = frozenset({str, int, float, bool, type(None)})
_FIELDS: dict[type, tuple[tuple[str, ...], str | None, object]] = {}


def _fields_of(kind: type[msgspec.Struct]) -> tuple[tuple[str, ...], str | None, object]:
    config = kind.__struct_config__
    kept = tuple(f for f in kind.__struct_fields__ if f not in EXCLUDED_FIELDS)
    entry = _FIELDS[kind] = (kept, config.tag_field, config.tag)
    return entry


def _view(value: Any) -> Any:
    # Walk Structs rather than their builtins so that user data (a custom verifier's config) keeps
    # every key, even one that happens to be called "description". Type dispatch first: this runs
    # tens of times per case and dominates compiling large suites.
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is tuple or kind is list:
        return [_view(v) for v in value]
    if kind is dict:
        return {k: _view(v) for k, v in value.items()}
    if isinstance(value, msgspec.Struct):
        kept, tag_field, tag = _FIELDS.get(kind) or _fields_of(kind)
        out = {f: _view(getattr(value, f)) for f in kept}
        if tag_field is not None:
            out[tag_field] = tag
        return out
    return value


def canonical_bytes(case: Case) -> bytes:
    """The deterministic encoding the fingerprint is taken over (useful to explain a change)."""
    return _encoder.encode(_view(case))


def fingerprint(case: Case) -> str:
    """The full hex BLAKE3 digest (derive-key mode) of ``canonical_bytes(case)``."""
    return blake3.blake3(canonical_bytes(case), derive_key_context=_CONTEXT).hexdigest()


def short(digest: str) -> str:
    """The prefix shown to people; the full digest is what gets stored and compared."""
    return digest[:SHORT_LENGTH]
