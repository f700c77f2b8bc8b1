"""gate(...) in a suite: recorded on load, refused when malformed or declared twice, with its file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillgym.errors import CollectionError
from skillgym.loader import load_suite
from tests.conftest import write_suite

CASE = """
    from skillgym import prompt_case

    with prompt_case("a") as c:
        c.category("trigger")
        c.prompt("wait")
        c.expect_skill(None)
        with c.step("waits") as s:
            s.must_mention("wait")
"""


def test_suite_gates_are_recorded_in_order_with_their_origin(tmp_path: Path) -> None:
    root = write_suite(
        tmp_path / "evals",
        {
            "suite.py": 'from skillgym import gate\n\ngate("lift(self-load, none) > 0")\n'
            'gate("pass_rate(prompt, none)>=0.5")\n',
            "cases.py": CASE,
        },
    )
    suite = load_suite(root)
    assert [g.expression for g in suite.gates] == [
        "lift(self-load, none) > 0",
        "pass_rate(prompt, none) >= 0.5",
    ]
    assert suite.gates[0].origin.endswith("suite.py:3")


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ('gate("lift(self-load) > 0")', "lift() needs treatment, control"),
        (
            'gate("lift(self-load, none) > 0")\ngate("lift(self-load,none)>0")',
            "duplicate gate 'lift(self-load, none) > 0'",
        ),
        ("gate(0.8)", "gate() takes the expression as a string"),
    ],
)
def test_a_bad_suite_gate_stops_the_load_naming_its_line(tmp_path: Path, body: str, problem: str) -> None:
    root = write_suite(
        tmp_path / "evals", {"suite.py": f"from skillgym import gate\n\n{body}\n", "cases.py": CASE}
    )
    with pytest.raises(CollectionError) as caught:
        load_suite(root)
    assert problem in str(caught.value)
    assert "suite.py:" in str(caught.value)
