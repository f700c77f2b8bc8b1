"""Case patterns on RE2: Python's regex syntax translated, matched in time linear in the text.

Agent output is untrusted and suite patterns are written by people, so a pattern such as ``(a+)+$`` must
not be able to hang grading: RE2 guarantees a bound no backtracking engine can. This module owns the
difference between the two. What Python writes differently is translated (``\\Z``, ``\\uXXXX``,
``\\N{...}``, and ``$``, which in Python also matches before a final newline); what RE2 cannot do at all
(backreferences, lookaround, atomic groups, possessive repeats, conditionals, verbose mode, repeat counts
over 1000) is refused with an error that names the construct and how to write it instead.

Matching works on the text's UTF-8 bytes (RE2's own encoding) and reports offsets in characters. A match
resumes where its occurrence (its first non-empty group) ends, so context a pattern matches around an
occurrence, such as ``(?:^|[^\\w-])(tmux)(?:[^\\w-]|$)``, may be shared with the next one: what lookaround
gives in Python.
"""

from __future__ import annotations

import bisect
import functools
import unicodedata
from collections.abc import Iterator
from typing import Any, Final

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from .errors import SkillgymError

__all__ = ("Match", "Regex", "RegexError", "compile_regex")

FLAG_LETTERS: Final = "ims"
# RE2's own limit on {n,m}: larger counts are refused when the pattern compiles.
_MAX_REPEAT: Final = 1000

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every refused pattern on stderr


class RegexError(SkillgymError, ValueError):
    """A pattern RE2 cannot run: ``reason`` says what in it and how to write it instead."""

    def __init__(self, regex: str, reason: str) -> None:
        super().__init__(reason)
        self.regex = regex
        self.reason = reason


def _unsupported(regex: str, construct: str, instead: str) -> RegexError:
    return RegexError(
        regex,
        f"uses {construct}, which the linear-time matcher (RE2) does not support; {instead}",
    )


_LOOKAROUND_HINT = (
    "match the context instead and mark the occurrence with a group, for example "
    r"'(?:^|[^\w-])(word)(?:[^\w-]|$)' for '(?<![\w-])word(?![\w-])'"
)
_GROUP_OPENERS: Final = (
    ("(?=", "a lookahead '(?=...)'", _LOOKAROUND_HINT),
    ("(?!", "a negative lookahead '(?!...)'", _LOOKAROUND_HINT),
    ("(?<=", "a lookbehind '(?<=...)'", _LOOKAROUND_HINT),
    ("(?<!", "a negative lookbehind '(?<!...)'", _LOOKAROUND_HINT),
    ("(?P=", "a named backreference '(?P=name)'", "match the repeated text explicitly"),
    ("(?>", "an atomic group '(?>...)'", "use a plain group '(?:...)': RE2 never backtracks"),
    ("(?(", "a conditional group '(?(id)yes|no)'", "write both alternatives with '|'"),
)


def _translate(regex: str, flags: str) -> str:
    """``regex`` in RE2's syntax with Python's meaning; raises RegexError for what RE2 lacks."""
    out: list[str] = []
    multiline = "m" in flags or _has_inline_multiline(regex)
    in_class = False
    i, n = 0, len(regex)
    while i < n:
        char = regex[i]
        if char == "\\":
            piece, i = _escape(regex, i, in_class)
            out.append(piece)
            continue
        if in_class:
            if char == "]" and not _class_just_opened(regex, i):
                in_class = False
            elif char == "[" and regex.startswith("[:", i):  # a POSIX class such as [:alpha:]
                end = regex.find(":]", i + 2)
                if end != -1:
                    out.append(regex[i : end + 2])
                    i = end + 2
                    continue
            out.append(char)
            i += 1
            continue
        if char == "[":
            in_class = True
        elif char == "(":
            _check_group(regex, i)
            if regex.startswith("(?#", i):  # a comment: Python skips it, RE2 cannot read it
                end = regex.find(")", i)
                i = n if end == -1 else end + 1
                continue
        elif char in "*+?}" and regex.startswith("+", i + 1):
            plain = f"use the plain repeat '{char}': RE2 never backtracks"
            raise _unsupported(regex, f"a possessive repeat '{char}+'", plain)
        elif char == "$" and not multiline:
            out.append(r"(?:\n?\z)")  # Python's $ also matches just before a final newline
            i += 1
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _class_just_opened(regex: str, i: int) -> bool:
    """Whether the ``]`` at ``i`` is the first character of its class (``[]a]``, ``[^]a]``): a literal."""
    before = regex[:i]
    return before.endswith("[") or (before.endswith("[^") and not before.endswith("\\[^"))


def _escape(regex: str, i: int, in_class: bool) -> tuple[str, int]:
    """The escape at ``i`` in RE2's spelling, and the index after it."""
    if i + 1 >= len(regex):
        raise RegexError(regex, "ends with a lone backslash; escape it as '\\\\'")
    letter = regex[i + 1]
    if letter == "Z":
        return r"\z", i + 2
    if letter in "uU":
        width = 4 if letter == "u" else 8
        digits = regex[i + 2 : i + 2 + width]
        if len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
            raise RegexError(regex, f"has '\\{letter}' without {width} hex digits after it")
        return f"\\x{{{digits}}}", i + 2 + width
    if letter == "N" and regex.startswith("{", i + 2):
        end = regex.find("}", i + 3)
        name = regex[i + 3 : end] if end != -1 else ""
        try:
            found = unicodedata.lookup(name)
        except KeyError:
            raise RegexError(regex, f"has '\\N{{{name}}}', which names no Unicode character") from None
        return re2.escape(found), end + 1
    if letter in _UNICODE_CLASSES:
        return _shorthand(regex, letter, in_class), i + 2
    if letter.isdigit() and letter != "0" and not in_class:
        raise _unsupported(regex, f"a backreference '\\{letter}'", "match the repeated text explicitly")
    if letter == "g" and regex.startswith("<", i + 2):
        raise _unsupported(regex, "a backreference '\\g<...>'", "match the repeated text explicitly")
    return regex[i : i + 2], i + 2


# Python's shorthand classes are Unicode-aware, RE2's ASCII: each is spelled out with Unicode classes.
# Python's \s is str.isspace(): ASCII whitespace with \v, the separators \x1c-\x1f, \x85 and \p{Z}.
_SPACE = r"\t\n\v\f\r \x{1c}-\x{1f}\x{85}\p{Z}"
_UNICODE_CLASSES: Final = {
    "w": (r"\pL\pN_", False),
    "W": (r"\pL\pN_", True),
    "d": (r"\p{Nd}", False),
    "D": (r"\p{Nd}", True),
    "s": (_SPACE, False),
    "S": (_SPACE, True),
}


def _shorthand(regex: str, letter: str, in_class: bool) -> str:
    members, negated = _UNICODE_CLASSES[letter]
    if not in_class:
        return f"[{'^' if negated else ''}{members}]"
    if not negated:
        return members
    if letter == "D":
        return r"\P{Nd}"
    raise _unsupported(
        regex,
        f"'\\{letter}' inside a character class",
        f"write it as an alternative, for example '(?:\\{letter}|[...])'",
    )


def _check_group(regex: str, i: int) -> None:
    for opener, construct, instead in _GROUP_OPENERS:
        if regex.startswith(opener, i):
            raise _unsupported(regex, construct, instead)
    if regex.startswith("(?", i):
        letters = _inline_letters(regex, i)
        if "x" in letters:
            raise _unsupported(regex, "verbose mode '(?x)'", "write it without spaces and comments")
        if letters & set("aLu"):
            raise _unsupported(
                regex, f"the inline flag '(?{''.join(sorted(letters & set('aLu')))})'", "drop it"
            )


def _inline_letters(regex: str, i: int) -> set[str]:
    """The flag letters of ``(?imsx)`` or ``(?i-s:...)`` at ``i`` (empty for other groups)."""
    j = i + 2
    letters: set[str] = set()
    while j < len(regex) and (regex[j].isalpha() or regex[j] == "-"):
        letters.add(regex[j])
        j += 1
    if j < len(regex) and regex[j] in "):" and "P" not in letters:
        return letters - {"-"}
    return set()


def _has_inline_multiline(regex: str) -> bool:
    start = regex.find("(?")
    while start != -1:
        if "m" in _inline_letters(regex, start):
            return True
        start = regex.find("(?", start + 2)
    return False


def _reason(exc: Exception) -> str:
    message = exc.args[0] if exc.args else str(exc)
    text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
    if text.startswith("invalid repetition size"):
        return f"has a repeat count over {_MAX_REPEAT} (RE2's limit); use a smaller count or '+'"
    if text.startswith("pattern too large"):
        return "is too large for the matcher's memory bound; split it into several patterns"
    return f"does not compile: {text}; fix the expression"


class Match:
    """One match: group spans in characters of the searched text, as ``re.Match`` gives them."""

    __slots__ = ("_spans", "re", "string")

    def __init__(self, regex: Regex, string: str, spans: list[tuple[int, int]]) -> None:
        self.re, self.string, self._spans = regex, string, spans

    def _index(self, group: int | str) -> int:
        return self.re.groupindex[group] if isinstance(group, str) else group

    def span(self, group: int | str = 0) -> tuple[int, int]:
        return self._spans[self._index(group)]

    def start(self, group: int | str = 0) -> int:
        return self.span(group)[0]

    def end(self, group: int | str = 0) -> int:
        return self.span(group)[1]

    def group(self, group: int | str = 0) -> str | None:
        start, end = self.span(group)
        return None if start == -1 else self.string[start:end]

    def groups(self) -> tuple[str | None, ...]:
        return tuple(self.group(g) for g in range(1, len(self._spans)))

    def focus(self) -> tuple[int, int]:
        """The occurrence: the first non-empty group's span, else the whole match."""
        for start, end in self._spans[1:]:
            if start != -1 and end > start:
                return start, end
        return self._spans[0]


class Regex:
    """A compiled case pattern: ``search`` and ``finditer`` as ``re.Pattern`` has them, in linear time."""

    __slots__ = ("_compiled", "groupindex", "groups", "pattern")

    def __init__(self, pattern: str, compiled: Any) -> None:
        self.pattern = pattern
        self._compiled = compiled
        self.groups: int = compiled.groups
        self.groupindex: dict[str, int] = dict(compiled.groupindex)

    def search(self, text: str) -> Match | None:
        return next(self.finditer(text), None)

    def finditer(self, text: str) -> Iterator[Match]:
        """Every match, each resuming where the previous occurrence ended (see the module docstring)."""
        data = text.encode("utf-8", "surrogatepass")
        chars = None if len(data) == len(text) else _Offsets(data)
        search, groups = self._compiled.search, range(self.groups + 1)
        pos = 0
        while pos <= len(data):
            found = search(data, pos)  # bytes in, byte offsets out: the text is encoded once
            if found is None:
                return
            spans = [found.span(g) for g in groups]
            yield Match(self, text, spans if chars is None else chars.spans(spans))
            resume = _focus_end(spans)
            pos = resume if resume > pos else _next_char(data, pos)


def _focus_end(spans: list[tuple[int, int]]) -> int:
    for start, end in spans[1:]:
        if start != -1 and end > start:
            return end
    return spans[0][1]


def _next_char(data: bytes, offset: int) -> int:
    """The byte offset of the character after the one that starts at ``offset``."""
    offset += 1
    while offset < len(data) and data[offset] & 0xC0 == 0x80:  # a UTF-8 continuation byte
        offset += 1
    return offset


class _Offsets:
    """Byte offsets in a text's UTF-8 encoding as character offsets, each byte decoded about once."""

    __slots__ = ("_bytes", "_chars", "_data")

    def __init__(self, data: bytes) -> None:
        self._data = data
        # Offsets converted so far, ascending: a later one is counted from the nearest before it.
        self._bytes, self._chars = [0], [0]

    def char(self, offset: int) -> int:
        at = bisect.bisect_right(self._bytes, offset) - 1
        byte, char = self._bytes[at], self._chars[at]
        if byte == offset:
            return char
        char += len(self._data[byte:offset].decode("utf-8", "surrogatepass"))
        if at == len(self._bytes) - 1:
            self._bytes.append(offset)
            self._chars.append(char)
        return char

    def spans(self, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        offsets = {o: self.char(o) for o in sorted({o for span in spans for o in span if o != -1})}
        return [span if span[0] == -1 else (offsets[span[0]], offsets[span[1]]) for span in spans]


@functools.lru_cache(maxsize=4096)
def compile_regex(regex: str, flags: str = "") -> Regex:
    """``regex`` (Python syntax) with ``flags`` (a subset of "ims"), compiled for RE2; cached.

    Raises RegexError naming what RE2 cannot run. ``\\w``, ``\\d``, ``\\s`` and their negations keep
    Python's Unicode meaning; ``\\b`` and ``\\B`` are RE2's, which look at ASCII word characters only.
    """
    unknown = set(flags) - set(FLAG_LETTERS)
    if unknown:
        word = "flag" if len(unknown) == 1 else "flags"
        letters = "".join(sorted(unknown))
        raise RegexError(regex, f"has unknown {word} {letters!r}; flags are a subset of 'ims'")
    prefix = f"(?{''.join(sorted(flags))})" if flags else ""
    translated = prefix + _translate(regex, flags)
    try:
        return Regex(regex, re2.compile(translated, _OPTIONS))
    except re2.error as exc:
        raise RegexError(regex, _reason(exc)) from None
