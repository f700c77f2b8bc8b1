"""Tests for the prompt lane builder and the methods every lane shares, against the exact compiled Structs."""

from __future__ import annotations

import re
from collections.abc import Callable
from unittest.mock import ANY

import msgspec
import pytest

from skillgym.authoring import PromptBuilder, prompt_case
from skillgym.errors import DefinitionError
from skillgym.fingerprint import fingerprint
from skillgym.model import AntiPatternRule, Budget, Pattern, PromptCase, Rubric, TokenBudget, WorkflowCheck
from skillgym.registry import Registry, use_registry

from .support import at, shown


def _minimal(c: PromptBuilder) -> None:
    c.category("trigger")
    c.prompt("wait for my server")
    c.expect_skill("tmux-tui")


def test_design_example_compiles_to_the_exact_struct() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("wait-for-output") as c:  # @case
            c.category("trigger")
            c.prompt("I need to wait until my server prints 'Listening on port 3000' before running tests")
            c.expect_skill("tmux-tui")
            with c.step("observe-readiness") as s:  # @step
                s.must_mention("wait", "Listening on port 3000")
                s.must_not_mention("sleep")
        (case,) = reg.cases
    expected = PromptCase(
        id="wait-for-output",
        category="trigger",
        expected_skill="tmux-tui",
        prompt="I need to wait until my server prints 'Listening on port 3000' before running tests",
        budget=Budget(timeout_s=30.0),
        workflow=(
            WorkflowCheck(
                id="observe-readiness",
                required=True,
                required_patterns=(Pattern(regex="wait", flags="i"), Pattern(regex="Listening on port 3000")),
                forbidden_patterns=(Pattern(regex="sleep", flags="i"),),
                origin=at("step"),
            ),
        ),
        origin=at("case"),
    )
    # Where each call was made is kept apart (see test_origins_name_each_call); it is no part of the case.
    assert msgspec.structs.replace(case, origins={}) == msgspec.structs.replace(
        expected, fingerprint=fingerprint(expected)
    )
    assert case.fingerprint == fingerprint(msgspec.structs.replace(case, origins={}))
    assert len(case.fingerprint) == 64


def test_prompt_fields_context_notes_patterns_and_rubric() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            _minimal(c)
            c.context("the server is started with npm run dev")
            c.grader_notes("prefer waiting on output")
            c.must_mention("tmux", re.compile(r"capture-pane", re.M))
            c.must_mention(r"wait(-for)?")
            c.must_not_mention(r"\bsleep\b")
            c.rubric("names the skill and waits on output", points=3, pass_at=2)
        (case,) = reg.cases
    assert isinstance(case, PromptCase)
    assert case.context == "the server is started with npm run dev"
    assert case.grader_notes == "prefer waiting on output"
    assert case.expected_patterns == (
        Pattern(regex="tmux", flags="i"),
        Pattern(regex="capture-pane", flags="m"),
        Pattern(regex="wait(-for)?", flags="i"),
    )
    assert case.forbidden_patterns == (Pattern(regex=r"\bsleep\b", flags="i"),)
    assert case.rubric == (
        Rubric(id="rubric", text="names the skill and waits on output", points=3, pass_at=2, origin=ANY),
    )


def test_expect_skill_none_is_a_should_not_trigger_case() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("plain-edit") as c:
            c.category("should-not-trigger")
            c.prompt("rename a function")
            c.expect_skill(None)
        (case,) = reg.cases
    assert case.expected_skill is None


def test_common_fields() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            _minimal(c)
            c.conditions("none", "preloaded")
            c.conditions("none", "stale")
            c.workspace("tui-smoke")
            c.budget(timeout_s=45, max_wall_clock_s=90)
            c.token_budget(max_regression_percent=12.5)
            c.tags("smoke", "routing")
            c.tags("smoke")
            c.describe("checks routing")
            c.env({"TERM": "dumb"})
        (case,) = reg.cases
    assert case.conditions == ("none", "preloaded", "stale")
    assert case.workspace == "tui-smoke"
    assert case.budget == Budget(timeout_s=45.0, max_turns=None, max_wall_clock_s=90.0)
    assert case.token_budget == TokenBudget(max_regression_percent=12.5)
    assert case.tags == ("smoke", "routing")
    assert case.description == "checks routing"
    assert case.env == {"TERM": "dumb"}


def test_defaults_when_common_fields_are_left_out() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            _minimal(c)
        (case,) = reg.cases
    assert case.conditions == ()
    assert case.workspace is None
    assert case.budget == Budget(timeout_s=30.0)
    assert case.token_budget == TokenBudget()
    assert case.tags == ()
    assert case.description == ""
    assert case.anti_patterns == ()
    assert case.workflow == ()


def test_case_anti_pattern() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            _minimal(c)
            c.anti_pattern(  # @rule
                "blind-sleep",
                r"\bsleep\s+\d",
                re.compile("wait a few seconds", re.I),
                severity="error",
                description="sleeping instead of waiting on output",
                suggested_fix="wait on the pane's text",
            )
        (case,) = reg.cases
    assert case.anti_patterns == (
        AntiPatternRule(
            id="blind-sleep",
            description="sleeping instead of waiting on output",
            severity="error",
            patterns=(
                Pattern(regex=r"\bsleep\s+\d", flags="i"),
                Pattern(regex="wait a few seconds", flags="i"),
            ),
            suggested_fix="wait on the pane's text",
            origin=at("rule"),
        ),
    )


def test_step_options_after_optional_weight_and_constructor_arguments() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            _minimal(c)
            with c.step("start", description="start it", weight=2.0) as s:  # @start
                s.must_mention("start")
            with c.step("observe", depends_on=["start"], required=False) as s:  # @observe
                s.must_mention("observe")
            with c.step("cleanup") as s:  # @cleanup
                s.must_not_mention("leave it running")
                s.after("observe", "start")
                s.after("observe")
                s.optional()
                s.weight(0.5)
        (case,) = reg.cases
    assert case.workflow == (
        WorkflowCheck(
            id="start",
            description="start it",
            required=True,
            required_patterns=(Pattern(regex="start"),),
            weight=2.0,
            origin=at("start"),
        ),
        WorkflowCheck(
            id="observe",
            required=False,
            required_patterns=(Pattern(regex="observe"),),
            depends_on=("start",),
            origin=at("observe"),
        ),
        WorkflowCheck(
            id="cleanup",
            required=False,
            forbidden_patterns=(Pattern(regex="leave it running"),),
            depends_on=("observe", "start"),
            weight=0.5,
            origin=at("cleanup"),
        ),
    )


def test_step_builder_chains_and_exposes_its_id() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            _minimal(c)
            with c.step("one") as s:
                assert s.id == "one"
                assert s.must_mention("a").must_not_mention("b").optional().weight(3) is s
        (case,) = reg.cases
    assert case.workflow[0].weight == 3.0


def test_raw_workflow_check_keeps_the_struct_and_fills_an_empty_origin() -> None:
    mine = WorkflowCheck(id="plan", required_patterns=(Pattern(regex="plan", flags=""),))
    kept = WorkflowCheck(id="keep", required_patterns=(Pattern(regex="x"),), origin="elsewhere.py:3")
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            _minimal(c)
            c.raw_workflow_check(mine)  # @raw
            c.raw_workflow_check(kept)
        (case,) = reg.cases
    assert case.workflow == (msgspec.structs.replace(mine, origin=at("raw")), kept)


def test_raw_workflow_check_rejects_other_types() -> None:
    with use_registry(Registry()), prompt_case("p") as c:
        _minimal(c)
        with pytest.raises(DefinitionError, match=r"expected a skillgym\.model\.WorkflowCheck, got dict"):
            c.raw_workflow_check({"id": "x"})  # type: ignore[arg-type]


def test_raw_workflow_check_validates_its_patterns() -> None:
    bad = WorkflowCheck(id="plan", required_patterns=(Pattern(regex="(", flags="i"),))
    with use_registry(Registry()), prompt_case("p") as c:
        _minimal(c)
        with pytest.raises(DefinitionError) as info:
            c.raw_workflow_check(bad)  # @bad
    assert str(info.value).startswith(f"{at('bad')}: case 'p': invalid regex '(' in step 'plan'")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.budget(), "c.budget() sets nothing"),
        (lambda c: c.budget(timeout_s=0), "timeout_s must be a number greater than 0, got 0"),
        (lambda c: c.budget(max_turns=2.5), "max_turns must be a whole number of at least 1, got 2.5"),
        (lambda c: c.budget(max_turns=True), "max_turns must be a whole number"),
        (
            lambda c: c.token_budget(max_regression_percent=-1),
            "max_regression_percent must be a number at least 0",
        ),
        (lambda c: c.conditions(), "c.conditions() needs at least one condition id"),
        (lambda c: c.rubric(""), "c.rubric() text is empty"),
        (lambda c: c.rubric("r", points=0), "c.rubric() points must be a whole number of at least 1, got 0"),
        (lambda c: c.rubric("r", points=3, pass_at=4), "c.rubric() pass_at=4 is above points=3"),
        (lambda c: c.tags(""), "tag is empty"),
        (lambda c: c.must_mention(), "c.must_mention() needs at least one pattern"),
        (lambda c: c.anti_pattern("r"), "anti_pattern('r', ...) needs at least one pattern"),
        (lambda c: c.anti_pattern("r", "x", severity="fatal"), "unknown severity 'fatal'; use one of 'info'"),
        (lambda c: c.env({"A": 1}), "c.env()['A'] must be a string, got int 1"),
        (lambda c: c.category(3), "category must be a string, got int 3"),
    ],
)
def test_bad_arguments_are_definition_errors_at_the_call(
    call: Callable[[PromptBuilder], None], message: str
) -> None:
    def define() -> None:
        with prompt_case("p") as c:
            _minimal(c)
            call(c)

    with use_registry(Registry()) as reg, pytest.raises(DefinitionError) as info:
        define()
    assert message in str(info.value)
    # The origin is the user's own frame that made the call: here, the lambda's line.
    assert info.value.origin == f"{shown(__file__)}:{call.__code__.co_firstlineno}"
    assert info.value.case_id == "p"
    assert reg.cases == ()


def test_budget_keeps_lane_defaults_for_values_left_out() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            _minimal(c)
            c.budget(max_turns=3)
        (case,) = reg.cases
    assert case.budget == Budget(timeout_s=30.0, max_turns=3)


def test_setting_a_field_twice_names_the_first_call() -> None:
    with use_registry(Registry()), prompt_case("p") as c:
        _minimal(c)
        c.context("one")  # @first
        with pytest.raises(DefinitionError) as info:
            c.context("two")  # @second
    assert info.value.origin == at("second")
    assert f"c.context() was already called at {at('first')}" in str(info.value)
    assert "remove one of the calls" in str(info.value)


def test_raw_workflow_check_turns_str_patterns_into_patterns() -> None:
    given = WorkflowCheck(id="plan", required_patterns=("plan",), forbidden_patterns=("guess",))  # type: ignore[arg-type]
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            _minimal(c)
            c.raw_workflow_check(given)  # @raw
        (case,) = reg.cases
    assert case.workflow == (
        WorkflowCheck(
            id="plan",
            required_patterns=(Pattern(regex="plan"),),
            forbidden_patterns=(Pattern(regex="guess"),),
            origin=at("raw"),
        ),
    )


def test_origins_name_each_call() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("o") as c:
            c.category("trigger")  # @category
            c.prompt("p")  # @prompt
            c.expect_skill(None)  # @expect
            c.conditions("none", "stale")  # @conditions
        (case,) = reg.cases
    assert case.origins == {
        "c.category()": at("category"),
        "c.prompt()": at("prompt"),
        "c.expect_skill()": at("expect"),
        "c.conditions(none)": at("conditions"),
        "c.conditions(stale)": at("conditions"),
    }
