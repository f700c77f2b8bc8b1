"""Geometry of report.html's SVG charts: points with interval whiskers on a fixed scale, laid out in rows.

The page draws these server-side, so the summary reads without JavaScript; every mark carries the exact
report.json number it stands for in a ``data-*`` attribute (``repr`` of a float is its JSON spelling).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import msgspec

from ..stats import Interval

WIDTH: Final = 860  # the viewBox width; the SVG scales to its container
LABEL_WIDTH: Final = 300  # the left column that names each row, at its narrowest
MAX_LABEL_WIDTH: Final = 420  # ... and at its widest: the plot keeps at least 230 units
CHAR_WIDTH: Final = 6.6  # a 12px system-ui character, generously: a label sized by it is not clipped
LABEL_PAD: Final = 14  # the label's left margin and its gap before the plot
VALUE_WIDTH: Final = 190  # the right column that prints each row's numbers
ROW_HEIGHT: Final = 24
TOP: Final = 26  # room for the axis ticks above the first row
PLOT_LEFT: Final = LABEL_WIDTH + 10
PLOT_RIGHT: Final = WIDTH - VALUE_WIDTH - 10


class Mark(msgspec.Struct, frozen=True, kw_only=True):
    """One row of a chart: a label, a point, maybe a whisker, and the text beside it."""

    label: str
    y: float
    x: float | None  # the point; None when there is no estimate ("no usable trials")
    low_x: float | None
    high_x: float | None
    text: str  # the numbers, as the tables print them
    tone: str = ""  # a CSS class: improved, regressed, inconclusive
    data: dict[str, str] = {}  # data-* attributes: the exact numbers from report.json


class Tick(msgspec.Struct, frozen=True, kw_only=True):
    x: float
    label: str


class Chart(msgspec.Struct, frozen=True, kw_only=True):
    """A whole chart: its rows, ticks, the zero line (for differences) and its height."""

    id: str
    title: str
    marks: tuple[Mark, ...]
    ticks: tuple[Tick, ...]
    height: float
    zero_x: float | None = None
    label_chars: int = 38  # a longer label is cut with an ellipsis (its whole text is the tooltip)
    plot_left: float = PLOT_LEFT
    plot_right: float = PLOT_RIGHT
    value_x: float = PLOT_RIGHT + 12
    width: float = WIDTH


class Row(msgspec.Struct, frozen=True, kw_only=True):
    """What a chart row is made from: an estimate and its interval, on the chart's scale."""

    label: str
    value: float | None
    interval: Interval | None
    text: str
    tone: str = ""
    data: dict[str, str] = {}


def scale(value: float, low: float, high: float, left: float = PLOT_LEFT) -> float:
    """``value`` on [low, high] as an x position on the plot (from ``left``), clipped to its edges."""
    span = high - low or 1.0
    clipped = min(max(value, low), high)
    return round(left + (clipped - low) / span * (PLOT_RIGHT - left), 2)


def label_width(labels: Sequence[str]) -> float:
    """The label column: wide enough for the longest label, between LABEL_WIDTH and MAX_LABEL_WIDTH."""
    longest = max((len(label) for label in labels), default=0)
    return min(MAX_LABEL_WIDTH, max(LABEL_WIDTH, math.ceil(longest * CHAR_WIDTH + LABEL_PAD)))


def chart(
    id: str,
    title: str,
    rows: Sequence[Row],
    *,
    low: float,
    high: float,
    ticks: Sequence[float],
    tick_label: str = "{:.0%}",
    zero: bool = False,
) -> Chart:
    """Lay ``rows`` out top to bottom on the scale [low, high], the label column fitted to the labels."""
    labels = label_width([row.label for row in rows])
    left = labels + 10
    marks = tuple(
        Mark(
            label=row.label,
            y=TOP + index * ROW_HEIGHT + ROW_HEIGHT / 2,
            x=None if row.value is None else scale(row.value, low, high, left),
            low_x=None if row.interval is None else scale(row.interval.low, low, high, left),
            high_x=None if row.interval is None else scale(row.interval.high, low, high, left),
            text=row.text,
            tone=row.tone,
            data=row.data,
        )
        for index, row in enumerate(rows)
    )
    return Chart(
        id=id,
        title=title,
        marks=marks,
        ticks=tuple(Tick(x=scale(t, low, high, left), label=tick_label.format(t)) for t in ticks),
        height=TOP + max(len(rows), 1) * ROW_HEIGHT + 6,
        zero_x=scale(0.0, low, high, left) if zero else None,
        label_chars=int((labels - LABEL_PAD) / CHAR_WIDTH + 1e-6),  # the epsilon: 330 / 6.6 is 50
        plot_left=left,
    )


def exact(value: float | int | None) -> str:
    """A number as report.json spells it (``repr`` round-trips a float), or an empty string for null."""
    return "" if value is None else repr(value)


def nice_ceiling(value: float) -> float:
    """A round upper bound for a token axis: 1, 2 or 5 times a power of ten, at least ``value``."""
    if value <= 0:
        return 1.0
    power = 10 ** (len(str(int(value))) - 1)
    for step in (1, 2, 5, 10):
        if step * power >= value:
            return float(step * power)
    return float(10 * power)
