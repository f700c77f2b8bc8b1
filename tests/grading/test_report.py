"""Tests for skillgym.grading.report: headings, sections, references, findings and reproduction cues."""

from __future__ import annotations

from skillgym.grading.report import (
    evidence_references,
    findings_lines,
    has_command,
    has_numbered_steps,
    has_outcome_statement,
    has_section,
    headings,
)

REPORT = """\
# hello-prompt QA

**Summary:**
Echo works.

## Reproduction steps (2)
1. Start `python3 hello-prompt.py` in tmux.
2. Send `exit` then Enter.

## Findings
- [severity: low] [focus/input] empty input prints an empty echo (evidence: snapshots/empty.txt)
- [severity: medium] prompt missing after resize (see ![shot](shots/a.png))

## Evidence
See bundle/notes.md and https://example.com/x.png.
"""


def test_headings_and_bold_lines() -> None:
    assert [(h.level, h.text) for h in headings(REPORT)] == [
        (1, "hello-prompt QA"),
        (4, "Summary"),
        (2, "Reproduction steps (2)"),
        (2, "Findings"),
        (2, "Evidence"),
    ]


def test_sections_match_whole_words_in_any_case() -> None:
    assert has_section(REPORT, "reproduction steps")
    assert has_section(REPORT, "Summary")
    assert not has_section(REPORT, "Find")
    assert not has_section("Findings are below", "Findings")  # not a heading


def test_evidence_references_skip_urls() -> None:
    assert evidence_references(REPORT) == ["snapshots/empty.txt", "shots/a.png", "bundle/notes.md"]


def test_findings_lines_come_from_the_findings_section() -> None:
    assert [line[:22] for line in findings_lines(REPORT)] == [
        "- [severity: low] [foc",
        "- [severity: medium] p",
    ]
    loose = "Notes\n- high: crash on exit\n- tried resizing\n"
    assert findings_lines(loose) == ["- high: crash on exit"]


def test_reproduction_cues() -> None:
    assert has_numbered_steps(REPORT)
    assert not has_numbered_steps("1. only one step")
    assert has_command(REPORT)
    assert has_command("press Ctrl+C")
    assert not has_command("it broke")
    assert has_outcome_statement("Expected BYE, actual: nothing")
    assert has_outcome_statement("Reproduces consistently (3/3 runs).")
    assert not has_outcome_statement("It broke.")
