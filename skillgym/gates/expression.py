"""Gate expressions: a small tokenizer and parser (never ``eval``) from text to a frozen GateSpec.

The grammar, whole::

    gate     := metric "(" argument ("," argument)* ")" operator number ["%"]
    metric   := "lift" | "pass_rate"
    argument := name | key "=" name
    operator := ">" | ">=" | "<" | "<="

``lift(TREATMENT, CONTROL[, lane=L][, provider=P])`` is the paired lift of one condition over another
(the report's condition comparison); ``pass_rate(LANE, CONDITION[, provider=P][, case=ID])`` is a
condition's mean case pass rate (or, with ``case=``, one case's pass rate). Numbers are fractions (0.8) or
percentages (80%); a lift is a difference of pass rates, from -1 to 1.
"""

from __future__ import annotations

import re
from typing import Final

from ..errors import UsageError
from ..model import LANES, GateSpec

METRICS: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    # metric -> (positional parameters, keyword parameters)
    "lift": (("treatment", "control"), ("lane", "provider")),
    "pass_rate": (("lane", "condition"), ("provider", "case")),
}
_TOKEN: Final = re.compile(
    r"\s*(?:(?P<number>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?%?)|(?P<op>>=|<=|>|<)"
    r"|(?P<punct>[(),=])|(?P<name>[A-Za-z_][A-Za-z0-9_.:/@+-]*))"
)


class GateSyntaxError(UsageError):
    """A gate expression that does not parse: names the expression, the position and what was expected."""

    def __init__(self, expression: str, position: int, problem: str) -> None:
        self.expression = expression
        self.position = position
        pointer = " " * position + "^"
        super().__init__(
            f"gate {expression!r}: {problem} at position {position + 1}\n  {expression}\n  {pointer}\n"
            "  a gate reads like lift(self-load, none) > 0 or pass_rate(execution, self-load) >= 0.8"
        )


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            start = len(text) - len(text[at:].lstrip())
            raise GateSyntaxError(text, start, f"unexpected character {text[start]!r}")
        kind = match.lastgroup
        assert kind is not None
        out.append((kind, match.group(kind), match.start(kind)))
        at = match.end()
    return out


class _Cursor:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items = _tokens(text)
        self.index = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.items[self.index] if self.index < len(self.items) else None

    def take(self, kind: str, what: str, value: str | None = None) -> tuple[str, str, int]:
        token = self.peek()
        if token is None:
            raise GateSyntaxError(self.text, len(self.text), f"expected {what}, found the end")
        if token[0] != kind or (value is not None and token[1] != value):
            raise GateSyntaxError(self.text, token[2], f"expected {what}, found {token[1]!r}")
        self.index += 1
        return token


def parse_gate(text: str, *, origin: str = "--gate") -> GateSpec:
    """``text`` as a GateSpec; a GateSyntaxError (exit 2) naming the expression and position otherwise."""
    cursor = _Cursor(text)
    _, metric, metric_at = cursor.take("name", f"a metric ({', '.join(METRICS)})")
    if metric not in METRICS:
        raise GateSyntaxError(text, metric_at, f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
    positional, keywords = METRICS[metric]
    cursor.take("punct", "'('", "(")
    arguments: dict[str, str] = {}
    where: dict[str, int] = {}  # each argument's position, for errors about its value
    given = 0
    while True:
        _, name, name_at = cursor.take("name", "an argument")
        after = cursor.peek()
        if after is not None and after[1] == "=":
            cursor.index += 1
            if name not in keywords:
                raise GateSyntaxError(
                    text, name_at, f"{metric}() takes no {name}=; it takes {', '.join(keywords)}"
                )
            if name in arguments:
                raise GateSyntaxError(text, name_at, f"{name}= is given twice")
            _, arguments[name], where[name] = cursor.take("name", f"a value for {name}=")
        else:
            if arguments.keys() & set(keywords):
                raise GateSyntaxError(text, name_at, "a positional argument after a keyword argument")
            if given >= len(positional):
                raise GateSyntaxError(
                    text,
                    name_at,
                    f"{metric}() takes {len(positional)} positional arguments ({', '.join(positional)})",
                )
            arguments[positional[given]] = name
            where[positional[given]] = name_at
            given += 1
        closing = cursor.take("punct", "',' or ')'")
        if closing[1] == ")":
            break
        if closing[1] != ",":
            raise GateSyntaxError(text, closing[2], f"expected ',' or ')', found {closing[1]!r}")
    if given < len(positional):
        raise GateSyntaxError(
            text, cursor.items[cursor.index - 1][2], f"{metric}() needs {', '.join(positional)}"
        )
    _, operator, _ = cursor.take("op", "a comparison (>, >=, <, <=)")
    _, number, number_at = cursor.take("number", "a number")
    threshold = float(number.rstrip("%")) / (100 if number.endswith("%") else 1)
    rest = cursor.peek()
    if rest is not None:
        raise GateSyntaxError(text, rest[2], f"unexpected {rest[1]!r} after the number")
    low = -1.0 if metric == "lift" else 0.0
    if not low <= threshold <= 1.0:
        raise GateSyntaxError(
            text, number_at, f"{metric} is between {low:g} and 1 (or {low * 100:g}% and 100%), not {number}"
        )
    lane = arguments.get("lane")
    if lane is not None and lane not in LANES:
        raise GateSyntaxError(text, where["lane"], f"unknown lane {lane!r}; lanes: {', '.join(LANES)}")
    return GateSpec(
        expression=_canonical(metric, arguments, positional, operator, number),
        metric=metric,  # type: ignore[arg-type]  # checked against METRICS above
        arguments=arguments,
        operator=operator,  # type: ignore[arg-type]
        threshold=threshold,
        origin=origin,
    )


def _canonical(
    metric: str, arguments: dict[str, str], positional: tuple[str, ...], operator: str, number: str
) -> str:
    """The expression as reports show it and duplicates are found: ``lift(a, b, lane=prompt) > 0``."""
    shown = [arguments[p] for p in positional] + [
        f"{k}={v}" for k, v in arguments.items() if k not in positional
    ]
    return f"{metric}({', '.join(shown)}) {operator} {number}"
