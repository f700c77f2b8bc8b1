"""Argument checks shared by every builder: ids, paths, argv, env, numbers and regex patterns."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeAlias, TypeVar

import msgspec

from ..errors import DefinitionError
from ..model import Pattern
from ..redact import REDACTED, is_secret_key

PatternLike: TypeAlias = str | re.Pattern[str]

_C = TypeVar("_C", bound=str)
_S = TypeVar("_S", bound=msgspec.Struct)

_ID = re.compile(r"[a-z0-9][a-z0-9._-]*")
_ID_RULE = (
    "lowercase letters, digits, '.', '_' and '-', starting with a letter or digit (^[a-z0-9][a-z0-9._-]*$)"
)
# Letters the grader understands, and the re flag each stands for.
_FLAG_LETTERS: tuple[tuple[re.RegexFlag, str], ...] = (
    (re.IGNORECASE, "i"),
    (re.MULTILINE, "m"),
    (re.DOTALL, "s"),
)
# A pattern without any of these characters is plain text, which compiles under any of the flags the
# grader uses (re.I, re.M, re.S): most patterns are words, and compiling each one is what validation cost.
_SYNTAX = re.compile(r"[\\.^$*+?{}\[\]|()]")
_SEPARATOR = re.compile(r"[/\\]")
_DRIVE = re.compile(r"[A-Za-z]:[/\\]")
_TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")


def suggest_id(value: str) -> str:
    """The closest valid id: lowercased, other characters folded into '-', leading punctuation dropped."""
    folded = re.sub(r"[^a-z0-9._-]+", "-", value.strip().lower())
    return folded.lstrip("._-").rstrip("-") or "my-id"


def slug(text: str) -> str:
    """A section name as an id: ``"Expected vs actual"`` -> ``"expected-vs-actual"``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def check_text(
    value: object, *, what: str, case_id: str | None, origin: str, allow_empty: bool = False
) -> str:
    if not isinstance(value, str):
        raise DefinitionError(
            f"{what} must be a string, got {type(value).__name__} {value!r}", case_id=case_id, origin=origin
        )
    if not allow_empty and (not value or value.isspace()):  # blank, without building a stripped copy
        raise DefinitionError(f"{what} is empty; give it some text", case_id=case_id, origin=origin)
    return value


def check_id(value: object, *, what: str, case_id: str | None, origin: str) -> str:
    """An id for a case, step, verifier, condition, preset, skill or rule."""
    text = check_text(value, what=what, case_id=case_id, origin=origin, allow_empty=True)
    if not text:
        raise DefinitionError(
            f"empty {what}: ids are {_ID_RULE}; give one such as 'my-id'", case_id=case_id, origin=origin
        )
    if _ID.fullmatch(text) is None:
        raise DefinitionError(
            f"invalid {what} {text!r}: ids are {_ID_RULE}; use {suggest_id(text)!r}",
            case_id=case_id,
            origin=origin,
        )
    return text


def check_ids(values: Iterable[object], *, what: str, case_id: str | None, origin: str) -> tuple[str, ...]:
    return tuple([check_id(v, what=what, case_id=case_id, origin=origin) for v in values])


def check_relative_path(value: object, *, what: str, case_id: str | None, origin: str) -> str:
    """A path relative to the workspace or suite root: not absolute, and never climbing out with '..'."""
    text = check_text(value, what=what, case_id=case_id, origin=origin)
    parts = _SEPARATOR.split(text)
    drive = _DRIVE.match(text) is not None
    if text.startswith(("/", "\\")) or drive:
        fixed = "/".join(p for p in (parts[1:] if drive else parts) if p)
        raise DefinitionError(
            f"{what} {text!r} is absolute; paths are relative to the workspace or suite root: use {fixed!r}",
            case_id=case_id,
            origin=origin,
        )
    if ".." in parts:
        raise DefinitionError(
            f"{what} {text!r} climbs out with '..'; paths must stay inside the workspace or suite root",
            case_id=case_id,
            origin=origin,
        )
    return text


def check_argv(value: object, *, what: str, case_id: str | None, origin: str) -> tuple[str, ...]:
    if isinstance(value, (str, bytes)):
        raise DefinitionError(
            f"{what} {value!r} must be an argv list, not a shell string: use ['sh', '-c', ...] if you really "
            "need a shell",
            case_id=case_id,
            origin=origin,
        )
    if not isinstance(value, Sequence) or not value:
        raise DefinitionError(
            f"{what} must be a non-empty argv list such as ['make', 'test'], got {value!r}",
            case_id=case_id,
            origin=origin,
        )
    for item in value:
        if not isinstance(item, str) or not item:
            raise DefinitionError(
                f"{what} {list(value)!r} holds {item!r}; every argv item is a non-empty string",
                case_id=case_id,
                origin=origin,
            )
        if "\x00" in item:
            raise DefinitionError(
                f"{what} {list(value)!r} holds {item!r} with a null byte, which no process can be given: "
                "remove it",
                case_id=case_id,
                origin=origin,
            )
    return tuple(value)


def check_env(value: object, *, what: str, case_id: str | None, origin: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise DefinitionError(
            f"{what} must be a mapping of names to strings, got {type(value).__name__}",
            case_id=case_id,
            origin=origin,
        )
    env: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key or "=" in key or "\x00" in key:
            raise DefinitionError(
                f"{what} has an invalid variable name {key!r}; "
                "use a non-empty name without '=' or a null byte",
                case_id=case_id,
                origin=origin,
            )
        if not isinstance(item, str):
            raise DefinitionError(
                f"{what}[{key!r}] must be a string, got {type(item).__name__} {item!r}; "
                "convert it with str()",
                case_id=case_id,
                origin=origin,
            )
        if "\x00" in item:
            shown = REDACTED if is_secret_key(key) else repr(item)  # never a credential on the console
            raise DefinitionError(
                f"{what}[{key!r}] is {shown}, with a null byte, which no process environment can hold: "
                "remove it",
                case_id=case_id,
                origin=origin,
            )
        env[key] = item
    return env


def check_number(
    value: object,
    *,
    what: str,
    case_id: str | None,
    origin: str,
    minimum: float = 0.0,
    inclusive: bool = False,
) -> float:
    """A finite real number above ``minimum`` (or at least it, when ``inclusive``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        number = float(value)
        if number >= minimum if inclusive else number > minimum:
            return number
    bound = f"at least {minimum:g}" if inclusive else f"greater than {minimum:g}"
    raise DefinitionError(f"{what} must be a number {bound}, got {value!r}", case_id=case_id, origin=origin)


def check_int(value: object, *, what: str, case_id: str | None, origin: str, minimum: int = 1) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
        return value
    raise DefinitionError(
        f"{what} must be a whole number of at least {minimum}, got {value!r}", case_id=case_id, origin=origin
    )


def check_choice(
    value: object, choices: tuple[_C, ...], *, what: str, case_id: str | None, origin: str
) -> _C:
    for choice in choices:
        if value == choice:
            return choice
    raise DefinitionError(
        f"unknown {what} {value!r}; use one of {', '.join(repr(c) for c in choices)}",
        case_id=case_id,
        origin=origin,
    )


def check_target(value: object, *, case_id: str | None, origin: str) -> str:
    text = check_text(value, what="custom verifier target", case_id=case_id, origin=origin)
    if _TARGET.fullmatch(text) is None:
        raise DefinitionError(
            f"custom verifier target {text!r} is not 'module:function'; write it like "
            "'evals.checks:screen_is_clean' (a dotted module path, a colon, then the function name)",
            case_id=case_id,
            origin=origin,
        )
    return text


def _check_regex(regex: str, flags: int, *, where: str, case_id: str | None, origin: str) -> None:
    if not regex:
        raise DefinitionError(
            f"empty pattern {where}: it would match any text; give an expression that says what to look for",
            case_id=case_id,
            origin=origin,
        )
    if _SYNTAX.search(regex) is None:  # plain text
        return
    try:
        re.compile(regex, int(flags))  # as an int: re looks up a RegexFlag's value through the enum first
    except re.error as exc:
        raise DefinitionError(
            f"invalid regex {regex!r} {where}: {exc}; "
            "fix the expression or pass re.escape(text) for a literal",
            case_id=case_id,
            origin=origin,
        ) from exc


def to_pattern(value: object, *, where: str, case_id: str | None, origin: str) -> Pattern:
    """A str is a regex searched case-insensitively; a compiled pattern keeps its re.I/re.M/re.S flags."""
    if isinstance(value, str):
        _check_regex(value, re.IGNORECASE, where=where, case_id=case_id, origin=origin)
        return Pattern(regex=value, flags="i")
    if isinstance(value, re.Pattern):
        source = value.pattern
        if not isinstance(source, str):
            raise DefinitionError(
                f"bytes pattern {source!r} {where}: patterns search text, so compile a str pattern",
                case_id=case_id,
                origin=origin,
            )
        _check_regex(source, 0, where=where, case_id=case_id, origin=origin)
        # Inline flags such as (?x) travel inside the expression itself; only the rest must map to letters.
        extra = value.flags & ~re.compile(source).flags
        letters = ""
        for flag, letter in _FLAG_LETTERS:
            if extra & flag:
                letters += letter
                extra &= ~flag
        if extra:
            raise DefinitionError(
                f"unsupported regex flag {re.RegexFlag(extra)!r} on {source!r} {where}: "
                "only re.I, re.M and re.S reach the grader; drop the flag or write it inline",
                case_id=case_id,
                origin=origin,
            )
        return Pattern(regex=source, flags=letters)
    raise DefinitionError(
        f"pattern {where} must be a str (a regex) or a compiled re.Pattern, "
        f"got {type(value).__name__} {value!r}",
        case_id=case_id,
        origin=origin,
    )


def to_patterns(
    values: Iterable[object], *, call: str, where: str, case_id: str | None, origin: str
) -> tuple[Pattern, ...]:
    """Every value as a Pattern; ``call`` names the method in the error when no pattern was given."""
    patterns = tuple([to_pattern(v, where=where, case_id=case_id, origin=origin) for v in values])
    if not patterns:
        raise DefinitionError(f"{call} needs at least one pattern {where}", case_id=case_id, origin=origin)
    return patterns


def check_pattern(value: object, *, where: str, case_id: str | None, origin: str) -> Pattern:
    """A Pattern struct given to a raw escape hatch: known flags and a regex that compiles."""
    if not isinstance(value, Pattern):
        return to_pattern(value, where=where, case_id=case_id, origin=origin)
    if not set(value.flags) <= set("ims"):
        raise DefinitionError(
            f"pattern {value.regex!r} {where} has flags {value.flags!r}; flags are a subset of 'ims'",
            case_id=case_id,
            origin=origin,
        )
    flags = 0
    for flag, letter in _FLAG_LETTERS:
        if letter in value.flags:
            flags |= flag
    _check_regex(value.regex, flags, where=where, case_id=case_id, origin=origin)
    return value


def check_patterns(
    values: Iterable[object], *, where: str, case_id: str | None, origin: str
) -> tuple[Pattern, ...]:
    return tuple([check_pattern(v, where=where, case_id=case_id, origin=origin) for v in values])


def refuse_contradiction(
    found: Sequence[Pattern], other: Sequence[tuple[Pattern, str]], *, subject: str, case_id: str, origin: str
) -> None:
    """Refuse a pattern of ``found`` that ``other`` (``(pattern, origin)`` pairs) has on the other side."""
    if not other:
        return
    others = {p.regex: where for p, where in other}
    for pattern in found:
        if pattern.regex in others:
            raise DefinitionError(
                f"{subject} both requires and forbids {pattern.regex!r} (the other call is at "
                f"{others[pattern.regex]}); it could never hold: keep one of the two",
                case_id=case_id,
                origin=origin,
            )


def stamp(item: _S, origin: str) -> _S:
    """``item`` with ``origin`` filled in, unless it already names one (a raw struct keeps its own)."""
    return item if getattr(item, "origin", "") else msgspec.structs.replace(item, origin=origin)
