"""The default words of the sugar: which shell commands and which report text count as each step."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import Final, NamedTuple

from ..model import Pattern


class Phrase(NamedTuple):
    """One sugar step: its id stem, a description and the patterns that recognise it.

    ``{name}`` placeholders in ``patterns`` are filled with ``re.escape`` of the user's value (the user's
    text is literal); in ``description`` they are filled with the value as given.
    """

    id: str
    description: str
    patterns: tuple[str, ...]
    flags: str = "i"
    section: str | None = None


# Workflow patterns are searched in the shell commands the agent actually ran, one command at a time: they
# describe driving a terminal program with tmux. Every sugar method takes ``patterns=`` to override them.
_TMUX_SEND = r"\btmux\b.*\bsend-keys\b.*"
# A command that waits on observable output: a capture-pane poll or a wait helper (wait-for, wait_until, ...),
# before or after the text it waits for (RE2 has no lookahead to say "anywhere in the command").
_WAITS_ON_OUTPUT = r"(?:\bcapture-pane\b|\bwait[-_]?(?:for|until)\w*)"

WORKFLOW: Final[Mapping[str, Phrase]] = MappingProxyType(
    {
        "create_session": Phrase(
            "create-session",
            "start the program in a new tmux session",
            (r"\btmux\b.*\bnew(?:-session)?(?:[^\w-]|$)",),
        ),
        "input": Phrase("input", "send {text!r} to the program", (_TMUX_SEND + "{text}",)),
        "run": Phrase("run", "run the command {text!r} in the session", (_TMUX_SEND + "{text}",)),
        "wait_for": Phrase(
            "wait-for",
            "wait until the screen shows {text!r} (no blind sleep)",
            (f"(?:{_WAITS_ON_OUTPUT}.*{{text}}|{{text}}.*{_WAITS_ON_OUTPUT})",),
        ),
        "snapshot": Phrase("snapshot", "capture the pane's text", (r"\bcapture-pane\b",)),
        "screenshot": Phrase("screenshot", "save a screenshot of the screen", (r"\.(?:svg|png|html)\b",)),
        "resize": Phrase(
            "resize",
            "resize the terminal to {cols}x{rows}",
            (r"\bresize-(?:window|pane)\b(?:.*\b{cols}\b.*\b{rows}\b|.*\b{rows}\b.*\b{cols}\b)",),
        ),
        "destroy": Phrase("destroy", "end the tmux session", (r"\bkill-(?:session|server)\b",)),
    }
)

# Report patterns are searched in the dogfood report; ``section`` is the heading the text belongs under.
REPORT: Final[Mapping[str, Phrase]] = MappingProxyType(
    {
        "title": Phrase("title", "a title heading", (r"^\s*#\s+\S",), flags="im"),
        "reproduction_steps": Phrase(
            "reproduction-steps",
            "numbered steps that reproduce the behaviour",
            (r"^\s*1[.)]\s",),
            flags="im",
            section="Reproduction steps",
        ),
        "findings_with_severity": Phrase(
            "findings",
            "each finding with its severity",
            (r"\b(?:critical|high|medium|low)\b",),
            section="Findings",
        ),
        "evidence_references": Phrase(
            "evidence",
            "references to evidence files in the bundle",
            (r"\S+\.(?:png|svg|cast|txt|json|md|log)\b",),
            section="Evidence",
        ),
    }
)

_PLACEHOLDER = re.compile(r"\{(\w+)(!r)?\}")
# re.escape's translation as a table of every ASCII character (re.escape escapes no other): re.escape's own
# table holds only the special characters, and str.translate pays a failed lookup for every other one.
_ESCAPES = [re.escape(chr(code)) for code in range(128)]


class _Placeholder(NamedTuple):
    before: str  # the literal text before it
    name: str
    as_repr: bool
    source: str  # as written, kept when no value has its name (a regex quantifier such as {2})


@lru_cache(maxsize=256)
def _parse(template: str) -> tuple[tuple[_Placeholder, ...], str]:
    """``template``'s placeholders and the text after the last one (parsed once per template)."""
    found: list[_Placeholder] = []
    end = 0
    for match in _PLACEHOLDER.finditer(template):
        found.append(_Placeholder(template[end : match.start()], match[1], bool(match[2]), match[0]))
        end = match.end()
    return tuple(found), template[end:]


def _literal(text: str) -> str:
    """``re.escape(text)``: a regex that matches ``text`` itself."""
    return text.translate(_ESCAPES)


def _fill(template: str, values: Mapping[str, object], *, escape: bool) -> str:
    placeholders, tail = _parse(template)
    if not placeholders:
        return template
    out: list[str] = []
    for before, name, as_repr, source in placeholders:
        out.append(before)
        if name not in values:
            out.append(source)
            continue
        value = values[name]
        if escape:
            out.append(_literal(str(value)))
        else:
            out.append(repr(value) if as_repr else str(value))
    out.append(tail)
    return "".join(out)


def filled(phrase: Phrase, values: Mapping[str, object]) -> tuple[str, tuple[Pattern, ...]]:
    """``describe`` and ``patterns`` of the phrase in one call (workflow sugar wants both)."""
    if not values:  # every placeholder stays as written
        return phrase.description, _as_written(phrase)
    flags = phrase.flags
    found = tuple([Pattern(regex=_fill(p, values, escape=True), flags=flags) for p in phrase.patterns])
    return _fill(phrase.description, values, escape=False), found


def describe(phrase: Phrase, **values: object) -> str:
    """The phrase's description with the user's values filled in."""
    if not values:
        return phrase.description
    return _fill(phrase.description, values, escape=False)


def patterns(phrase: Phrase, **values: object) -> tuple[Pattern, ...]:
    """The phrase's default patterns with the user's values filled in literally."""
    return filled(phrase, values)[1]


def _as_written(phrase: Phrase) -> tuple[Pattern, ...]:
    known = _AS_WRITTEN.get(phrase)
    if known is None:
        known = tuple([Pattern(regex=p, flags=phrase.flags) for p in phrase.patterns])
    return known


# The built-in phrases' patterns as written, built once: Patterns are frozen, so every case shares them.
_AS_WRITTEN: dict[Phrase, tuple[Pattern, ...]] = {}
_AS_WRITTEN.update((phrase, _as_written(phrase)) for phrase in (*WORKFLOW.values(), *REPORT.values()))
