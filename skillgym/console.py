"""The one place a rich Console is built; rich decides TTY, colour, NO_COLOR and TERM=dumb."""

from __future__ import annotations

import sys

from rich.console import Console


def make_console(*, stderr: bool = False) -> Console:
    """A console on stdout (or stderr); plain text when not a terminal."""
    return Console(file=sys.stderr if stderr else sys.stdout, highlight=False, soft_wrap=True)


def columns(rows: list[list[str]]) -> list[str]:
    """Left-aligned plain-text columns: stable in pipes and easy to grep, unlike box tables."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
