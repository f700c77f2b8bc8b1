"""Tests for definition errors: each names the case, the problem, the fix and the offending line."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from skillgym.authoring import (
    DogfoodBuilder,
    ExecutionBuilder,
    PromptBuilder,
    dogfood_case,
    execution_case,
    prompt_case,
)
from skillgym.errors import DefinitionError
from skillgym.model import FileExists, ReportRequirement, WorkflowCheck
from skillgym.registry import Registry, use_registry

from .support import at


def _prompt(c: PromptBuilder) -> None:
    c.category("trigger")
    c.prompt("wait for my server")
    c.expect_skill("tmux-tui")


def _execution(c: ExecutionBuilder) -> None:
    c.category("session")
    c.task("do it")
    with c.assertions() as a:
        a.no_live_sessions()


def _dogfood(c: DogfoodBuilder) -> None:
    c.category("qa")
    c.task("explore")
    c.artifact("notes")


def _fails(define: Callable[[], None]) -> DefinitionError:
    """Run ``define`` in a fresh registry; it must raise a DefinitionError and register nothing."""
    with use_registry(Registry()) as reg, pytest.raises(DefinitionError) as info:
        define()
    assert reg.cases == ()
    assert isinstance(info.value, ValueError)
    return info.value


# Missing required fields: reported together, at the with line


def test_prompt_case_missing_everything() -> None:
    def define() -> None:
        with prompt_case("wait-for-output"):  # @case
            pass

    error = _fails(define)
    assert error.case_id == "wait-for-output"
    assert error.origin == at("case")
    assert str(error) == (
        f"{at('case')}: case 'wait-for-output': incomplete prompt case: missing a category "
        '(call c.category("...")), a prompt (call c.prompt("...")), the expected skill '
        '(call c.expect_skill("name"), or c.expect_skill(None) when no skill should be used); '
        "add the call(s) inside the block"
    )


def test_expect_skill_none_counts_as_called() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            c.category("should-not-trigger")
            c.prompt("rename a function")
            c.expect_skill(None)
        assert len(reg.cases) == 1


def test_execution_case_needs_category_task_and_a_required_verifier() -> None:
    def define() -> None:
        with execution_case("e") as c:  # @case
            c.artifact("log")
            with c.assertions() as a:
                a.file_exists("a.txt", required=False)

    error = _fails(define)
    message = str(error)
    assert error.origin == at("case")
    assert "missing a category" in message
    assert 'a task (call c.task("..."))' in message
    assert "a required verifier (execution cases pass on checked effects only" in message
    assert "with c.assertions() as a:" in message


def test_dogfood_case_needs_evidence_to_grade() -> None:
    def define() -> None:
        with dogfood_case("d") as c:  # @case
            c.category("qa")
            c.task("explore")
            with c.assertions() as a:
                a.no_live_sessions()

    error = _fails(define)
    assert error.origin == at("case")
    assert "missing evidence to grade" in str(error)
    assert "c.report() as r:" in str(error)


# Invalid regexes: at the call that gave them


def test_invalid_regex_in_a_step_has_the_documented_message() -> None:
    def define() -> None:
        with prompt_case("wait-for-output") as c:
            _prompt(c)
            with c.step("observe-readiness") as s:
                s.must_mention("(")  # @bad

    error = _fails(define)
    assert str(error) == (
        f"{at('bad')}: case 'wait-for-output': invalid regex '(' in step 'observe-readiness': missing ), "
        "unterminated subpattern at position 0; fix the expression or pass re.escape(text) for a literal"
    )
    assert error.__cause__ is not None


def test_invalid_regex_is_raised_by_the_call_itself() -> None:
    with use_registry(Registry()) as reg, prompt_case("p") as c:
        _prompt(c)
        with pytest.raises(DefinitionError) as in_case:
            c.must_not_mention("[a-")  # @bad-case
        with pytest.raises(DefinitionError) as in_rule:
            c.anti_pattern("sleepy", "sleep (")  # @bad-rule
    assert in_case.value.origin == at("bad-case")
    assert "invalid regex '[a-' in c.must_not_mention()" in str(in_case.value)
    assert in_rule.value.origin == at("bad-rule")
    assert "invalid regex 'sleep (' in anti-pattern 'sleepy'" in str(in_rule.value)
    assert len(reg.cases) == 1  # the block went on without the bad calls


# Contradictions


def test_step_that_requires_and_forbids_the_same_pattern() -> None:
    def define() -> None:
        with prompt_case("p") as c:
            _prompt(c)
            with c.step("observe") as s:
                s.must_mention("sleep")  # @required
                s.must_not_mention("tmux", "sleep")  # @forbidden

    error = _fails(define)
    assert error.origin == at("forbidden")
    assert str(error) == (
        f"{at('forbidden')}: case 'p': step 'observe' both requires and forbids 'sleep' "
        f"(the other call is at {at('required')}); it could never hold: keep one of the two"
    )


def test_contradiction_is_caught_in_either_order_and_at_case_level() -> None:
    with use_registry(Registry()), prompt_case("p") as c:
        _prompt(c)
        with c.step("s") as s:
            s.must_not_mention("x")
            with pytest.raises(DefinitionError, match="step 's' both requires and forbids 'x'"):
                s.must_mention("x")
        c.must_mention("y")
        with pytest.raises(DefinitionError, match="the case both requires and forbids 'y'"):
            c.must_not_mention("y")


def test_a_step_that_checks_nothing() -> None:
    def define() -> None:
        with prompt_case("p") as c:
            _prompt(c)
            with c.step("empty"):  # @step
                pass

    error = _fails(define)
    assert error.origin == at("step")
    assert (
        "step 'empty' checks nothing; add s.must_mention(...), s.must_not_mention(...) or s.judge(...)"
        in str(error)
    )


# Dependencies


def test_depends_on_an_unknown_step_names_the_known_ones() -> None:
    def define() -> None:
        with prompt_case("p") as c:
            _prompt(c)
            with c.step("start") as s:
                s.must_mention("start")
            with c.step("observe") as s:  # @observe
                s.must_mention("observe")
                s.after("strat")

    error = _fails(define)
    assert error.origin == at("observe")
    assert str(error) == (
        f"{at('observe')}: case 'p': step 'observe' depends on unknown step 'strat' (did you mean 'start'?); "
        "known steps: start, observe; fix the id in s.after(...) / depends_on="
    )


def test_dependency_cycle_names_the_path() -> None:
    def define() -> None:
        with prompt_case("p") as c:
            _prompt(c)
            with c.step("a", depends_on=["c"]) as s:  # @a
                s.must_mention("a")
            with c.step("b") as s:
                s.must_mention("b").after("a")
            with c.step("c") as s:
                s.must_mention("c").after("b")

    error = _fails(define)
    assert error.origin == at("a")
    assert "workflow steps depend on each other in a cycle: a -> c -> b -> a" in str(error)
    assert "remove one of these s.after(...) / depends_on links" in str(error)


def test_a_step_that_depends_on_itself_is_a_cycle() -> None:
    def define() -> None:
        with prompt_case("p") as c:
            _prompt(c)
            with c.step("loop") as s:
                s.must_mention("x").after("loop")

    assert "in a cycle: loop -> loop;" in str(_fails(define))


def test_a_cycle_behind_an_acyclic_prefix() -> None:
    checks = [
        WorkflowCheck(id="root", required_patterns=()),
        WorkflowCheck(id="x", depends_on=("root", "y")),
        WorkflowCheck(id="y", depends_on=("x",)),
    ]

    def define() -> None:
        with prompt_case("p") as c:
            _prompt(c)
            for check in checks:
                c.raw_workflow_check(check)

    assert "in a cycle: x -> y -> x;" in str(_fails(define))


def test_dependencies_that_form_a_diamond_are_fine() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            _prompt(c)
            for name, deps in (("a", ()), ("b", ("a",)), ("c", ("a",)), ("d", ("b", "c"))):
                with c.step(name, depends_on=deps) as s:
                    s.must_mention(name)
        (case,) = reg.cases
    assert [w.depends_on for w in case.workflow] == [(), ("a",), ("a",), ("b", "c")]


# Empty blocks: at the block's line


def test_empty_workflow_block() -> None:
    def define() -> None:
        with execution_case("e") as c:
            _execution(c)
            with c.workflow():  # @workflow
                pass

    error = _fails(define)
    assert error.origin == at("workflow")
    assert "the workflow block records no step" in str(error)
    assert "w.create_session()" in str(error)


@pytest.mark.parametrize("block", ["assertions", "report", "proof_bundle"])
def test_other_empty_blocks(block: str) -> None:
    def define() -> None:
        with dogfood_case("d") as c:
            _dogfood(c)
            with getattr(c, block)():  # @block
                pass

    error = _fails(define)
    assert error.origin == at("block")
    assert f"the {block} block" in str(error)
    assert "or remove the block" in str(error)


# Duplicate ids within a case: naming both places


def test_duplicate_step_ids() -> None:
    def define() -> None:
        with execution_case("e") as c:
            _execution(c)
            with c.workflow() as w:
                w.create_session()  # @first
            with c.step("create-session") as s:  # @second
                s.must_mention("x")

    error = _fails(define)
    assert error.origin == at("second")
    assert f"duplicate step id 'create-session': first defined at {at('first')}, again here" in str(error)


def test_duplicate_verifier_ids() -> None:
    def define() -> None:
        with execution_case("e") as c:
            _execution(c)
            with c.assertions() as a:
                a.file_exists("a.txt", id="made")  # @first
            c.raw_verifier(FileExists(id="made", path="b.txt"))  # @second

    error = _fails(define)
    assert error.origin == at("second")
    assert f"duplicate verifier id 'made': first defined at {at('first')}, again here" in str(error)


def test_duplicate_report_requirement_ids() -> None:
    def define() -> None:
        with dogfood_case("d") as c:
            _dogfood(c)
            with c.report() as r:
                r.title()
            c.raw_report_requirement(ReportRequirement(id="title"))  # @second

    error = _fails(define)
    assert error.origin == at("second")
    assert "duplicate report requirement id 'title'" in str(error)


def test_duplicate_setup_and_anti_pattern_ids() -> None:
    def setup() -> None:
        with execution_case("e") as c:
            _execution(c)
            c.setup(["a"], id="seed")
            c.setup(["b"], id="seed")

    def rules() -> None:
        with prompt_case("p") as c:
            _prompt(c)
            c.anti_pattern("sleepy", "sleep")
            c.anti_pattern("sleepy", "wait 5")

    assert "duplicate setup command id 'seed'" in str(_fails(setup))
    assert "duplicate anti-pattern rule 'sleepy'" in str(_fails(rules))


# Ids and paths


@pytest.mark.parametrize(
    ("bad", "suggestion"),
    [("Wait For Output", "wait-for-output"), ("-leading", "leading"), ("a/b", "a-b"), ("ÜBER", "ber")],
)
def test_invalid_case_ids_state_the_rule_and_suggest_a_fix(bad: str, suggestion: str) -> None:
    with use_registry(Registry()), pytest.raises(DefinitionError) as info:
        prompt_case(bad)  # @call
    assert info.value.origin == at("call")
    assert f"invalid case id {bad!r}: ids are lowercase letters, digits" in str(info.value)
    assert "^[a-z0-9][a-z0-9._-]*$" in str(info.value)
    assert f"use {suggestion!r}" in str(info.value)


def test_empty_and_non_string_ids() -> None:
    with use_registry(Registry()), pytest.raises(DefinitionError, match="empty case id"):
        prompt_case("")
    with (
        use_registry(Registry()),
        pytest.raises(DefinitionError, match="case id must be a string, got int 7"),
    ):
        prompt_case(7)  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.step("Observe"), "invalid step id 'Observe'"),
        (lambda c: c.conditions("Self Load"), "invalid condition id 'Self Load'"),
        (lambda c: c.workspace("tui smoke"), "invalid workspace preset id 'tui smoke'"),
        (lambda c: c.expect_skill("Tmux TUI"), "invalid skill name 'Tmux TUI'"),
        (lambda c: c.anti_pattern("Sleep!", "x"), "invalid anti-pattern id 'Sleep!'"),
    ],
)
def test_other_ids_follow_the_same_rule(call: Callable[[PromptBuilder], object], message: str) -> None:
    with use_registry(Registry()), prompt_case("p") as c:
        _prompt(c)
        with pytest.raises(DefinitionError, match=message):
            call(c)
