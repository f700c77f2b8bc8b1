"""Which skills the agent selected: load evidence from the trace first, else unrejected mentions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

from ..trace import Trace
from .negation import is_negated, negated_after, negator_span, words
from .patterns import sentence_after

__all__ = ("FITS", "MISFITS", "evidence_skills", "mentioned_skills", "select_skills", "skill_loaded")

# Said of a skill right after its name, under a negation these reject it: "tmux-tui isn't the right tool",
# "is not needed", "does not apply", "wouldn't help".
FITS: Final[frozenset[str]] = frozenset(
    word
    for line in (
        "right correct best good ideal appropriate relevant suitable suited fit fits",
        "needed necessary required useful helpful help helps apply applies applicable",
    )
    for word in line.split()
)
# Said right after the name, these reject it unless negated: "tui-qa is the wrong skill", "is overkill".
MISFITS: Final[tuple[str, ...]] = (
    "wrong",
    "overkill",
    "unnecessary",
    "irrelevant",
    "inappropriate",
    "unsuitable",
    "unrelated",
    "too specialized",
    "too specialised",
    "out of scope",
)
# Only these (and negations) may stand between the name and the verdict, so the verdict is said of the
# skill: "tui-qa would not be the right skill", but not "tmux-tui notes say recordings are not needed".
_LINKS: Final = frozenset(
    word
    for line in (
        "is are was be would will should could can may might does do seems looks",
        "the a an really quite very just probably clearly still",
    )
    for word in line.split()
)
_MISFIT_PHRASES: Final = sorted((tuple(p.split()) for p in MISFITS), key=len, reverse=True)
# Between the name and what is said of it: closing markup, the word "skill" ("`tmux-tui` skill is ..."), and
# a colon or dash that introduces the verdict ("- tui-qa: not needed").
_LEAD = re.compile(r"^[\s`'\"*)\]]*(?:skill\b)?[\s`'\"*]*[:\u2013\u2014]?")
_TRUSTED: Final = frozenset({"high", "medium"})


def evidence_skills(trace: Trace, candidates: Sequence[str]) -> tuple[str, ...]:
    """Skills the trace shows were loaded with high or medium confidence, in order of first evidence.

    With ``candidates``, only those count: a built-in skill of the agent is not a routing choice.
    """
    wanted = set(candidates)
    found = (e.skill for e in trace.skills if e.confidence in _TRUSTED and (not wanted or e.skill in wanted))
    return tuple(dict.fromkeys(found))


def skill_loaded(expected: str | None, trace: Trace) -> bool | None:
    """Whether the trace shows the case's expected skill loaded (high or medium confidence evidence: a skill
    tool call, a read of its SKILL.md); None for a case that expects no skill.

    Only load evidence counts: an answer that names the skill without loading it did not fire it.
    """
    return None if expected is None else expected in evidence_skills(trace, (expected,))


def _verdict_after(text: str, end: int) -> bool:
    """Whether the words right after a name (ending at ``end``), in its own clause, say it does not fit."""
    after = words(_LEAD.sub("", sentence_after(text, end), count=1))
    index = 0
    while index < len(after):
        misfit = any(tuple(after[index : index + len(p)]) == p for p in _MISFIT_PHRASES)
        if misfit or after[index] in FITS:
            return misfit != negated_after(after[:index])
        if after[index] in _LINKS:
            index += 1
        elif span := negator_span(after, index):
            index += span
        else:
            return False  # the sentence goes on about something else
    return False


def _rejected(text: str, start: int, end: int) -> bool:
    """A mention is a rejection when a negation before it reaches the name, or a verdict right after it
    says the skill does not fit; a flip ("don't forget to load tmux-tui") is no rejection."""
    return is_negated(text, start) or _verdict_after(text, end)


def mentioned_skills(text: str, candidates: Iterable[str]) -> tuple[str, ...]:
    """Candidates named (word-bounded, any case) at least once outside a rejection, by first such mention."""
    first: dict[str, int] = {}
    for name in dict.fromkeys(candidates):
        if not name:
            continue
        word = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.IGNORECASE)
        for match in word.finditer(text):
            if not _rejected(text, match.start(), match.end()):
                first[name] = match.start()
                break
    return tuple(sorted(first, key=first.__getitem__))


def select_skills(trace: Trace, text: str, candidates: Sequence[str]) -> tuple[str, ...]:
    """The skills the agent selected: trace evidence if there is any, else unrejected mentions in ``text``."""
    loaded = evidence_skills(trace, candidates)
    if loaded:
        return loaded
    return mentioned_skills(text, candidates)
