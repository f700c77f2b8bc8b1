"""Gate expressions: the grammar, canonical forms, and errors that name the expression and the position."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillgym.errors import ExitCode, UsageError
from skillgym.gates.expression import GateSyntaxError, parse_gate


def test_lift_and_pass_rate_parse_into_their_parameters() -> None:
    lift = parse_gate("lift(self-load, none) > 0")
    assert (lift.metric, lift.arguments, lift.operator, lift.threshold) == (
        "lift",
        {"treatment": "self-load", "control": "none"},
        ">",
        0.0,
    )
    rate = parse_gate("pass_rate(execution,self-load,provider=claude)>=80%")
    assert rate.arguments == {"lane": "execution", "condition": "self-load", "provider": "claude"}
    assert rate.threshold == pytest.approx(0.8)
    assert rate.expression == "pass_rate(execution, self-load, provider=claude) >= 80%"


def test_negative_lifts_and_every_operator_parse() -> None:
    for op in (">", ">=", "<", "<="):
        assert parse_gate(f"lift(none, stale, lane=prompt) {op} -0.1").operator == op
    assert parse_gate("lift(none, stale) > -0.1").threshold == pytest.approx(-0.1)


@pytest.mark.parametrize(
    ("text", "position", "problem"),
    [
        ("lift(self-load, none)", 22, "expected a comparison"),
        ("lift(self-load) > 0", 15, "needs treatment, control"),
        ("pass_rate(execution, none) >= 1.5", 31, "between 0 and 1"),
        ("pass_rate(executon, none) > 0.5", 11, "unknown lane 'executon'"),
        ("lift(a, b, lanes=prompt) > 0", 12, "takes no lanes="),
        ("lift(a, b) > 0 or", 16, "unexpected 'or'"),
        ("lift(a, b) == 0", 12, "expected a comparison"),
        ("__import__(os) > 0", 1, "unknown metric '__import__'"),
        ("lift('a', b) > 0", 6, 'unexpected character "\'"'),
        ("lift(a; b) > 0", 7, "unexpected character ';'"),
        ("power(a, b) > 0", 1, "unknown metric 'power'"),
    ],
)
def test_a_malformed_gate_names_the_expression_the_position_and_the_problem(
    text: str, position: int, problem: str
) -> None:
    with pytest.raises(GateSyntaxError) as caught:
        parse_gate(text)
    message = str(caught.value)
    assert f"gate {text!r}" in message
    assert problem in message
    assert f"at position {position}\n" in message
    assert message.splitlines()[2].index("^") - 2 == position - 1  # the caret under the mistake
    assert isinstance(caught.value, UsageError)
    assert caught.value.exit_code == ExitCode.USAGE


@given(st.text(max_size=40))
def test_no_text_crashes_the_parser_with_anything_but_a_gate_error(text: str) -> None:
    try:
        spec = parse_gate(text)
    except GateSyntaxError:
        return
    assert parse_gate(spec.expression) == spec  # what parses, parses again to itself
