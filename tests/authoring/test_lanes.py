"""Tests for lane misuse: a method of another lane's builder is a DefinitionError that says what to do."""

from __future__ import annotations

import pytest

from skillgym.authoring import dogfood_case, execution_case, prompt_case
from skillgym.errors import DefinitionError
from skillgym.registry import Registry, use_registry

from .support import at


@pytest.mark.parametrize(
    ("define", "call", "belongs", "fix"),
    [
        (
            prompt_case,
            lambda c: c.assertions(),
            "c.assertions() belongs to execution and dogfood cases, not to prompt cases",
            "a prompt case is graded on the answer text",
        ),
        (
            prompt_case,
            lambda c: c.report(),
            "c.report() belongs to dogfood cases, not to prompt cases",
            "define the case with dogfood_case('c') instead, or remove the call",
        ),
        (
            prompt_case,
            lambda c: c.workflow(),
            "c.workflow() belongs to execution and dogfood cases, not to prompt cases",
            "describe the plan with `with c.step(id) as s:`",
        ),
        (
            prompt_case,
            lambda c: c.task("x"),
            "c.task() belongs to execution and dogfood cases, not to prompt cases",
            "give the agent's request with c.prompt(...)",
        ),
        (
            execution_case,
            lambda c: c.prompt("x"),
            "c.prompt() belongs to prompt cases, not to execution cases",
            "say what the agent must do with c.task(...)",
        ),
        (
            execution_case,
            lambda c: c.proof_bundle(),
            "c.proof_bundle() belongs to dogfood cases, not to execution cases",
            "define the case with dogfood_case('c') instead",
        ),
        (
            execution_case,
            lambda c: c.must_mention("x"),
            "c.must_mention() belongs to prompt cases, not to execution cases",
            "check the commands the agent ran with a step",
        ),
        (
            dogfood_case,
            lambda c: c.setup(["x"]),
            "c.setup() belongs to execution cases, not to dogfood cases",
            "define the case with execution_case('c') instead",
        ),
        (
            dogfood_case,
            lambda c: c.context("x"),
            "c.context() belongs to prompt cases, not to dogfood cases",
            "define the case with prompt_case('c') instead",
        ),
    ],
)
def test_a_method_of_another_lane(define: object, call: object, belongs: str, fix: str) -> None:
    with use_registry(Registry()) as reg:
        with pytest.raises(DefinitionError) as info, define("c") as c:  # type: ignore[operator]
            call(c)  # type: ignore[operator]
        assert reg.cases == ()
    error = info.value
    assert error.case_id == "c"
    assert belongs in str(error)
    assert fix in str(error)
    assert isinstance(error, AttributeError)  # so hasattr() stays honest


def test_lane_error_points_at_the_offending_line() -> None:
    with use_registry(Registry()), prompt_case("p") as c:
        c.category("trigger")
        c.prompt("x")
        c.expect_skill(None)
        with pytest.raises(DefinitionError) as info:
            c.assertions()  # type: ignore[attr-defined]  # @misuse
    assert info.value.origin == at("misuse")
    assert str(info.value).startswith(f"{at('misuse')}: case 'p': c.assertions() belongs to")


def test_a_nested_recorder_method_called_on_the_case() -> None:
    with use_registry(Registry()), pytest.raises(DefinitionError) as info, execution_case("e") as c:
        c.file_exists("a.txt")  # type: ignore[attr-defined]
    assert "c.file_exists() is not a case method: it is recorded inside `with c.assertions() as a:`" in str(
        info.value
    )


def test_hasattr_is_false_for_other_lanes_methods() -> None:
    with use_registry(Registry()), pytest.raises(DefinitionError, match="incomplete"), prompt_case("p") as c:
        assert (hasattr(c, "assertions"), hasattr(c, "prompt")) == (False, True)


def test_unknown_names_are_attribute_errors_with_a_suggestion() -> None:
    with use_registry(Registry()), prompt_case("p") as c:
        c.category("trigger")
        c.prompt("x")
        c.expect_skill(None)
        with pytest.raises(AttributeError) as typo:
            c.categroy("trigger")  # type: ignore[attr-defined]
        with pytest.raises(AttributeError) as unknown:
            c.zzz  # type: ignore[attr-defined]  # noqa: B018
        with pytest.raises(AttributeError, match="_private"):
            c._private  # type: ignore[attr-defined]  # noqa: B018
    assert not isinstance(typo.value, DefinitionError)
    assert str(typo.value) == "'PromptBuilder' object has no attribute 'categroy'; did you mean 'category'?"
    assert str(unknown.value) == "'PromptBuilder' object has no attribute 'zzz'"
