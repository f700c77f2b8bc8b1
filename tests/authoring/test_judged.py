"""Tests for the judged checks of the DSL: ``s.judge``, ``a.judge`` and ``c.rubric`` in every lane."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from skillgym.authoring import dogfood_case, execution_case, judged_by, prompt_case
from skillgym.errors import DefinitionError
from skillgym.fingerprint import canonical_bytes
from skillgym.model import Budget, ExecutionCase, JudgedCheck, PromptCase
from skillgym.registry import Registry, use_registry

from .support import at


def test_a_prompt_step_records_its_judged_checks_and_only_a_judge_may_grade_it() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("lazy") as c:
            c.category("explain")
            c.prompt("What does yield do?")
            c.expect_skill(None)
            with c.step("explains") as s:
                s.must_mention("yield")
                s.judge("the answer explains that yield makes the function lazy")  # @first
                s.judge("the answer gives an example", required=False)  # @second
            with c.step("only-judged") as s:
                s.judge("the answer is polite")  # @third
        (case,) = reg.cases
    assert isinstance(case, PromptCase)
    assert [w.id for w in case.workflow] == ["explains"]  # a judge-only step has no pattern check
    assert case.judged == (
        JudgedCheck(
            id="explains-judge",
            expectation="the answer explains that yield makes the function lazy",
            step="explains",
            origin=at("first"),
        ),
        JudgedCheck(
            id="explains-judge-2",
            expectation="the answer gives an example",
            required=False,
            step="explains",
            origin=at("second"),
        ),
        JudgedCheck(
            id="only-judged-judge", expectation="the answer is polite", step="only-judged", origin=at("third")
        ),
    )


def test_an_optional_step_makes_its_judged_checks_optional() -> None:
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:
            c.category("x")
            c.prompt("q")
            c.expect_skill(None)
            with c.step("s", required=False) as s:
                s.judge("anything")
        (case,) = reg.cases
    assert [j.required for j in case.judged] == [False]


def test_assertions_record_judged_checks_with_files_and_ids_shared_with_verifiers() -> None:
    with use_registry(Registry()) as reg:
        with execution_case("report") as c:
            c.category("data")
            c.task("write report.md naming the hottest month")
            with c.assertions() as a:
                a.file_exists("report.md")
                a.judge("report.md names the hottest month", files=["report.md"])  # @judge
                a.judge("the summary is short", required=False, id="short")
        (case,) = reg.cases
    assert isinstance(case, ExecutionCase)
    assert [v.id for v in case.verifiers] == ["file-exists-1"]
    assert case.judged == (
        JudgedCheck(
            id="judge-1",
            expectation="report.md names the hottest month",
            files=("report.md",),
            origin=at("judge"),
        ),
        msgspec.structs.replace(case.judged[1], id="short", required=False),
    )
    assert case.judged[1].expectation == "the summary is short"


def test_a_required_judge_alone_is_enough_for_an_execution_case() -> None:
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            c.category("x")
            c.task("t")
            with c.assertions() as a:
                a.judge("the task is done")
        (case,) = reg.cases
    assert case.judged[0].required


def test_a_dogfood_case_takes_judged_checks_and_a_rubric() -> None:
    with use_registry(Registry()) as reg:
        with dogfood_case("qa") as c:
            c.category("qa")
            c.task("explore the app")
            with c.report() as r:
                r.section("Findings")
            with c.assertions() as a:
                a.judge("the findings name a reproducible bug", files=["bundle/report.md"])
            c.rubric("the report is clear and every finding has evidence", points=5, pass_at=3, weight=2)
            c.rubric("the tone is neutral")
        (case,) = reg.cases
    assert [j.id for j in case.judged] == ["judge-1"]
    assert [(r.id, r.points, r.pass_at, r.weight) for r in case.rubric] == [
        ("rubric", 5, 3, 2.0),
        ("rubric-2", 4, None, 1.0),
    ]


@pytest.mark.parametrize("define", [prompt_case, execution_case, dogfood_case])
def test_every_lane_takes_grader_notes_once_and_they_change_the_fingerprint(define: Any) -> None:
    def build(notes: str | None) -> Any:
        with use_registry(Registry()) as reg:
            with define("n") as c:
                c.category("x")
                if define is prompt_case:
                    c.prompt("q")
                    c.expect_skill(None)
                else:
                    c.task("t")
                    with c.assertions() as a:
                        a.judge("the task is done")
                if define is dogfood_case:
                    with c.report() as r:
                        r.section("Findings")
                c.describe("for people reading reports")
                if notes is not None:
                    c.grader_notes(notes)
            (case,) = reg.cases
        return case

    noted = build("report.md names July as the hottest month")
    assert noted.grader_notes == "report.md names July as the hottest month"
    assert noted.description == "for people reading reports"
    assert noted.fingerprint != build(None).fingerprint
    assert build("a").fingerprint != build("b").fingerprint

    def twice() -> None:
        with define("n") as c:
            c.grader_notes("one")
            c.grader_notes("two")

    with (
        use_registry(Registry()),
        pytest.raises(DefinitionError, match=r"c.grader_notes\(\) was already called"),
    ):
        twice()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda a: a.judge(""), "a.judge() expectation is empty"),
        (lambda a: a.judge("x", files="report.md"), "write files=['report.md']"),
        (lambda a: a.judge("x", files=["/etc/passwd"]), "a.judge() file '/etc/passwd' is absolute"),
        (lambda a: a.judge("x", files=["../up.txt"]), "a.judge() file"),
    ],
)
def test_bad_judged_assertions_are_refused_at_their_line(call: Callable[[Any], object], message: str) -> None:
    def define() -> None:
        with execution_case("e") as c:
            c.category("x")
            c.task("t")
            with c.assertions() as a:
                a.file_exists("x")
                call(a)

    with use_registry(Registry()), pytest.raises(DefinitionError) as info:
        define()
    assert message in str(info.value)


def test_duplicate_judged_ids_name_both_places() -> None:
    def define() -> None:
        with execution_case("e") as c:
            c.category("x")
            c.task("t")
            with c.assertions() as a:
                a.judge("one", id="same")
            c.rubric("two", id="same")

    with use_registry(Registry()), pytest.raises(DefinitionError) as info:
        define()
    assert "duplicate judged check 'same'" in str(info.value)


def test_judged_checks_change_the_fingerprint_and_cases_without_them_keep_theirs() -> None:
    def build(judged: bool, rubric: bool) -> str:
        with use_registry(Registry()) as reg:
            with execution_case("e") as c:
                c.category("x")
                c.task("t")
                with c.assertions() as a:
                    a.file_exists("out.txt")
                    if judged:
                        a.judge("out.txt is tidy", files=["out.txt"])
                if rubric:
                    c.rubric("tidy")
            (case,) = reg.cases
        return case.fingerprint

    plain = build(False, False)
    assert len({plain, build(True, False), build(False, True), build(True, True)}) == 4


def test_cases_without_judged_checks_hash_as_before_the_fields_existed() -> None:
    execution = ExecutionCase(id="e", category="x", task="t", budget=Budget(timeout_s=60.0))
    assert b'"judged"' not in canonical_bytes(execution)
    assert b'"rubric"' not in canonical_bytes(execution)
    # Prompt cases always held a rubric (as text items, empty by default), so theirs is still hashed.
    prompt = PromptCase(id="p", category="x", prompt="q", budget=Budget(timeout_s=30.0))
    assert b'"rubric":[]' in canonical_bytes(prompt)
    assert b'"judged"' not in canonical_bytes(prompt)


def test_a_suite_names_its_judge_once_as_provider_and_model() -> None:
    with use_registry(Registry()) as reg:
        declared = judged_by("claude:claude-sonnet-4-5", min_kappa=0.6)
        suite = reg.build(".")
    assert (
        suite.judge == declared and declared.min_kappa == 0.6 and declared.judge == "claude:claude-sonnet-4-5"
    )
    for spec, kappa, message in [
        ("claude", None, "names a judge as PROVIDER:MODEL"),
        ("claude:a:b", None, "names a judge as PROVIDER:MODEL"),
        ("claude:m", 1.5, "min_kappa=...) is Cohen's kappa, a number from -1 to 1, got 1.5"),
    ]:
        with use_registry(Registry()), pytest.raises(DefinitionError, match=re.escape(message)):
            judged_by(spec, min_kappa=kappa)
    with use_registry(Registry()):
        judged_by("claude:a")
        with pytest.raises(DefinitionError, match=r"judged_by\(\) was already called at"):
            judged_by("claude:b")
