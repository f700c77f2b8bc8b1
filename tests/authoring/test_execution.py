"""Tests for the execution lane builder: task, fixture, setup, artifacts and raw escape hatches."""

from __future__ import annotations

import re

import msgspec
import pytest

from skillgym.authoring import ExecutionBuilder, execution_case
from skillgym.errors import DefinitionError
from skillgym.fingerprint import fingerprint
from skillgym.model import (
    ArtifactRequirement,
    Budget,
    Command,
    CommandCheck,
    ExecutionCase,
    FileContains,
    FileExists,
    FixtureLogContains,
    NoLiveSessions,
    Pattern,
    WorkflowCheck,
)
from skillgym.registry import Registry, use_registry

from .support import at


def _minimal(c: ExecutionBuilder) -> None:
    c.category("session")
    c.task("do it")
    with c.assertions() as a:
        a.file_exists("out.txt")


def test_design_example_compiles_to_the_exact_struct() -> None:
    with use_registry(Registry()) as reg:
        with execution_case("hello-prompt") as c:  # @case
            c.category("session")
            c.fixture("hello-prompt")
            c.workspace("tui-smoke")
            c.task("Send 'hello world', wait for READY>, save a snapshot to snapshot.txt, end the session")
            with c.workflow() as w:
                w.create_session().input("hello world").wait_for("READY>").snapshot().destroy()  # @chain
            with c.assertions() as a:
                a.file_contains("snapshot.txt", r"ECHO:\s*hello world")  # @contains
                a.fixture_received("hello world")  # @received
                a.no_live_sessions()  # @sessions
            c.budget(timeout_s=120, max_turns=12)
        (case,) = reg.cases
    chain = at("chain")
    expected = ExecutionCase(
        id="hello-prompt",
        category="session",
        fixture="hello-prompt",
        workspace="tui-smoke",
        task="Send 'hello world', wait for READY>, save a snapshot to snapshot.txt, end the session",
        budget=Budget(timeout_s=120.0, max_turns=12),
        workflow=(
            WorkflowCheck(
                id="create-session",
                description="start the program in a new tmux session",
                required=False,
                required_patterns=(Pattern(regex=r"\btmux\b.*\bnew(?:-session)?(?:[^\w-]|$)"),),
                origin=chain,
            ),
            WorkflowCheck(
                id="input",
                description="send 'hello world' to the program",
                required=False,
                required_patterns=(Pattern(regex=r"\btmux\b.*\bsend-keys\b.*hello\ world"),),
                depends_on=("create-session",),
                origin=chain,
            ),
            WorkflowCheck(
                id="wait-for",
                description="wait until the screen shows 'READY>' (no blind sleep)",
                required=False,
                required_patterns=(
                    Pattern(
                        regex=r"(?:(?:\bcapture-pane\b|\bwait[-_]?(?:for|until)\w*).*READY>|READY>.*(?:\bcapture-pane\b|\bwait[-_]?(?:for|until)\w*))"
                    ),
                ),
                depends_on=("input",),
                origin=chain,
            ),
            WorkflowCheck(
                id="snapshot",
                description="capture the pane's text",
                required=False,
                required_patterns=(Pattern(regex=r"\bcapture-pane\b"),),
                depends_on=("wait-for",),
                origin=chain,
            ),
            WorkflowCheck(
                id="destroy",
                description="end the tmux session",
                required=False,
                required_patterns=(Pattern(regex=r"\bkill-(?:session|server)\b"),),
                depends_on=("snapshot",),
                origin=chain,
            ),
        ),
        verifiers=(
            FileContains(
                id="file-contains-1",
                path="snapshot.txt",
                pattern=Pattern(regex=r"ECHO:\s*hello world", flags="i"),
                origin=at("contains"),
            ),
            FixtureLogContains(
                id="fixture-received-1",
                fixture="hello-prompt",
                event="input",
                pattern=Pattern(regex=r"hello\ world", flags=""),
                origin=at("received"),
            ),
            NoLiveSessions(id="no-live-sessions-1", origin=at("sessions")),
        ),
        origin=at("case"),
    )
    # Where each call was made is kept apart (see test_origins_name_each_call); it is no part of the case.
    assert msgspec.structs.replace(case, origins={}) == msgspec.structs.replace(
        expected, fingerprint=fingerprint(expected)
    )
    assert case.fingerprint == fingerprint(msgspec.structs.replace(case, origins={}))


def test_lane_default_budget() -> None:
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            _minimal(c)
        (case,) = reg.cases
    assert case.budget == Budget(timeout_s=120.0, max_turns=16)


def test_setup_commands_reference_steps_and_expect_skill() -> None:
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            _minimal(c)
            c.expect_skill("tmux-tui")
            c.setup(["python", "fixtures/hello.py", "--prepare"])
            c.setup(
                ("make", "seed"),
                id="seed",
                description="seed the data",
                timeout_s=5,
                cwd="app",
                env={"MODE": "test"},
            )
            c.reference_steps(5)
        (case,) = reg.cases
    assert isinstance(case, ExecutionCase)
    assert case.expected_skill == "tmux-tui"
    assert case.setup == (
        Command(argv=("python", "fixtures/hello.py", "--prepare"), id="setup-1", timeout_s=60.0),
        Command(
            argv=("make", "seed"),
            id="seed",
            description="seed the data",
            cwd="app",
            env={"MODE": "test"},
            timeout_s=5.0,
        ),
    )
    assert case.reference_steps == 5


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            "make test",
            "must be an argv list, not a shell string: use ['sh', '-c', ...] if you really need a shell",
        ),
        ([], "must be a non-empty argv list"),
        (["make", ""], "every argv item is a non-empty string"),
    ],
)
def test_setup_rejects_shell_strings_and_empty_argv(argv: object, message: str) -> None:
    with use_registry(Registry()), execution_case("e") as c:
        _minimal(c)
        with pytest.raises(DefinitionError) as info:
            c.setup(argv)  # type: ignore[arg-type]  # @setup
    assert message in str(info.value)
    assert info.value.origin == at("setup")


def test_setup_cwd_must_be_relative() -> None:
    with use_registry(Registry()), execution_case("e") as c:
        _minimal(c)
        with pytest.raises(DefinitionError, match=r"cwd '/tmp' is absolute"):
            c.setup(["true"], cwd="/tmp")


def test_reference_steps_must_be_positive() -> None:
    with use_registry(Registry()), execution_case("e") as c:
        _minimal(c)
        with pytest.raises(DefinitionError, match="reference_steps must be a whole number"):
            c.reference_steps(0)


def test_artifact_requirements() -> None:
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            _minimal(c)
            c.artifact("screenshot", "*.png", "shots/*.svg", min_count=2, description="two shots")  # @shot
            c.artifact("log", required=False)  # @log
        (case,) = reg.cases
    assert isinstance(case, ExecutionCase)
    assert case.artifacts == (
        ArtifactRequirement(
            artifact="screenshot",
            description="two shots",
            min_count=2,
            path_patterns=("*.png", "shots/*.svg"),
            origin=at("shot"),
        ),
        ArtifactRequirement(artifact="log", required=False, origin=at("log")),
    )


def test_artifact_kind_is_checked() -> None:
    with use_registry(Registry()), execution_case("e") as c:
        _minimal(c)
        with pytest.raises(DefinitionError, match="unknown artifact kind 'video'; use one of"):
            c.artifact("video")  # type: ignore[arg-type]


def test_raw_verifier_and_raw_artifact_requirement() -> None:
    verifier = FileExists(id="made-it", path="done.txt")
    requirement = ArtifactRequirement(artifact="json", path_patterns=("result.json",), origin="x.py:1")
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            c.category("session")
            c.task("do it")
            c.raw_verifier(verifier)  # @verifier
            c.raw_artifact_requirement(requirement)
        (case,) = reg.cases
    assert isinstance(case, ExecutionCase)
    assert case.verifiers == (msgspec.structs.replace(verifier, origin=at("verifier")),)
    assert case.artifacts == (requirement,)


def test_raw_escape_hatches_reject_other_types() -> None:
    with use_registry(Registry()), execution_case("e") as c:
        _minimal(c)
        with pytest.raises(DefinitionError, match="expected a verifier Struct"):
            c.raw_verifier(WorkflowCheck(id="x"))  # type: ignore[arg-type]
        with pytest.raises(DefinitionError, match=r"expected a skillgym\.model\.ArtifactRequirement"):
            c.raw_artifact_requirement(FileExists(id="x", path="y"))  # type: ignore[arg-type]


def test_raw_verifier_patterns_are_validated() -> None:
    bad = FileContains(id="broken", path="a.txt", pattern=Pattern(regex="[", flags="i"))
    with use_registry(Registry()), execution_case("e") as c:
        _minimal(c)
        with pytest.raises(DefinitionError) as info:
            c.raw_verifier(bad)
    assert "invalid regex '[' in verifier 'broken'" in str(info.value)


def test_raw_verifier_flags_must_be_known() -> None:
    bad = FileContains(id="broken", path="a.txt", pattern=Pattern(regex="a", flags="x"))
    with use_registry(Registry()), execution_case("e") as c:
        _minimal(c)
        with pytest.raises(DefinitionError, match="flags are a subset of 'ims'"):
            c.raw_verifier(bad)


def test_fixture_name_follows_the_id_rule() -> None:
    with (
        use_registry(Registry()),
        pytest.raises(DefinitionError, match="invalid fixture name 'Hello Prompt'"),
        execution_case("e") as c,
    ):
        c.fixture("Hello Prompt")


def test_setup_auto_ids_skip_ids_already_taken() -> None:
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            _minimal(c)
            c.setup(["a"], id="setup-1")
            c.setup(["b"])
        (case,) = reg.cases
    assert isinstance(case, ExecutionCase)
    assert [s.id for s in case.setup] == ["setup-1", "setup-2"]


def test_raw_verifier_turns_a_str_or_compiled_pattern_into_a_pattern() -> None:
    # The model holds a Pattern, and the grader reads its regex and flags: a str is a case-insensitive
    # regex, as everywhere in authoring, and a compiled pattern keeps its flags.
    given = FileContains(id="said", path="a.txt", pattern="hello.*world")  # type: ignore[arg-type]
    command = CommandCheck(id="ran", argv=("true",), stdout_pattern=re.compile("ok", re.M))  # type: ignore[arg-type]
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            c.category("session")
            c.task("do it")
            c.raw_verifier(given)  # @given
            c.raw_verifier(command)  # @command
        (case,) = reg.cases
    assert isinstance(case, ExecutionCase)
    assert case.verifiers == (
        FileContains(id="said", path="a.txt", pattern=Pattern(regex="hello.*world"), origin=at("given")),
        CommandCheck(
            id="ran", argv=("true",), stdout_pattern=Pattern(regex="ok", flags="m"), origin=at("command")
        ),
    )


def test_raw_verifier_refuses_a_str_pattern_that_does_not_compile() -> None:
    bad = FileContains(id="broken", path="a.txt", pattern="(")  # type: ignore[arg-type]
    with use_registry(Registry()), execution_case("e") as c:
        _minimal(c)
        with pytest.raises(DefinitionError) as info:
            c.raw_verifier(bad)  # @bad
    assert str(info.value).startswith(f"{at('bad')}: case 'e': invalid regex '(' in verifier 'broken'")
