"""The template environment report.html and the trial pages share, and the filters that print numbers."""

from __future__ import annotations

from functools import cache
from typing import Any, Final

import jinja2
import markupsafe
import msgspec

from .charts import exact

DASH: Final = "\N{EN DASH}"  # what the pages print for a missing number, and between a range's ends


@cache
def environment() -> jinja2.Environment:
    """The template environment: templates ship as package data; everything is escaped unless marked."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("skillgym.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,  # a misspelt name in a template fails loudly, never renders empty
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=pct, interval=interval_text, pp=pp, exact=exact, num=num, json_script=json_script)
    return env


@cache
def static(name: str) -> str:
    """A template without variables (the style sheet, a script), rendered once: every page inlines it."""
    return environment().get_template(name).render()


def json_script(value: Any) -> markupsafe.Markup:
    """JSON safe inside ``<script type="application/json">``: no ``<`` can end the element early."""
    text = msgspec.json.encode(value).decode().replace("<", "\\u003c").replace(">", "\\u003e")
    return markupsafe.Markup(text.replace("&", "\\u0026"))


def pct(value: float | None) -> str:
    """A rate as the page prints it; a missing one as an en dash."""
    return DASH if value is None else f"{value:.1%}"


def pp(value: float | None) -> str:
    """A difference of rates, in percentage points."""
    return DASH if value is None else f"{value * 100:+.1f} pp"


def num(value: float | int | None) -> str:
    """A count with thousands separators; a fractional one to one decimal."""
    if value is None:
        return DASH
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"


def compact(value: float) -> str:
    """A token count short enough for a chart's margin: 9,876, 242.7k, 1.23M."""
    if abs(value) < 10_000:
        return num(value)
    if abs(value) < 1_000_000:
        return f"{value / 1000:,.1f}k"
    return f"{value / 1_000_000:,.2f}M"


def interval_text(value: Any, points: bool = False) -> str:
    """``[low, high]`` as percentages (or percentage points for a difference); a dash without an interval."""
    if value is None:
        return DASH
    show = pp if points else pct
    return f"[{show(value.low)}, {show(value.high)}]"
