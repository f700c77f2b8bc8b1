"""The stub judge (``--judge stub``): a deterministic word-matching stand-in for trying the plumbing.

It is not a grader: it answers in the judge's JSON format from word overlap alone, so a suite's judged
checks, the cache, judge.json and the reports can be exercised offline and free. A check passes when
every content word of the expectation (words of four letters or more, less common ones such as "that")
occurs in the material, quoting the line that holds most of them; a rubric is rated by the share of its
words found; of two answers, the one holding more of the task's words wins (equal: a tie).
"""

from __future__ import annotations

import json
import re
from typing import Final

from .questions import Question

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]{3,}")
_COMMON: Final = frozenset(
    """
    that this with from have than then them they their there these those what when where which while
    will would should could into onto about after before every each also just only very more most some
    such does done make made uses used using answer response output agent task file files says said name
    names named explains explain gives give shows show mentions mention states state describes describe
    includes include contains contain tells tell lists list notes note points point rather instead
    """.split()  # noqa: SIM905 - a word list reads better as words
)


def content_words(text: str) -> set[str]:
    """The words that carry meaning in ``text``, lower-cased, cut to a five-letter stem."""
    return {w.lower()[:5] for w in _WORD.findall(text) if w.lower() not in _COMMON}


def stub_answer(question: Question) -> str:
    """The stub judge's raw answer to ``question``: JSON, as a real judge is asked to give."""
    if question.kind == "pairwise":
        wanted = content_words(question.task)
        first = len(wanted & content_words(question.first))
        second = len(wanted & content_words(question.second))
        winner = "A" if first > second else "B" if second > first else "tie"
        reason = f"A holds {first} of the task's {len(wanted)} words, B holds {second}"
        return json.dumps({"winner": winner, "reason": reason, "confidence": 0.5})
    wanted = content_words(question.expectation)
    found = wanted & content_words(question.material)
    evidence = _best_line(question.material, wanted)
    if question.kind == "rubric":
        points = question.points
        score = round(points * len(found) / len(wanted)) if wanted else 0
        reason = f"{len(found)} of the rubric's {len(wanted)} words occur in the material"
        return json.dumps(
            {"score": score, "evidence": [evidence] if evidence else [], "reason": reason, "confidence": 0.5}
        )
    passed = bool(wanted) and found == wanted and bool(evidence)
    missing = sorted(wanted - found)
    reason = (
        "every word of the expectation occurs in the material" if passed else f"missing: {', '.join(missing)}"
    )
    return json.dumps(
        {
            "verdict": "pass" if passed else "fail",
            "evidence": [evidence] if evidence else [],
            "reason": reason,
            "confidence": 0.5,
        }
    )


def _best_line(material: str, wanted: set[str]) -> str:
    """The material line holding most of ``wanted`` (the first such), stripped; "" when none holds any."""
    best, hits = "", 0
    for line in material.splitlines():
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        count = len(wanted & content_words(text))
        if count > hits:
            best, hits = text, count
    return best[:300]
