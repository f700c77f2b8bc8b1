"""Tests for skillgym.grading.workflow: patterns in prose and commands, dependencies, weighted compliance."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillgym.grading.workflow import compliance, evaluate_workflow
from skillgym.model import Pattern, WorkflowCheck


def step(
    check_id: str,
    *required: str,
    forbidden: tuple[str, ...] = (),
    depends_on: tuple[str, ...] = (),
    is_required: bool = True,
    weight: float = 1.0,
) -> WorkflowCheck:
    return WorkflowCheck(
        id=check_id,
        required=is_required,
        required_patterns=tuple(Pattern(regex=r) for r in required),
        forbidden_patterns=tuple(Pattern(regex=r) for r in forbidden),
        depends_on=depends_on,
        weight=weight,
    )


def outcomes_of(checks: list[WorkflowCheck], text: str) -> dict[str, tuple[bool, str]]:
    return {
        o.id: (o.passed, o.message) for o in evaluate_workflow(checks, (text,), corpus="prose", gates=True)
    }


def test_required_patterns_present_and_forbidden_absent() -> None:
    checks = [step("wait", "wait", "READY", forbidden=(r"\bsleep\b",))]
    assert outcomes_of(checks, "I wait until READY appears.")["wait"][0]
    passed, message = outcomes_of(checks, "I wait 5 s.")["wait"]
    assert not passed
    assert "never mentions /READY/" in message


def test_forbidden_in_prose_respects_the_negation_window() -> None:
    checks = [step("wait", "wait", forbidden=(r"\bsleep\b",))]
    assert outcomes_of(checks, "I wait for READY instead of sleep.")["wait"][0]
    passed, message = outcomes_of(checks, "I wait, then sleep 5.")["wait"]
    assert not passed
    assert "forbidden /\\bsleep\\b/ at line 1" in message


def test_forbidden_in_commands_has_no_negation() -> None:
    checks = [step("wait", "grep", forbidden=(r"\bsleep\b",))]
    [outcome] = evaluate_workflow(
        checks, ("echo never; sleep 1", "grep READY out"), corpus="commands", gates=False
    )
    assert not outcome.passed
    assert "command 1" in outcome.message
    assert not outcome.required  # scored, never gating in this corpus


def test_commands_are_matched_one_at_a_time() -> None:
    checks = [step("send", r"tmux.*send-keys.*hello")]
    [split] = evaluate_workflow(
        checks, ("tmux -L s send-keys -t a x", "echo hello"), corpus="commands", gates=False
    )
    [whole] = evaluate_workflow(
        checks, ("tmux -L s send-keys -t a hello Enter",), corpus="commands", gates=False
    )
    assert not split.passed
    assert "no command run matches" in split.message
    assert whole.passed
    assert "command 1" in whole.message


def test_depends_on_chain() -> None:
    checks = [
        step("create", "new-session"),
        step("send", "send-keys", depends_on=("create",)),
        step("capture", "capture-pane", depends_on=("send",)),
    ]
    results = outcomes_of(checks, "send-keys then capture-pane")
    assert results["create"][0] is False
    assert results["send"] == (False, "depends on 'create', which failed")
    assert results["capture"] == (False, "depends on 'send', which failed")
    assert all(r[0] for r in outcomes_of(checks, "new-session, send-keys, capture-pane").values())


def test_unknown_dependency_fails_with_a_message() -> None:
    results = outcomes_of([step("a", "x", depends_on=("ghost",))], "x")
    assert results["a"][0] is False
    assert "depends on unknown step 'ghost'" in results["a"][1]


def test_cycles_fail_every_member_and_never_raise() -> None:
    checks = [
        step("a", "x", depends_on=("b",)),
        step("b", "x", depends_on=("a",)),
        step("c", "x", depends_on=("a",)),
        step("self", "x", depends_on=("self",)),
    ]
    results = outcomes_of(checks, "x")
    assert results["a"] == (False, "is part of a dependency cycle: a -> b -> a")
    assert results["b"] == (False, "is part of a dependency cycle: a -> b -> a")
    assert results["c"] == (False, "depends on 'a', which failed")
    assert results["self"] == (False, "is part of a dependency cycle: self -> self")


def test_gates_only_required_checks() -> None:
    checks = [step("a", "x"), step("b", "y", is_required=False)]
    outcomes = evaluate_workflow(checks, ("x",), corpus="prose", gates=True)
    assert [(o.id, o.required) for o in outcomes] == [("a", True), ("b", False)]


def test_weighted_compliance_counts_all_checks() -> None:
    checks = [step("a", "x", weight=3.0), step("b", "y", is_required=False, weight=1.0)]
    outcomes = evaluate_workflow(checks, ("x",), corpus="prose", gates=True)
    assert compliance(checks, outcomes) == 0.75
    assert compliance([], ()) is None
    zero = [step("a", "x", weight=0.0)]
    assert compliance(zero, evaluate_workflow(zero, ("x",), corpus="prose", gates=True)) is None


@given(
    weights=st.lists(st.floats(min_value=0.0, max_value=10.0), min_size=1, max_size=6),
    text=st.text(alphabet=st.sampled_from("abc \n"), max_size=40),
)
def test_compliance_is_a_share(weights: list[float], text: str) -> None:
    checks = [step(f"s{i}", "a" * (i + 1), weight=w) for i, w in enumerate(weights)]
    share = compliance(checks, evaluate_workflow(checks, (text,), corpus="prose", gates=True))
    assert share is None or 0.0 <= share <= 1.0
