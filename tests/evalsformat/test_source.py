"""The generated case files: strings come back exactly, ids are stable, the files compile."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from skillgym.evalsformat.schema import AgentEval, EvalSet, TriggerQuery, TriggerSet
from skillgym.evalsformat.source import (
    eval_case_id,
    eval_set_source,
    literal,
    trigger_case_id,
    trigger_set_source,
)


@given(st.text(), st.integers(min_value=0, max_value=12))
def test_a_literal_evaluates_back_to_its_text(text: str, indent: int) -> None:
    assert ast.literal_eval(f"(\n{' ' * indent}{literal(text, indent)}\n)") == text


def test_long_and_multi_line_texts_are_cut_into_readable_pieces() -> None:
    text = "first line\n" + "word " * 40 + "\n\nlast"
    rendered = literal(text, 8)
    lines = rendered.splitlines()
    assert lines[0] == '"first line\\n"'
    assert all(len(line) <= 88 for line in lines)
    assert ast.literal_eval(f"({rendered})") == text


def test_case_ids_derive_from_the_skill_and_the_eval_id() -> None:
    assert eval_case_id("csv-summary", 3) == "csv-summary-eval-3"
    assert eval_case_id("csv-summary", "Hot.Month") == "csv-summary-eval-hot.month"
    assert trigger_case_id("csv-summary", 2) == "csv-summary-trigger-2"


def test_the_generated_files_are_valid_python_with_the_dsl_calls() -> None:
    evals = EvalSet(
        skill_name="csv-summary",
        evals=(
            AgentEval(
                id=1, prompt='say "hi"\nthen stop', expectations=("a", "b"), expectations_key="assertions"
            ),
            AgentEval(id=2, prompt="p", expected_output="only this", ignored=("scorers",)),
        ),
    )
    text = eval_set_source(evals, source_name="evals.json", with_files=frozenset({"csv-summary-eval-1"}))
    ast.parse(text)
    assert 'with execution_case("csv-summary-eval-1") as c:' in text
    assert 'c.tags("agent-skills-eval", "eval-id=1", "evals-key=assertions")' in text
    assert """c.tags("agent-skills-eval", 'eval-id="01"', "graded-by=expected_output")""" in eval_set_source(
        EvalSet(skill_name="s", evals=(AgentEval(id="01", prompt="p", expected_output="o"),)),
        source_name="evals.json",
        with_files=frozenset(),
    )
    assert '        a.judge("a")\n        a.judge("b")\n' in text
    assert 'c.workspace("csv-summary-eval-1")' in text and 'c.workspace("csv-summary-eval-2")' not in text
    assert "# eval 2 of evals.json ($.evals[1]); not imported (skillgym does not read them): scorers" in text
    assert 'c.grader_notes("only this")' in text and '        a.judge("only this")' in text
    triggers = TriggerSet(
        queries=(
            TriggerQuery(query="summarise", should_trigger=True),
            TriggerQuery(query="x", should_trigger=False),
        )
    )
    text = trigger_set_source(triggers, skill_name="csv-summary", source_name="t.json")
    ast.parse(text)
    assert 'c.category("trigger")' in text and 'c.expect_skill("csv-summary")' in text
    assert 'c.category("should-not-trigger")' in text and "c.expect_skill(None)" in text


def test_a_case_reads_in_the_order_of_the_example_suite_and_is_formatted_as_ruff_writes_it(
    tmp_path: Path,
) -> None:
    evals = EvalSet(
        skill_name="csv-summary",
        evals=(
            AgentEval(
                id=2,
                prompt='which region sold most? Answer in two lines, "quoted".',
                expected_output="South, with 32 sales.",
                expectations=("The answer says the south region sold most",),
                eval_name="sales-by-region",
            ),
            AgentEval(id="01", prompt="p", expected_output="It says 'none'"),
        ),
    )
    text = eval_set_source(evals, source_name="evals.json", with_files=frozenset({"csv-summary-eval-2"}))
    block = text[text.index("# eval 2 of evals.json ($.evals[0])") :]
    calls = ["workspace_preset(", "c.category(", "c.expect_skill(", "c.workspace(", "c.task("]
    calls += ["c.grader_notes(", "with c.assertions()", "c.budget(", "c.tags("]
    places = [block.index(call) for call in calls]
    assert places == sorted(places)  # what the case asks and expects first, bookkeeping last
    path = tmp_path / "cases.py"
    path.write_text(text)
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--isolated", "--diff", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert formatted.returncode == 0, formatted.stdout
