"""Tests for case definitions: the with and decorator forms, failure handling and closed recorders."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from skillgym.authoring import (
    AssertionsBuilder,
    DogfoodBuilder,
    ExecutionBuilder,
    PromptBuilder,
    ProofBundleBuilder,
    ReportBuilder,
    StepBuilder,
    WorkflowBuilder,
    dogfood_case,
    execution_case,
    prompt_case,
)
from skillgym.errors import DefinitionError, RecorderClosedError
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


# Decorator form


def test_decorator_with_parentheses_registers_and_returns_the_function_unchanged() -> None:
    with use_registry(Registry()) as reg:

        def build(c: ExecutionBuilder) -> None:
            _execution(c)
            c.fixture("hello-prompt")

        decorated = execution_case("hello-prompt")(build)  # @decorate
        assert decorated is build
        (case,) = reg.cases
    assert case.id == "hello-prompt"
    assert case.lane == "execution"
    assert case.origin == at("decorate")
    assert case.fingerprint


def test_decorator_syntax_with_and_without_parentheses() -> None:
    with use_registry(Registry()) as reg:

        @prompt_case("routing-one")  # @with-parens
        def build(c: PromptBuilder) -> None:
            _prompt(c)

        @dogfood_case
        def exploratory_qa(c: DogfoodBuilder) -> None:
            c.category("qa")
            c.task("explore")
            c.artifact("notes")

        assert callable(build)
        assert exploratory_qa.__name__ == "exploratory_qa"
        cases = reg.cases
    assert [(c.id, c.lane) for c in cases] == [("routing-one", "prompt"), ("exploratory-qa", "dogfood")]
    assert cases[0].origin == at("with-parens")


def test_bare_decorator_id_comes_from_the_function_name() -> None:
    with use_registry(Registry()) as reg:

        @execution_case
        def run_hello_prompt(c: ExecutionBuilder) -> None:
            _execution(c)

        (case,) = reg.cases
    assert case.id == "run-hello-prompt"


def test_bare_decorator_with_an_invalid_function_name_suggests_an_id() -> None:
    with use_registry(Registry()) as reg:
        with pytest.raises(DefinitionError) as info:

            @execution_case
            def BuildIt(c: ExecutionBuilder) -> None:
                _execution(c)

        assert reg.cases == ()
    assert "invalid case id (from the function name) 'BuildIt'" in str(info.value)
    assert "use 'buildit'" in str(info.value)


def test_parametrized_family_in_a_loop() -> None:
    with use_registry(Registry()) as reg:
        for word in ("hello", "exit", "symbols"):

            @execution_case(f"send-{word}")
            def build(c: ExecutionBuilder, word: str = word) -> None:
                _execution(c)
                c.fixture("hello-prompt")
                with c.assertions() as a:
                    a.fixture_received(word)

        cases = reg.cases
    assert [c.id for c in cases] == ["send-hello", "send-exit", "send-symbols"]
    assert [c.verifiers[-1].pattern.regex for c in cases] == ["hello", "exit", "symbols"]  # type: ignore[union-attr]
    assert len({c.fingerprint for c in cases}) == 3


def test_both_forms_share_one_finalize_path() -> None:
    def with_block() -> None:
        with prompt_case("p") as c:
            c.prompt("x")

    def decorator() -> None:
        @prompt_case("p")
        def build(c: PromptBuilder) -> None:
            c.prompt("x")

    messages = []
    for define in (with_block, decorator):
        with use_registry(Registry()), pytest.raises(DefinitionError) as info:
            define()
        messages.append(info.value.problem)
    assert messages[0] == messages[1]
    assert "missing a category" in messages[0]


# Failure: nothing registered, the same exception propagates


def test_body_raises_nothing_is_registered_and_the_same_exception_propagates() -> None:
    boom = RuntimeError("boom")

    def define() -> None:
        with prompt_case("p") as c:
            _prompt(c)
            with c.step("s") as s:
                s.must_mention("x")
                raise boom

    with use_registry(Registry()) as reg, pytest.raises(RuntimeError) as info:
        define()
    assert info.value is boom
    assert reg.cases == ()


def test_body_raises_an_incomplete_case_is_not_validated() -> None:
    boom = KeyError("missing")
    with use_registry(Registry()) as reg:
        with pytest.raises(KeyError) as info, prompt_case("p"):
            raise boom
        assert info.value is boom
        assert reg.cases == ()


def test_decorated_function_raises_nothing_is_registered() -> None:
    boom = ValueError("bad data")

    def define() -> None:
        @execution_case("e")
        def build(c: ExecutionBuilder) -> None:
            _execution(c)
            raise boom

    with use_registry(Registry()) as reg, pytest.raises(ValueError, match="bad data") as info:
        define()
    assert info.value is boom
    assert reg.cases == ()


def test_base_exceptions_propagate_too() -> None:
    def define() -> None:
        with prompt_case("p") as c:
            _prompt(c)
            raise KeyboardInterrupt

    with use_registry(Registry()) as reg, pytest.raises(KeyboardInterrupt):
        define()
    assert reg.cases == ()


def test_a_step_whose_body_raised_and_was_caught_is_discarded() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            _prompt(c)
            try:
                with c.step("flaky") as s:
                    s.must_mention("x")
                    raise LookupError
            except LookupError:
                pass
            with c.step("kept") as s:
                s.must_mention("y")
        (case,) = reg.cases
    assert [w.id for w in case.workflow] == ["kept"]


def test_registry_duplicate_id_propagates_and_names_both_places() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:  # @first
            _prompt(c)
        with pytest.raises(DefinitionError) as info, prompt_case("p") as c:  # @second
            _prompt(c)
        assert len(reg.cases) == 1
    assert f"first defined at {at('first')}, again at {at('second')}" in str(info.value)
    with pytest.raises(RecorderClosedError):
        c.tags("late")


def test_a_definition_is_used_once() -> None:
    with use_registry(Registry()):
        definition = prompt_case("p")
        with definition as c:
            _prompt(c)
        with (
            pytest.raises(DefinitionError, match=r"prompt_case\('p'\) from .* was already used"),
            definition,
        ):
            pass


# Closed recorders


def test_case_builder_is_closed_after_its_block() -> None:
    with use_registry(Registry()):
        with prompt_case("p") as c:  # @open
            _prompt(c)
        with pytest.raises(RecorderClosedError) as info:
            c.tags("late")  # @late-case
    message = str(info.value)
    assert message.startswith(f"{at('late-case')}: PromptBuilder of case 'p' is closed: .tags() was called")
    assert f"the block was opened at {at('open')}" in message
    assert "move the call inside the `with` block" in message


def test_case_builder_is_closed_after_a_failed_body_and_after_a_failed_finalize() -> None:
    with use_registry(Registry()):
        with pytest.raises(RuntimeError), prompt_case("p") as c:
            raise RuntimeError
        with pytest.raises(RecorderClosedError, match="PromptBuilder of case 'p' is closed"):
            c.category("x")
        with pytest.raises(DefinitionError), prompt_case("q") as d:
            pass
        with pytest.raises(RecorderClosedError, match="PromptBuilder of case 'q' is closed"):
            d.category("x")


def test_decorator_builder_is_closed_after_the_function_returns() -> None:
    kept: list[ExecutionBuilder] = []
    with use_registry(Registry()):

        @execution_case("e")
        def build(c: ExecutionBuilder) -> None:
            _execution(c)
            kept.append(c)

    with pytest.raises(RecorderClosedError, match="or inside the decorated function"):
        kept[0].task("late")


@pytest.mark.parametrize(
    ("open_block", "record", "label"),
    [
        (lambda c: c.step("s"), lambda s: s.must_mention("x"), "StepBuilder 's'"),
        (lambda c: c.workflow(), lambda w: w.snapshot(), "WorkflowBuilder"),
        (lambda c: c.assertions(), lambda a: a.no_live_sessions(), "AssertionsBuilder"),
        (lambda c: c.report(), lambda r: r.title(), "ReportBuilder"),
        (lambda c: c.proof_bundle(), lambda b: b.requires_notes(), "ProofBundleBuilder"),
    ],
)
def test_nested_recorders_are_closed_after_their_own_block(
    open_block: Callable[[Any], Any], record: Callable[[Any], object], label: str
) -> None:
    with use_registry(Registry()) as reg, dogfood_case("d") as c:
        c.category("qa")
        c.task("explore")
        c.artifact("notes")
        with open_block(c) as block:
            record(block)
        with pytest.raises(RecorderClosedError) as info:
            record(block)
    assert f"{label} of case 'd' is closed" in str(info.value)
    assert len(reg.cases) == 1


def test_nested_recorder_message_names_where_its_block_opened() -> None:
    with use_registry(Registry()), prompt_case("p") as c:
        _prompt(c)
        with c.step("observe") as s:  # @step
            s.must_mention("x")
        with pytest.raises(RecorderClosedError) as info:
            s.must_not_mention("y")  # @late-step
    message = str(info.value)
    assert message.startswith(f"{at('late-step')}: StepBuilder 'observe' of case 'p' is closed")
    assert f"(the block was opened at {at('step')})" in message


def test_a_closed_block_cannot_be_reentered() -> None:
    with use_registry(Registry()), prompt_case("p") as c:
        _prompt(c)
        step = c.step("once")
        with step as s:
            s.must_mention("x")
        with pytest.raises(RecorderClosedError, match="a block is used once"), step:
            pass


def test_nested_recorders_close_with_their_case() -> None:
    with use_registry(Registry()):
        with execution_case("e") as c:
            _execution(c)
            workflow = c.workflow().create_session()
        with pytest.raises(RecorderClosedError, match="WorkflowBuilder of case 'e' is closed"):
            workflow.destroy()


def _public_methods(cls: type) -> list[str]:
    return [n for n, v in inspect.getmembers(cls) if not n.startswith("_") and inspect.isfunction(v)]


def _call(recorder: object, name: str) -> object:
    """Call ``name`` with placeholder arguments: the closed guard runs before any argument is checked."""
    method = getattr(recorder, name)
    args: list[object] = []
    kwargs: dict[str, object] = {}
    for param in inspect.signature(method).parameters.values():
        if param.default is not inspect.Parameter.empty or param.kind in (
            param.VAR_POSITIONAL,
            param.VAR_KEYWORD,
        ):
            continue
        if param.kind is param.KEYWORD_ONLY:
            kwargs[param.name] = "x"
        else:
            args.append("x")
    return method(*args, **kwargs)


_BUILDERS: list[tuple[type, Callable[[Any], Any]]] = [
    (PromptBuilder, lambda c: c),
    (ExecutionBuilder, lambda c: c),
    (DogfoodBuilder, lambda c: c),
    (StepBuilder, lambda c: c.step("s")),
    (WorkflowBuilder, lambda c: c.workflow()),
    (AssertionsBuilder, lambda c: c.assertions()),
    (ReportBuilder, lambda c: c.report()),
    (ProofBundleBuilder, lambda c: c.proof_bundle()),
]
_DEFINE: dict[type, Callable[[str], Any]] = {PromptBuilder: prompt_case, ExecutionBuilder: execution_case}


@pytest.mark.parametrize(
    ("cls", "name"),
    [(cls, name) for cls, _ in _BUILDERS for name in _public_methods(cls)],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_every_public_method_of_every_builder_refuses_use_once_closed(cls: type, name: str) -> None:
    opener = dict(_BUILDERS)[cls]
    define: Callable[[str], Any] = _DEFINE.get(cls, dogfood_case)
    with use_registry(Registry()):
        with pytest.raises(DefinitionError), define("c") as c:  # incomplete case: the block still closes
            recorder = opener(c)
        with pytest.raises(RecorderClosedError, match=rf"\.{name}\(\) was called after its block ended"):
            _call(recorder, name)
