"""Case patterns at grading time: compiled once, matched with line numbers and a negation window."""

from __future__ import annotations

import bisect
import re

from ..errors import SkillgymError
from ..model import Data, Pattern
from ..regex import Regex, RegexError, compile_regex
from .negation import SENTENCE_END, is_negated

__all__ = (
    "LineIndex",
    "PatternError",
    "PatternMatch",
    "compile_pattern",
    "find_all",
    "find_first",
    "find_forbidden",
    "is_negated",
    "sentence_after",
    "show_pattern",
)

_SPACES = re.compile(r"\s+")


class PatternError(SkillgymError, ValueError):
    """A pattern cannot be compiled: an unknown flag letter, an invalid expression, or one RE2 cannot run."""


class PatternMatch(Data, frozen=True, kw_only=True):
    """One occurrence: its text, 1-based line, offsets, and whether a negation window covers it.

    When the pattern has capture groups, the first non-empty group is the occurrence and the rest of the
    match is context; this lets a rule say "``sleep 5`` after a separator" and point at ``sleep 5``.
    """

    text: str
    line: int
    start: int
    end: int
    negated: bool = False


def compile_pattern(pattern: Pattern) -> Regex:
    """The compiled regex of ``pattern`` (cached, for RE2); raises PatternError if it cannot compile."""
    try:
        return compile_regex(pattern.regex, pattern.flags)
    except RegexError as exc:
        raise PatternError(f"pattern /{pattern.regex}/ {exc.reason}") from None


def show_pattern(pattern: Pattern) -> str:
    """``/regex/`` as people write it, with any departure from the case-insensitive default spelled out."""
    notes = []
    if "i" not in pattern.flags:
        notes.append("case-sensitive")
    if "m" in pattern.flags:
        notes.append("multiline")
    if "s" in pattern.flags:
        notes.append("dot matches newline")
    suffix = f" ({', '.join(notes)})" if notes else ""
    return f"/{pattern.regex}/{suffix}"


_NEWLINE = re.compile("\n")


class LineIndex:
    """Maps offsets in one text to 1-based line numbers without rescanning the text."""

    __slots__ = ("_breaks", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._breaks: list[int] | None = None  # built on first use: most texts never need a line number

    def line(self, offset: int) -> int:
        if self._breaks is None:
            self._breaks = [m.start() for m in _NEWLINE.finditer(self._text)]
        return bisect.bisect_left(self._breaks, offset) + 1


def sentence_after(text: str, offset: int, *, chars: int = 80) -> str:
    """Up to ``chars`` characters from ``offset`` to the end of the sentence, lowercased, spaces collapsed."""
    window = text[offset : offset + chars]
    end = SENTENCE_END.search(window)
    if end is not None:
        window = window[: end.start()]
    return _SPACES.sub(" ", window.replace("\u2019", "'")).lower()


def find_all(
    pattern: Pattern, text: str, *, negation: bool = False, index: LineIndex | None = None
) -> list[PatternMatch]:
    """Every occurrence of ``pattern`` in ``text``; with ``negation``, each says whether it is negated."""
    lines = index
    found: list[PatternMatch] = []
    for match in compile_pattern(pattern).finditer(text):
        if lines is None:  # most texts never match: no index for them
            lines = LineIndex(text)
        start, end = match.focus()
        found.append(
            PatternMatch(
                text=text[start:end],
                line=lines.line(start),
                start=start,
                end=end,
                negated=negation and is_negated(text, start),
            )
        )
    return found


def find_first(pattern: Pattern, text: str, *, index: LineIndex | None = None) -> PatternMatch | None:
    """The first occurrence of ``pattern`` in ``text`` (as ``find_all(...)[0]``), or None."""
    match = compile_pattern(pattern).search(text)
    if match is None:
        return None
    start, end = match.focus()
    line = (index or LineIndex(text)).line(start)
    return PatternMatch(text=text[start:end], line=line, start=start, end=end)


def find_forbidden(pattern: Pattern, text: str, *, index: LineIndex | None = None) -> list[PatternMatch]:
    """Occurrences of a forbidden pattern in prose; "instead of sleep" comes back with ``negated=True``."""
    return find_all(pattern, text, negation=True, index=index)
