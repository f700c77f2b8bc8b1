"""Markdown pieces every report page shares: rates, intervals, p-values, tables and their notes."""

from __future__ import annotations

from ..score_intervals import SMALLEST_CHECKED
from ..stats import Interval


def pct(value: float | None) -> str:
    """A rate as a whole percentage; "-" for none."""
    return "-" if value is None else f"{100 * value:.0f}%"


def rate_interval(interval: Interval | None) -> str:
    """A rate's interval in percent, "[31%, 69%]"; "-" for none."""
    return "-" if interval is None else f"[{100 * interval.low:.0f}%, {100 * interval.high:.0f}%]"


def pts(interval: Interval | None) -> str:
    """A difference's interval in signed percentage points, "[-8, +27]"; "-" for none."""
    return "-" if interval is None else f"[{100 * interval.low:+.0f}, {100 * interval.high:+.0f}]"


def p_value(value: float | None) -> str:
    """A p-value to three significant digits; "-" for none."""
    return "-" if value is None else f"{value:.3g}"


def depends(n: int) -> str:
    """The words for a verdict that ``n`` provider errors decided."""
    return f"inconclusive: the verdict depends on {n} provider errors"


def left_out(n: int) -> str:
    """The words for ``n`` cases left out for errors not the agent's."""
    return f"{n} {'case' if n == 1 else 'cases'} left out: errors not the agent's"


def _esc(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def _row(cells: list[str]) -> str:
    plain = "".join(cells)
    if "|" in plain or "\n" in plain:  # most rows have nothing to escape: no call per cell for them
        cells = [_esc(c) for c in cells]
    return "| " + " | ".join(cells) + " |"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table's lines (cells escaped where needed), then a blank line."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += [_row(row) for row in rows]
    return [*lines, ""]


# Said under a table whose intervals include one over fewer cases than the simulations check.
FEW_CASES = [
    f"† Over fewer than {SMALLEST_CHECKED} cases: no simulation shows this interval holding its 95% there",
    "(benchmarks/coverage.py starts at 6); read it as a rough range, not a guarantee.",
    "",
]
