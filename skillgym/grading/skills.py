"""Which skills the agent selected: load evidence from the trace first, else unrejected mentions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

from ..trace import Trace
from .patterns import is_negated, sentence_after, sentence_before

__all__ = ("REJECTIONS_AFTER", "evidence_skills", "mentioned_skills", "select_skills")

# Said right after a skill's name, these turn the mention into a rejection of that skill.
REJECTIONS_AFTER: Final[tuple[str, ...]] = (
    "is not the right skill",
    "isn't the right skill",
    "would not be the right skill",
    "wouldn't be the right skill",
    "is the wrong skill",
    "would be the wrong skill",
    "would be too specialized",
    "is too specialized",
    "is not needed",
    "isn't needed",
    "is not necessary",
    "isn't necessary",
    "is not relevant",
    "isn't relevant",
    "does not apply",
    "doesn't apply",
)
_RULE_OUT = re.compile(r"\brul(?:e|ed|es|ing) out\b")
# Between the name and the phrase: closing markup and the word "skill" ("`tmux-tui` skill is not needed").
_LEAD = re.compile(r"^[\s`'\"*)\]]*(?:skill\b)?\s*")
_TRUSTED: Final = frozenset({"high", "medium"})


def evidence_skills(trace: Trace, candidates: Sequence[str]) -> tuple[str, ...]:
    """Skills the trace shows were loaded with high or medium confidence, in order of first evidence.

    With ``candidates``, only those count: a built-in skill of the agent is not a routing choice.
    """
    wanted = set(candidates)
    found = (e.skill for e in trace.skills if e.confidence in _TRUSTED and (not wanted or e.skill in wanted))
    return tuple(dict.fromkeys(found))


def _rejected(text: str, start: int, end: int) -> bool:
    if is_negated(text, start) or _RULE_OUT.search(sentence_before(text, start)):
        return True
    after = _LEAD.sub("", sentence_after(text, end), count=1)
    return after.startswith(REJECTIONS_AFTER)


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
