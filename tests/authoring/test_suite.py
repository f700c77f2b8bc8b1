"""Tests for suite-level definitions: skills, conditions, workspace presets, anti-pattern rules, secrets."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from skillgym.authoring import anti_pattern, condition, execution_case, secret, skill, workspace_preset
from skillgym.errors import DefinitionError
from skillgym.model import AntiPatternRule, Command, Condition, Pattern, Skill, SkillInstall, WorkspacePreset
from skillgym.registry import Registry, use_registry

from .support import at, shown


def test_skill() -> None:
    with use_registry(Registry()) as reg:
        declared = skill(  # @skill
            "tmux-tui",
            "skills/tmux-tui",
            stub="conditions/tmux-tui.stub.md",
            stale="conditions/tmux-tui.stale.md",
        )
        plain = skill("tui-qa", "skills/tui-qa")  # @plain
        suite = reg.build("evals")
    assert declared == Skill(
        name="tmux-tui",
        path="skills/tmux-tui",
        stub="conditions/tmux-tui.stub.md",
        stale="conditions/tmux-tui.stale.md",
        origin=at("skill"),
    )
    assert plain == Skill(name="tui-qa", path="skills/tui-qa", origin=at("plain"))
    assert suite.skills == (declared, plain)


def test_condition() -> None:
    with use_registry(Registry()) as reg:
        declared = condition(  # @condition
            "self-load-stub",
            description="only the bootstrap stub",
            inject=["conditions/tmux-tui.stub.md"],
            inject_text="Skills live in ~/.claude/skills.",
            install=[("tmux-tui", "skills/tmux-tui"), SkillInstall(name="tui-qa", source="skills/tui-qa")],
            env={"SKILLGYM_CONDITION": "stub"},
        )
        bare = condition("none")  # @bare
        suite = reg.build("evals")
    assert declared == Condition(
        id="self-load-stub",
        description="only the bootstrap stub",
        inject=("conditions/tmux-tui.stub.md",),
        inject_text="Skills live in ~/.claude/skills.",
        install=(
            SkillInstall(name="tmux-tui", source="skills/tmux-tui"),
            SkillInstall(name="tui-qa", source="skills/tui-qa"),
        ),
        env={"SKILLGYM_CONDITION": "stub"},
        origin=at("condition"),
    )
    assert bare == Condition(id="none", origin=at("bare"))
    assert suite.conditions == (bare, declared)  # "none" replaces the default in its place; the other adds


def test_workspace_preset() -> None:
    with use_registry(Registry()) as reg:
        declared = workspace_preset(  # @preset
            "tui-smoke",
            mode="shared",
            description="empty workspace with notes",
            template="templates/tui",
            bootstrap=[["git", "init", "-q"], ("touch", "NOTES.md"), Command(argv=("make",), id="build")],
            cwd="app",
            env={"TERM": "xterm-256color"},
        )
        default = workspace_preset("empty")
        reg.build("evals")
    assert declared == WorkspacePreset(
        id="tui-smoke",
        mode="shared",
        description="empty workspace with notes",
        template="templates/tui",
        bootstrap=(
            Command(argv=("git", "init", "-q"), id="bootstrap-1"),
            Command(argv=("touch", "NOTES.md"), id="bootstrap-2"),
            Command(argv=("make",), id="build"),
        ),
        cwd="app",
        env={"TERM": "xterm-256color"},
        origin=at("preset"),
    )
    assert default.mode == "isolated"
    assert default.bootstrap == ()


def test_suite_anti_pattern() -> None:
    with use_registry(Registry()) as reg:
        rule = anti_pattern(  # @rule
            "blind-sleep",
            r"\bsleep\s+\d+\b",
            re.compile(r"time\.sleep", re.M),
            severity="error",
            description="sleeping instead of waiting on output",
            suggested_fix="poll capture-pane for the text",
        )
        suite = reg.build("evals")
    assert rule == AntiPatternRule(
        id="blind-sleep",
        description="sleeping instead of waiting on output",
        severity="error",
        patterns=(Pattern(regex=r"\bsleep\s+\d+\b", flags="i"), Pattern(regex=r"time\.sleep", flags="m")),
        suggested_fix="poll capture-pane for the text",
        origin=at("rule"),
    )
    assert suite.anti_patterns == (rule,)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: skill("Tmux", "skills/tmux"), "invalid skill name 'Tmux'"),
        (lambda: skill("tmux", "/abs/skills/tmux"), "skill path '/abs/skills/tmux' is absolute"),
        (lambda: skill("tmux", "../skills"), "skill path '../skills' climbs out with '..'"),
        (lambda: skill("tmux", "skills", stub="C:\\stub.md"), "stub path 'C:\\\\stub.md' is absolute"),
        (lambda: condition("Self Load"), "invalid condition id 'Self Load'"),
        (lambda: condition("c", inject=["/etc/motd"]), "inject path '/etc/motd' is absolute"),
        (
            lambda: condition("c", install=["tmux-tui"]),  # type: ignore[list-item]
            "install item 'tmux-tui' must be a (name, source) pair",
        ),
        (lambda: condition("c", install=[("tmux", "../x")]), "installed skill source '../x' climbs out"),
        (lambda: condition("c", env={"A=B": "x"}), "has an invalid variable name 'A=B'"),
        (
            lambda: condition("c", env=["A"]),  # type: ignore[arg-type]
            "env of condition 'c' must be a mapping",
        ),
        (
            lambda: workspace_preset("p", bootstrap=["make test"]),
            "bootstrap command 1 'make test' must be an argv list, not a shell string: "
            "use ['sh', '-c', ...] if you really need a shell",
        ),
        (
            lambda: workspace_preset("p", bootstrap="make"),
            "bootstrap 'make' must be an argv list, not a shell string",
        ),
        (
            lambda: workspace_preset("p", mode="private"),  # type: ignore[arg-type]
            "unknown workspace mode 'private'",
        ),
        (
            lambda: workspace_preset("p", template="/srv/t"),
            "template '/srv/t' is absolute; paths are relative",
        ),
        (lambda: workspace_preset("p", cwd="a/../../b"), "cwd 'a/../../b' climbs out with '..'"),
        (lambda: anti_pattern("r"), "anti_pattern('r', ...) needs at least one pattern"),
        (lambda: anti_pattern("r", "("), "invalid regex '(' in anti-pattern 'r'"),
        (
            lambda: anti_pattern("r", "x", severity="fatal"),  # type: ignore[arg-type]
            "unknown severity 'fatal'",
        ),
    ],
)
def test_suite_definitions_are_validated_at_the_call(call: Callable[[], object], message: str) -> None:
    with use_registry(Registry()) as reg:
        with pytest.raises(DefinitionError) as info:
            call()
        suite = reg.build("evals")
    assert (suite.skills, suite.presets, suite.anti_patterns) == ((), (), ())  # nothing was recorded
    assert [c.id for c in suite.conditions] == ["none"]
    assert message in str(info.value)
    assert info.value.origin == f"{shown(__file__)}:{call.__code__.co_firstlineno}"


def test_absolute_path_error_suggests_the_relative_form() -> None:
    with use_registry(Registry()), pytest.raises(DefinitionError, match="use 'skills/tmux'"):
        skill("tmux", "/skills/tmux")


def test_duplicates_are_reported_by_the_registry_with_both_places() -> None:
    with use_registry(Registry()):
        condition("stub")  # @first
        with pytest.raises(DefinitionError) as info:
            condition("stub")  # @second
    assert f"duplicate condition 'stub': first defined at {at('first')}, again at {at('second')}" in str(
        info.value
    )


def _show_key(marked: str) -> None:
    with execution_case("show-key") as c:
        c.category("session")
        c.env({"HOST_AUTH": marked})
        c.task(f"use {marked}")
        with c.assertions() as a:
            a.file_exists("done.txt")


def test_a_marked_secret_is_returned_as_it_is_recorded_and_kept_out_of_the_fingerprint() -> None:
    fingerprints = []
    for value in ("first-credential", "rotated-credential-2"):
        with use_registry(Registry()) as reg:
            assert secret(value) is value
            secret(value)  # marking twice records it once
            _show_key(value)
            suite = reg.build("evals")
        assert suite.secrets == (value,)
        fingerprints.append(suite.cases[0].fingerprint)
    with use_registry(Registry()) as reg:
        _show_key("first-credential")  # the same case, the value unmarked
        unmarked = reg.build("evals").cases[0].fingerprint
    # Rotating a marked credential keeps the fingerprint; the value itself is not what is hashed.
    assert fingerprints[0] == fingerprints[1] != unmarked


def test_a_suite_file_that_fails_forgets_the_secrets_it_marked() -> None:
    registry = Registry()
    with use_registry(registry):
        secret("kept-secret")
        mark = registry.mark()
        secret("dropped-secret")
        registry.rollback(mark)
    assert registry.build("evals").secrets == ("kept-secret",)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (12345678, "skillgym.secret() takes a string, got int; convert it with str()"),
        ("short", "was given a value of 5 characters; skillgym scrubs values of 6 or more"),
    ],
)
def test_a_secret_too_short_to_scrub_or_not_a_string_is_refused_without_showing_it(
    value: object, expected: str
) -> None:
    with use_registry(Registry()), pytest.raises(DefinitionError) as info:
        secret(value)  # type: ignore[arg-type]  # @call
    message = str(info.value)
    assert message.startswith(f"{at('call')}: ") and expected in message
    assert "short'" not in message


def test_trials_default_and_case_override() -> None:
    from skillgym.authoring import prompt_case, trials
    from skillgym.model import TrialPolicy

    with use_registry(Registry()) as reg:
        skill("s", "skills/s")
        trials("auto", max_trials=12)
        with prompt_case("a") as c:
            c.category("x")
            c.prompt("p")
            c.expect_skill(None)
            c.trials(4)
        with prompt_case("b") as c:
            c.category("x")
            c.prompt("p")
            c.expect_skill(None)
            c.trials("auto", futility=None)
        suite = reg.build("evals")
    assert suite.trials == TrialPolicy(auto=True, min_trials=3, max_trials=12, futility=1.5)
    assert suite.cases[0].trials == TrialPolicy(count=4)
    assert suite.cases[1].trials == TrialPolicy(auto=True, futility=None)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("c.trials('auto', max_trials=2, min_trials=5)", "min_trials=5 above max_trials=2"),
        ("c.trials(3, max_trials=5)", "max_trials=, min_trials= and futility= only with 'auto'"),
        ("c.trials(3, futility=1)", "futility= only with 'auto'"),
        ("c.trials('auto', futility=-1)", "c.trials() futility must be a number at least 0"),
        ("c.trials(0)", "c.trials() count must be a whole number of at least 1"),
        ("c.trials('many')", "c.trials() count must be a whole number"),
        ("c.trials(2); c.trials(3)", "c.trials() was already called"),
    ],
)
def test_bad_trials_are_definition_errors(call: str, message: str) -> None:
    from skillgym.authoring import prompt_case

    def define() -> None:
        with prompt_case("a") as c:
            c.category("x")
            c.prompt("p")
            c.expect_skill(None)
            exec(call, {"c": c})

    with use_registry(Registry()), pytest.raises(DefinitionError, match=re.escape(message)):
        define()


def test_a_suite_sets_its_default_trials_once() -> None:
    from skillgym.authoring import trials

    with use_registry(Registry()):
        trials(2)
        with pytest.raises(DefinitionError, match="already called"):
            trials(3)
