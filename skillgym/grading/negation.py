"""The negation vocabulary and how far a negation reaches; shared by forbidden patterns and skill mentions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

__all__ = (
    "CLAUSE_ENDS",
    "FLIP_VERBS",
    "NEGATORS",
    "NOT_NEGATED",
    "REACH_WORDS",
    "RESTRICTIVE",
    "SENTENCE_END",
    "WINDOW_CHARS",
    "is_negated",
    "negated_after",
    "negator_span",
    "words",
)

# Words and phrases that negate what follows them: "instead of sleep", "never use sleep", "no `sleep` calls".
# Every contraction ending in n't (don't, won't, shouldn't, doesn't, isn't, can't, mustn't ...) negates too.
NEGATORS: Final[tuple[str, ...]] = (
    "not",
    "no",
    "never",
    "nor",
    "cannot",
    "without",
    "avoid",
    "avoids",
    "avoiding",
    "instead of",
    "rather than",
    "unlike",
    "no need for",
    "no need to",
    "no longer",
    "rule out",
    "rules out",
    "ruled out",
    "ruling out",
)
# Verbs of not doing: right after a negation they cancel it ("don't forget to sleep", "do not skip the
# sleep", "cannot avoid using sleep" all mean: sleep). One line per verb, with its forms.
FLIP_VERBS: Final[frozenset[str]] = frozenset(
    word
    for line in (
        "forget forgets forgot forgotten forgetting",
        "skip skips skipped skipping",
        "avoid avoids avoided avoiding",
        "omit omits omitted omitting",
        "neglect neglects neglected neglecting",
        "fail fails failed failing",
        "miss misses missed missing",
        "hesitate hesitates hesitated hesitating",
    )
    for word in line.split()
)
# Words after which not, no, never, nor, cannot or a contraction in n't negates nothing: "it won't hurt to
# sleep", "no doubt tmux-tui is the one", "no better skill than tmux-tui". One line per word, with its
# forms. Other negators keep negating: "instead of just sleeping".
NOT_NEGATED: Final[frozenset[str]] = frozenset(
    word
    for line in (
        "doubt doubts doubted doubting",
        "question questions questioned questioning",
        "better",
        "hurt hurts hurting",
        "harm harms harmed harming",
    )
    for word in line.split()
)
_QUALIFIABLE: Final = frozenset({"not", "no", "never", "nor", "cannot"})  # and the n't contractions
# "Just", "only" and "merely" take the negation away only after a form of "to be": "tmux-tui is not just
# helpful" praises it, while "don't just sleep 5" and "never only sleep" still warn against sleeping.
RESTRICTIVE: Final = frozenset({"just", "only", "merely"})
_TO_BE: Final = frozenset({"is", "are", "was", "were", "be", "been", "it's", "that's", "there's"})
_TO_BE_NOT: Final = frozenset({"isn't", "aren't", "wasn't", "weren't"})
# Marks and words that end a negation's scope inside a sentence: "it is not ready, so sleep 2", "it did
# not start: sleep 2". A colon right after the negator or after a word pointing ahead ("avoid: sleep 5",
# "don't do this: sleep 5", "do not use the following: sleep 5") opens what is negated instead.
CLAUSE_ENDS: Final = frozenset({",", ":", ";", "\u2013", "\u2014", "but", "so", "because"})
_POINTING: Final = frozenset({"this", "these", "that", "those", "following", "below", "here"})
# How many words may sit between a negation and what it negates ("avoid using a fixed sleep": three), and
# how far back, in characters, the window reaches.
REACH_WORDS: Final = 3
WINDOW_CHARS: Final = 50

# A word (letters, digits, ' / -) or a clause-ending mark; other markup (`*_"([{<~) is skipped.
_TOKEN = re.compile(r"[\w'/-]+|[,:;\u2013\u2014]")
# A sentence ends at . ! ? ; followed by space, or at a line break; a window never crosses one.
SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|\n")
_PHRASES: Final = sorted((tuple(p.split()) for p in NEGATORS), key=len, reverse=True)


def words(text: str) -> list[str]:
    """The lowercased words and clause marks of ``text``, quotes trimmed (curly apostrophes made plain)."""
    found = (t.strip("'") for t in _TOKEN.findall(text.replace("\u2019", "'").lower()))
    return [t for t in found if t]


def negator_span(tokens: Sequence[str], index: int) -> int:
    """How many tokens the negator starting at ``tokens[index]`` spans; 0 when none starts there.

    A negator is a word or phrase of ``NEGATORS`` or a contraction in n't; not, no, never, nor, cannot
    and the contractions are none when a word of ``NOT_NEGATED`` follows ("won't hurt", "no doubt"), and
    a negated "to be" is none when a word of ``RESTRICTIVE`` follows ("is not just", "isn't only").
    """
    token = tokens[index]
    plain = token.endswith("n't") or token in _QUALIFIABLE
    following = tokens[index + 1] if index + 1 < len(tokens) else ""
    if plain and following in NOT_NEGATED:
        return 0
    to_be = token in _TO_BE_NOT or (token == "not" and index > 0 and tokens[index - 1] in _TO_BE)
    if to_be and following in RESTRICTIVE:
        return 0
    if token.endswith("n't"):
        return 1
    for phrase in _PHRASES:
        if tuple(tokens[index : index + len(phrase)]) == phrase:
            return len(phrase)
    return 0


def negated_after(tokens: Iterable[str]) -> bool:
    """Whether what comes right after ``tokens`` (the start of its clause) is negated.

    A negator opens a negation that reaches ``REACH_WORDS`` words; a flip verb inside that reach cancels it;
    a clause end closes it. A negator inside the reach starts it again ("no sleep and no screen").
    """
    sequence = list(tokens)
    negated, since, index = False, 0, 0
    while index < len(sequence):
        token = sequence[index]
        live = negated and since <= REACH_WORDS
        if token == ":" and negated and (since == 0 or sequence[index - 1] in _POINTING):
            index += 1  # opens what the negation is about, and is no word of its reach
            continue
        if token in CLAUSE_ENDS or (live and token in FLIP_VERBS):
            negated = False
        elif span := negator_span(sequence, index):
            negated, since = True, 0
            index += span
            continue
        else:
            since += 1
        index += 1
    return negated and since <= REACH_WORDS


def _window(text: str, offset: int) -> str:
    """Up to ``WINDOW_CHARS`` characters before ``offset`` in its sentence, never starting mid-word."""
    start = max(0, offset - WINDOW_CHARS)
    window = text[start:offset]
    ends = list(SENTENCE_END.finditer(window))
    if ends:
        return window[ends[-1].end() :]
    if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "'_-"):
        return re.sub(r"^[\w'/-]*", "", window)  # drop a word cut in two
    return window


def is_negated(text: str, offset: int) -> bool:
    """True when a negation earlier in the sentence still reaches ``offset`` (and no flip cancelled it)."""
    return negated_after(words(_window(text, offset)))
