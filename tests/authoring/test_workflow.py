"""Tests for the workflow sugar: default patterns from the vocabulary, auto ids, chaining and overrides."""

from __future__ import annotations

import re

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillgym.authoring import ExecutionBuilder, WorkflowBuilder, execution_case, vocabulary
from skillgym.errors import DefinitionError
from skillgym.model import Pattern, WorkflowCheck
from skillgym.registry import Registry, use_registry

from .support import at


def _minimal(c: ExecutionBuilder) -> None:
    c.category("session")
    c.task("do it")
    with c.assertions() as a:
        a.no_live_sessions()


def _workflow(build: object) -> tuple[WorkflowCheck, ...]:
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            _minimal(c)
            with c.workflow() as w:
                build(w)  # type: ignore[operator]
        (case,) = reg.cases
    return case.workflow


def _matches(check: WorkflowCheck, command: str) -> bool:
    flags = 0
    for letter, flag in (("i", re.I), ("m", re.M), ("s", re.S)):
        if letter in check.required_patterns[0].flags:
            flags |= flag
    return all(re.search(p.regex, command, flags) for p in check.required_patterns)


def test_each_sugar_method_appends_one_step_with_the_vocabulary_defaults() -> None:
    checks = _workflow(
        lambda w: (
            w.create_session()
            .input("hello world")
            .run("echo test")
            .wait_for("READY>")
            .snapshot()
            .screenshot()
            .resize(100, 30)
            .destroy()
        )
    )
    assert [c.id for c in checks] == [
        "create-session",
        "input",
        "run",
        "wait-for",
        "snapshot",
        "screenshot",
        "resize",
        "destroy",
    ]
    assert [c.required_patterns for c in checks] == [
        vocabulary.patterns(vocabulary.WORKFLOW["create_session"]),
        vocabulary.patterns(vocabulary.WORKFLOW["input"], text="hello world"),
        vocabulary.patterns(vocabulary.WORKFLOW["run"], text="echo test"),
        vocabulary.patterns(vocabulary.WORKFLOW["wait_for"], text="READY>"),
        vocabulary.patterns(vocabulary.WORKFLOW["snapshot"]),
        vocabulary.patterns(vocabulary.WORKFLOW["screenshot"]),
        vocabulary.patterns(vocabulary.WORKFLOW["resize"], cols=100, rows=30),
        vocabulary.patterns(vocabulary.WORKFLOW["destroy"]),
    ]
    assert all(c.required is False for c in checks)
    assert [c.depends_on for c in checks] == [(), *[(prev.id,) for prev in checks[:-1]]]
    assert checks[6].description == "resize the terminal to 100x30"
    assert checks[2].description == "run the command 'echo test' in the session"


@pytest.mark.parametrize(
    ("sugar", "hits", "misses"),
    [
        (
            lambda w: w.create_session(),
            ["tmux new-session -d -s app 'python app.py'", "tmux -S sock new -d -s x"],
            ["tmux new-window -t app", "tmux ls"],
        ),
        (
            lambda w: w.input("hello world"),
            ["tmux send-keys -t app 'hello world' Enter", 'TMUX SEND-KEYS -t app "hello world" Enter'],
            ["tmux send-keys -t app 'hello' Enter", "echo 'hello world'"],
        ),
        (
            lambda w: w.run("ls -la (x)"),
            ["tmux send-keys -t app 'ls -la (x)' C-m"],
            ["tmux send-keys -t app 'ls -la x' C-m"],
        ),
        (
            lambda w: w.wait_for("READY>"),
            [
                "until tmux capture-pane -p -t app | grep -q 'READY>'; do sleep 0.1; done",
                "./scripts/wait-for.sh app 'READY>'",
                "grep -q 'READY>' <(tmux capture-pane -p)",
            ],
            ["sleep 5 && echo READY>", "tmux capture-pane -p -t app"],
        ),
        (lambda w: w.snapshot(), ["tmux capture-pane -p -t app > snapshot.txt"], ["tmux send-keys -t app x"]),
        (
            lambda w: w.screenshot(),
            ["freeze --output shot.png", "aha < pane.txt > pane.html"],
            ["cat shot.txt"],
        ),
        (
            lambda w: w.resize(100, 30),
            ["tmux resize-window -t app -x 100 -y 30", "tmux resize-pane -y 30 -x 100"],
            ["tmux resize-window -t app -x 80 -y 24", "stty cols 100 rows 30"],
        ),
        (
            lambda w: w.destroy(),
            ["tmux kill-session -t app", "tmux -L sg kill-server"],
            ["tmux detach-client", "tmux kill-pane -t 1"],
        ),
    ],
)
def test_default_patterns_match_the_commands_they_describe(
    sugar: object, hits: list[str], misses: list[str]
) -> None:
    (check,) = _workflow(sugar)
    for command in hits:
        assert _matches(check, command), command
    for command in misses:
        assert not _matches(check, command), command


def test_auto_ids_stay_unique_within_the_case_across_blocks_and_steps() -> None:
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            _minimal(c)
            with c.step("input") as s:
                s.must_mention("typing")
            with c.workflow() as w:
                w.create_session().input("a").input("b")
            with c.workflow() as w:
                w.create_session().snapshot().snapshot()
        (case,) = reg.cases
    assert [c.id for c in case.workflow] == [
        "input",
        "create-session",
        "input-2",
        "input-3",
        "create-session-2",
        "snapshot",
        "snapshot-2",
    ]
    # Each block is its own chain: the second block starts with no dependency.
    assert case.workflow[4].depends_on == ()
    assert case.workflow[2].depends_on == ("create-session",)


def test_patterns_and_id_overrides() -> None:
    checks = _workflow(
        lambda w: w.create_session(
            id="boot", patterns=[r"\bscreen\b -dmS", re.compile("byobu", re.S)]
        ).wait_for("$ ", patterns=r"\bexpect\b")
    )
    assert checks[0] == WorkflowCheck(
        id="boot",
        description="start the program in a new tmux session",
        required=False,
        required_patterns=(Pattern(regex=r"\bscreen\b -dmS", flags="i"), Pattern(regex="byobu", flags="s")),
        origin=checks[0].origin,
    )
    assert checks[1].id == "wait-for"
    assert checks[1].depends_on == ("boot",)
    assert checks[1].required_patterns == (Pattern(regex=r"\bexpect\b", flags="i"),)


def test_user_text_is_escaped_into_the_pattern() -> None:
    (check,) = _workflow(lambda w: w.input("a.b*c (d)"))
    assert check.required_patterns[0].regex.endswith(re.escape("a.b*c (d)"))


@given(st.text())
def test_any_user_text_is_filled_in_as_re_escape_writes_it(text: str) -> None:
    phrase = vocabulary.WORKFLOW["input"]
    (pattern,) = vocabulary.patterns(phrase, text=text)
    assert pattern.regex == phrase.patterns[0].replace("{text}", re.escape(text))
    assert vocabulary.describe(phrase, text=text) == f"send {text!r} to the program"


def test_placeholders_without_a_value_stay_as_written() -> None:
    phrase = vocabulary.Phrase("x", "wait {n} times", (r"a{2}{n}",))
    assert vocabulary.describe(phrase) == "wait {n} times"
    assert vocabulary.patterns(phrase) == (Pattern(regex=r"a{2}{n}"),)
    assert vocabulary.patterns(phrase, n=3) == (Pattern(regex=r"a{2}3"),)


def test_raw_check_joins_the_chain() -> None:
    raw = WorkflowCheck(id="inspect", required=False, required_patterns=(Pattern(regex="list-sessions"),))
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            _minimal(c)
            with c.workflow() as w:
                w.create_session().raw(raw).destroy()  # @chain
        (case,) = reg.cases
    assert case.workflow[1] == msgspec.structs.replace(raw, origin=at("chain"))
    assert case.workflow[2].depends_on == ("inspect",)


def test_workflow_without_with_still_records() -> None:
    with use_registry(Registry()) as reg:
        with execution_case("e") as c:
            _minimal(c)
            c.workflow().create_session().destroy()
        (case,) = reg.cases
    assert [w.id for w in case.workflow] == ["create-session", "destroy"]


def test_an_invalid_override_regex_is_reported_at_the_call() -> None:
    with use_registry(Registry()), execution_case("e") as c:
        _minimal(c)
        with c.workflow() as w:
            with pytest.raises(DefinitionError) as info:
                w.snapshot(patterns=["capture-pane("])  # @bad
            w.snapshot()  # the block goes on: the error came from the call, not from finalize
    assert str(info.value) == (
        f"{at('bad')}: case 'e': invalid regex 'capture-pane(' in step 'snapshot': missing ), unterminated "
        "subpattern at position 12; fix the expression or pass re.escape(text) for a literal"
    )


@pytest.mark.parametrize(
    ("sugar", "message"),
    [
        (lambda w: w.input(""), "w.input() text is empty"),
        (lambda w: w.run(3), "w.run() command must be a string"),
        (lambda w: w.resize(0, 30), "w.resize() cols must be a whole number of at least 1, got 0"),
        (lambda w: w.snapshot(id="Snap Shot"), "invalid step id 'Snap Shot'"),
        (lambda w: w.destroy(patterns=[]), "w.destroy(patterns=...) needs at least one pattern"),
    ],
)
def test_bad_sugar_arguments(sugar: object, message: str) -> None:
    with use_registry(Registry()), pytest.raises(DefinitionError) as info:
        _workflow(sugar)
    assert message in str(info.value)


def test_builder_type_is_exported_for_annotations() -> None:
    def chain(w: WorkflowBuilder) -> WorkflowBuilder:
        return w.create_session()

    checks = _workflow(chain)
    assert checks[0].id == "create-session"
