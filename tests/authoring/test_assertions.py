"""Tests for the assertions sugar: every verifier kind, auto ids, and the checks made at the call."""

from __future__ import annotations

import re

import msgspec
import pytest

from skillgym.authoring import AssertionsBuilder, ExecutionBuilder, execution_case
from skillgym.errors import DefinitionError
from skillgym.model import (
    ArtifactExists,
    CommandCheck,
    CustomVerifier,
    FileContains,
    FileExists,
    FixtureLogContains,
    NoLiveSessions,
    Pattern,
    Verifier,
)
from skillgym.registry import Registry, use_registry

from .support import at


def _case(c: ExecutionBuilder) -> None:
    c.category("session")
    c.task("do it")
    c.fixture("hello-prompt")


def _verifiers(build: object) -> tuple[Verifier, ...]:
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            _case(c)
            with c.assertions() as a:
                build(a)  # type: ignore[operator]
        (case,) = reg.cases
    return case.verifiers  # type: ignore[union-attr]


def _no_origin(verifiers: tuple[Verifier, ...]) -> list[Verifier]:
    return [msgspec.structs.replace(v, origin="") for v in verifiers]


def test_every_sugar_method_compiles_to_its_verifier() -> None:
    verifiers = _verifiers(
        lambda a: (
            a.file_exists("out/result.txt")
            .file_contains("snapshot.txt", r"ECHO:\s*hi")
            .fixture_received("hello world")
            .fixture_printed(r"READY>")
            .fixture_exited(0)
            .command(["pytest", "-q"], exit_code=1, stdout="failed", timeout_s=10)
            .no_live_sessions()
            .artifact_exists("screenshot", "*.png", min_count=2)
            .custom("evals.checks:screen_is_clean", threshold=3, names=["a"])
        )
    )
    assert _no_origin(verifiers) == [
        FileExists(id="file-exists-1", path="out/result.txt"),
        FileContains(
            id="file-contains-1", path="snapshot.txt", pattern=Pattern(regex=r"ECHO:\s*hi", flags="i")
        ),
        FixtureLogContains(
            id="fixture-received-1",
            fixture="hello-prompt",
            event="input",
            pattern=Pattern(regex=r"hello\ world", flags=""),
        ),
        FixtureLogContains(
            id="fixture-printed-1", fixture="hello-prompt", event="output", pattern=Pattern(regex="READY>")
        ),
        FixtureLogContains(
            id="fixture-exited-1",
            fixture="hello-prompt",
            event="exit",
            pattern=Pattern(regex="^0$", flags=""),
        ),
        CommandCheck(
            id="command-1",
            argv=("pytest", "-q"),
            exit_code=1,
            stdout_pattern=Pattern(regex="failed", flags="i"),
            timeout_s=10.0,
        ),
        NoLiveSessions(id="no-live-sessions-1"),
        ArtifactExists(id="artifact-exists-1", artifact="screenshot", min_count=2, path_patterns=("*.png",)),
        CustomVerifier(
            id="custom-1", target="evals.checks:screen_is_clean", config={"threshold": 3, "names": ["a"]}
        ),
    ]


def test_each_verifier_records_its_own_line() -> None:
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            _case(c)
            with c.assertions() as a:
                a.file_exists("a.txt")  # @first
                a.no_live_sessions()  # @second
        (case,) = reg.cases
    assert [v.origin for v in case.verifiers] == [at("first"), at("second")]  # type: ignore[union-attr]


def test_id_description_and_required_are_accepted_by_every_method() -> None:
    common = {"description": "why", "required": False}
    verifiers = _verifiers(
        lambda a: (
            a.file_exists("a", id="v1", **common)
            .file_contains("a", "x", id="v2", **common)
            .fixture_received("x", id="v3", **common)
            .fixture_printed("x", id="v4", **common)
            .fixture_exited(1, id="v5", **common)
            .command(["true"], id="v6", **common)
            .no_live_sessions(id="v7", **common)
            .artifact_exists("log", id="v8", **common)
            .custom("m:f", id="v9", **common)
            .no_live_sessions()
        )  # an execution case needs one required verifier
    )
    assert [(v.id, v.description, v.required) for v in verifiers[:-1]] == [
        (f"v{n}", "why", False) for n in range(1, 10)
    ]


def test_auto_ids_count_per_kind_and_skip_taken_ids() -> None:
    verifiers = _verifiers(
        lambda a: a.file_exists("a", id="file-exists-2").file_exists("b").file_exists("c").no_live_sessions()
    )
    assert [v.id for v in verifiers] == [
        "file-exists-2",
        "file-exists-1",
        "file-exists-3",
        "no-live-sessions-1",
    ]


def test_auto_ids_are_unique_across_blocks_and_raw_verifiers() -> None:
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            _case(c)
            c.raw_verifier(FileExists(id="file-exists-1", path="x"))
            with c.assertions() as a:
                a.file_exists("a")
            with c.assertions() as a:
                a.file_exists("b")
        (case,) = reg.cases
    assert [v.id for v in case.verifiers] == ["file-exists-1", "file-exists-2", "file-exists-3"]  # type: ignore[union-attr]


def test_fixture_checks_need_a_fixture_first() -> None:
    def define() -> None:
        with execution_case("e") as c:
            c.category("session")
            c.task("do it")
            with c.assertions() as a:
                a.fixture_received("hello")  # @early
            c.fixture("hello-prompt")

    with use_registry(Registry()) as reg, pytest.raises(DefinitionError) as info:
        define()
    assert reg.cases == ()
    assert info.value.origin == at("early")
    assert "call c.fixture(name) before a.fixture_received" in str(info.value)


def test_fixture_keyword_names_another_fixture() -> None:
    verifiers = _verifiers(lambda a: a.fixture_printed("up", fixture="server"))
    assert verifiers[0].fixture == "server"  # type: ignore[union-attr]


def test_fixture_received_accepts_a_compiled_regex() -> None:
    verifiers = _verifiers(lambda a: a.fixture_received(re.compile(r"hello\s+world", re.I)))
    assert verifiers[0].pattern == Pattern(regex=r"hello\s+world", flags="i")  # type: ignore[union-attr]


def test_fixture_exited_pattern_is_anchored() -> None:
    verifiers = _verifiers(lambda a: a.fixture_exited(130))
    assert verifiers[0].pattern == Pattern(regex="^130$", flags="")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda a: a.file_exists("/etc/passwd"), "a.file_exists() path '/etc/passwd' is absolute"),
        (
            lambda a: a.file_contains("../up.txt", "x"),
            "a.file_contains() path '../up.txt' climbs out with '..'",
        ),
        (
            lambda a: a.file_contains("a.txt", "(unclosed"),
            "invalid regex '(unclosed' in verifier 'file-contains-1'",
        ),
        (lambda a: a.fixture_exited("0"), "a.fixture_exited() code must be an int"),
        (lambda a: a.command("pytest -q"), "must be an argv list, not a shell string"),
        (lambda a: a.command(["true"], exit_code="0"), "a.command() exit_code must be an int"),
        (
            lambda a: a.command(["true"], timeout_s=-1),
            "a.command() timeout_s must be a number greater than 0",
        ),
        (lambda a: a.artifact_exists("video"), "unknown artifact kind 'video'"),
        (lambda a: a.artifact_exists("log", min_count=0), "min_count must be a whole number of at least 1"),
        (
            lambda a: a.custom("checks.screen"),
            "custom verifier target 'checks.screen' is not 'module:function'",
        ),
        (lambda a: a.custom("m:f", when=object()), "a.custom('m:f') config must be JSON data"),
        (lambda a: a.no_live_sessions(id="No Sessions"), "invalid verifier id 'No Sessions'"),
        (lambda a: a.raw("file-exists"), "expected a verifier Struct"),
    ],
)
def test_bad_arguments_fail_at_the_call(build: object, message: str) -> None:
    with use_registry(Registry()), pytest.raises(DefinitionError) as info:
        _verifiers(build)
    assert message in str(info.value)


def test_raw_verifier_inside_the_block() -> None:
    mine = CommandCheck(id="tests-pass", argv=("pytest",))
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            _case(c)
            with c.assertions() as a:
                a.raw(mine)  # @raw
        (case,) = reg.cases
    assert case.verifiers == (msgspec.structs.replace(mine, origin=at("raw")),)  # type: ignore[union-attr]


def test_builder_type_is_exported_for_annotations() -> None:
    def checks(a: AssertionsBuilder) -> None:
        a.no_live_sessions()

    assert [v.id for v in _verifiers(checks)] == ["no-live-sessions-1"]
