"""Reading a dogfood report: headings, sections, evidence references, findings lines, reproduction cues."""

from __future__ import annotations

import re
from typing import Final

from ..model import Data

__all__ = (
    "Heading",
    "evidence_references",
    "findings_lines",
    "has_command",
    "has_numbered_steps",
    "has_outcome_statement",
    "has_section",
    "headings",
)

_HASH_HEADING = re.compile(r"^\s{0,3}(#{1,3})\s+(.+?)\s*#*\s*$")
_BOLD_LINE = re.compile(r"^\s*(?:\*\*|__)(.+?)(?:\*\*|__)\s*:?\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+\S", re.MULTILINE)
# Files a report points at as evidence: a relative or absolute path with an evidence extension. URLs are
# left out: they are not files in the bundle.
EVIDENCE_EXTENSIONS: Final = (
    "png",
    "svg",
    "jpg",
    "jpeg",
    "gif",
    "webp",
    "html",
    "cast",
    "webm",
    "mp4",
    "json",
    "jsonl",
    "txt",
    "log",
    "md",
)
_REFERENCE = re.compile(
    r"(?<![\w/.:-])((?:\.{0,2}/)?[\w.-]+(?:/[\w.-]+)*\.(?:" + "|".join(EVIDENCE_EXTENSIONS) + r"))(?![\w/-])",
    re.IGNORECASE,
)
_FINDINGS_HEADING = re.compile(r"\b(?:findings?|issues?|bugs?|defects?|problems?)\b", re.IGNORECASE)
_SEVERITY = re.compile(r"\b(?:critical|high|medium|low|severity|sev[ -]?[0-4]|p[0-4])\b", re.IGNORECASE)
_COMMAND = re.compile(
    r"`[^`\n]+`|^```|^\s*\$\s+\S|\b(?:send-keys|tmux|capture-pane)\b|\b(?:Enter|Escape|Tab|Ctrl[-+]\w|C-[a-z])\b"
    r"|<(?:enter|esc|tab|ctrl-\w|c-\w)>",
    re.MULTILINE,
)
_EXPECTED = re.compile(r"\bexpected\b", re.IGNORECASE)
_ACTUAL = re.compile(r"\bactual(?:ly)?\b", re.IGNORECASE)
_CONSISTENCY = re.compile(
    r"\b(?:reproduc\w*\s+(?:consistently|reliably|every\s+time|intermittently|always|\d+\s*/\s*\d+)"
    r"|consistent(?:ly)?|intermittent(?:ly)?|every\s+time|\d+\s*(?:/|out\s+of)\s*\d+\s+(?:runs|attempts|tries))\b",
    re.IGNORECASE,
)


class Heading(Data, frozen=True, kw_only=True):
    """A heading line: ``#``..``###`` (level 1-3) or a bold-only line (level 4), its text and 0-based line."""

    level: int
    text: str
    line: int


def headings(text: str) -> list[Heading]:
    found: list[Heading] = []
    for number, line in enumerate(text.splitlines()):
        if (match := _HASH_HEADING.match(line)) is not None:
            found.append(
                Heading(level=len(match.group(1)), text=match.group(2).rstrip(":").strip(), line=number)
            )
        elif (match := _BOLD_LINE.match(line)) is not None:
            found.append(Heading(level=4, text=match.group(1).rstrip(":").strip(), line=number))
    return found


def has_section(text: str, name: str) -> bool:
    """Whether a heading names ``name``: any case, whole words ("## Findings (3)" has "Findings")."""
    wanted = re.compile(rf"(?<!\w){re.escape(name.strip())}(?!\w)", re.IGNORECASE)
    return any(wanted.search(h.text) for h in headings(text))


def _section_lines(text: str, heading: Heading, all_headings: list[Heading]) -> list[str]:
    lines = text.splitlines()
    end = len(lines)
    for other in all_headings:
        if other.line > heading.line and other.level <= heading.level:
            end = other.line
            break
    return lines[heading.line + 1 : end]


def findings_lines(text: str) -> list[str]:
    """List items under a Findings/Issues/Bugs heading; without one, list items that name a severity."""
    marks = headings(text)
    sections = [h for h in marks if _FINDINGS_HEADING.search(h.text)]
    if sections:
        lines = [line for h in sections for line in _section_lines(text, h, marks)]
        return [line.strip() for line in lines if _LIST_ITEM.match(line)]
    return [line.strip() for line in text.splitlines() if _LIST_ITEM.match(line) and _SEVERITY.search(line)]


def evidence_references(text: str) -> list[str]:
    """Paths the report names with an evidence extension, in order, without duplicates."""
    return list(dict.fromkeys(m.group(1) for m in _REFERENCE.finditer(text)))


def has_numbered_steps(text: str) -> bool:
    return len(_NUMBERED.findall(text)) >= 2


def has_command(text: str) -> bool:
    """A concrete command or key sequence: a code span or block, a ``$`` line, tmux keys, key names."""
    return _COMMAND.search(text) is not None


def has_outcome_statement(text: str) -> bool:
    """Expected vs actual, or how consistently it reproduces."""
    both = _EXPECTED.search(text) is not None and _ACTUAL.search(text) is not None
    return both or _CONSISTENCY.search(text) is not None
