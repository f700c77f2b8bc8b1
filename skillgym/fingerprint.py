"""BLAKE3 fingerprints of compiled cases: stable across processes, blind to cosmetic fields."""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import Any, Union, get_args, get_origin

import blake3
import msgspec

from .model import Case, DogfoodCase, ExecutionCase, PromptCase
from .redact import REDACTED, json_forms

# Changing the context (or the excluded fields) changes every fingerprint: bump the version when you do.
_CONTEXT = "skillgym 2026-11 case fingerprint v1"
# Struct fields that never change what the agent is asked or how it is graded. ``conditions`` is excluded
# because a trial runs under one condition: adding a condition to a case must not invalidate the others;
# ``token_budget`` is a cost guardrail beside grading, so tuning it must not mark snapshots stale; ``trials``
# says how often a case runs, not what it asks.
EXCLUDED_FIELDS = frozenset(
    {
        "origin",
        "origins",
        "description",
        "tags",
        "category",
        "fingerprint",
        "conditions",
        "token_budget",
        "trials",
    }
)
# Fields added after fingerprints were first stored: hashed only when set (not None, not empty), so that
# every case that does not use one keeps the fingerprint its snapshots and cassettes were stored under.
# ``rubric`` and ``grader_notes`` are always hashed in prompt cases, which held them from the start.
HASHED_WHEN_SET = frozenset({"sandbox", "judged", "rubric", "grader_notes"})
_ALWAYS_HASHED: dict[type[msgspec.Struct], frozenset[str]] = {
    PromptCase: frozenset({"rubric", "grader_notes"})
}
SHORT_LENGTH = 12

# Struct fields are sorted like dict keys, so the bytes are the sorted JSON of the case without the
# excluded fields, whichever of the two paths below produced them.
_encoder = msgspec.json.Encoder(order="sorted")


# Fast path: each model Struct has a graded view, the same Struct without the excluded fields. A case goes
# through MessagePack into its view, and msgspec drops the excluded fields while decoding, in C. Every field
# that holds no Struct is typed Any in the view, so its value comes back as encoded and is never converted
# (an int stays an int; the user's own mappings keep every key, even one called "description").
_views: dict[type[msgspec.Struct], type[msgspec.Struct]] = {}


def _view(cls: type[msgspec.Struct], skip: frozenset[str] = EXCLUDED_FIELDS) -> type[msgspec.Struct]:
    view = _views.get(cls) if skip is EXCLUDED_FIELDS else None
    if view is None:
        config = cls.__struct_config__
        fields = [f for f in msgspec.structs.fields(cls) if f.name not in skip]
        view = msgspec.defstruct(
            f"{cls.__name__}View",
            [(f.name, _view_type(f.type)) for f in fields],
            rename={f.name: f.encode_name for f in fields},
            tag=config.tag,
            tag_field=config.tag_field,
            gc=False,
        )
        if skip is EXCLUDED_FIELDS:
            _views[cls] = view
    return view


def _view_type(annotation: Any) -> Any:
    """``annotation`` with every Struct swapped for its view; Any where no Struct can occur."""
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return _view(annotation)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Union or origin is types.UnionType:
        members = [_view_type(a) if a is not type(None) else a for a in args]
        if all(m is Any or m is type(None) for m in members):
            return Any
        return Union[tuple(members)]  # noqa: UP007 - built from a runtime tuple of types
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _view_type(args[0])
        return Any if item is Any else tuple[item, ...]  # type: ignore[valid-type]
    return Any


_CASE_CLASSES = (PromptCase, ExecutionCase, DogfoodCase)
_to_msgpack = msgspec.msgpack.Encoder()
# One decoder per set of unset late fields: each case class's view leaves out those it may leave out.
_decoders: dict[frozenset[str], msgspec.msgpack.Decoder[Any]] = {}


def _decoder(unset: frozenset[str]) -> msgspec.msgpack.Decoder[Any]:
    decoder = _decoders.get(unset)
    if decoder is None:
        views = []
        for cls in _CASE_CLASSES:
            skip = unset - _ALWAYS_HASHED.get(cls, frozenset())
            views.append(_view(cls, EXCLUDED_FIELDS | skip) if skip else _view(cls))
        decoder = _decoders[unset] = msgspec.msgpack.Decoder(Union[tuple(views)])  # noqa: UP007
    return decoder


def _unset(value: object) -> bool:
    return value is None or (type(value) in (str, tuple, list) and not value)


# Struct fields that hold the user's own mappings: their keys are data, never stripped.
_USER_DATA = frozenset({"env", "config"})


def _strip(data: dict[str, Any], always: frozenset[str] = frozenset()) -> dict[str, Any]:
    # Slow path, for a case holding something other than what the model declares (a hand-built Struct
    # with a str where a Pattern belongs): works on msgspec.to_builtins output; every dict below a Struct
    # field is a Struct's except the user's own mappings.
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in EXCLUDED_FIELDS or (key in HASHED_WHEN_SET and _unset(value) and key not in always):
            continue
        kind = type(value)
        if kind is dict and key not in _USER_DATA:
            value = _strip(value)
        elif (kind is tuple or kind is list) and value and type(value[0]) is dict:
            value = [_strip(item) for item in value]
        out[key] = value
    return out


def canonical_bytes(case: Case, *, secrets: Iterable[str] = ()) -> bytes:
    """The deterministic encoding the fingerprint is taken over (useful to explain a change).

    Each of ``secrets`` (the values marked with ``skillgym.secret()``) stands there as a placeholder: a
    stored fingerprint cannot confirm a guessed secret, and rotating a credential leaves it as it was.
    """
    encoded = _canonical(case)
    if secrets:
        for form in json_forms(secrets):
            encoded = encoded.replace(form, REDACTED.encode())
    return encoded


def _canonical(case: Case) -> bytes:
    unset = frozenset(f for f in HASHED_WHEN_SET if _unset(getattr(case, f, None)))
    try:
        view = _decoder(unset).decode(_to_msgpack.encode(case))
    except (msgspec.MsgspecError, OverflowError):  # not shaped like the model, or an int beyond 64 bits
        always = _ALWAYS_HASHED.get(type(case), frozenset())
        return _encoder.encode(_strip(msgspec.to_builtins(case), always))
    return _encoder.encode(view)


def fingerprint(case: Case, *, secrets: Iterable[str] = ()) -> str:
    """The full hex BLAKE3 digest (derive-key mode) of ``canonical_bytes(case, secrets=secrets)``."""
    return blake3.blake3(canonical_bytes(case, secrets=secrets), derive_key_context=_CONTEXT).hexdigest()


def short(digest: str) -> str:
    """The prefix shown to people; the full digest is what gets stored and compared."""
    return digest[:SHORT_LENGTH]
