"""Fingerprints of authored cases: stable across definitions, blind to cosmetics, sensitive to grading."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from skillgym.authoring import ExecutionBuilder, PromptBuilder, execution_case, prompt_case
from skillgym.model import Case
from skillgym.registry import Registry, use_registry

_text = st.text(min_size=1, max_size=40).filter(lambda s: s.strip() != "")
_literal_patterns = st.lists(_text.map(re.escape), min_size=1, max_size=4)


def _prompt(
    patterns: list[str], *, description: str = "", tags: tuple[str, ...] = (), category: str = "trigger"
) -> Case:
    with use_registry(Registry()) as reg:
        with prompt_case("wait-for-output") as c:
            _fill(c, patterns, description=description, tags=tags, category=category)
        (case,) = reg.cases
    return case


def _prompt_elsewhere(patterns: list[str]) -> Case:
    # The same definition at another file:line: only the origins differ.
    with use_registry(Registry()) as reg:

        @prompt_case("wait-for-output")
        def build(c: PromptBuilder) -> None:
            _fill(c, patterns, description="", tags=(), category="trigger")

        (case,) = reg.cases
    return case


def _fill(
    c: PromptBuilder, patterns: list[str], *, description: str, tags: tuple[str, ...], category: str
) -> None:
    c.category(category)
    c.prompt("I need to wait until my server prints 'Listening on port 3000'")
    c.expect_skill("tmux-tui")
    if description:
        c.describe(description)
    if tags:
        c.tags(*tags)
    with c.step("observe-readiness", description=description) as s:
        s.must_mention(*patterns)


@settings(max_examples=60, deadline=None)
@given(patterns=_literal_patterns, description=_text, tags=st.lists(_text, max_size=3), category=_text)
def test_same_definition_same_fingerprint_whatever_the_cosmetics(
    patterns: list[str], description: str, tags: list[str], category: str
) -> None:
    plain = _prompt(patterns)
    again = _prompt(patterns)
    dressed = _prompt(patterns, description=description, tags=tuple(tags), category=category)
    moved = _prompt_elsewhere(patterns)
    assert plain.fingerprint == again.fingerprint == dressed.fingerprint == moved.fingerprint
    assert plain.origin != moved.origin
    assert dressed.description == description


@settings(max_examples=60, deadline=None)
@given(patterns=_literal_patterns, extra=_text)
def test_changing_a_pattern_changes_the_fingerprint(patterns: list[str], extra: str) -> None:
    changed = [*patterns[:-1], patterns[-1] + re.escape(extra)]
    assert _prompt(patterns).fingerprint != _prompt(changed).fingerprint


def _execution(pattern: str, *, description: str = "") -> Case:
    with use_registry(Registry()) as reg:
        with execution_case("hello-prompt") as c:
            _fill_execution(c, pattern, description)
        (case,) = reg.cases
    return case


def _fill_execution(c: ExecutionBuilder, pattern: str, description: str) -> None:
    c.category("session")
    c.fixture("hello-prompt")
    c.task("Send 'hello world' and save a snapshot")
    with c.workflow() as w:
        w.create_session().input("hello world").snapshot()
    with c.assertions() as a:
        a.file_contains("snapshot.txt", pattern, description=description)


def test_execution_fingerprint_ignores_verifier_descriptions_but_not_patterns() -> None:
    base = _execution(r"ECHO:\s*hello world")
    assert base.fingerprint == _execution(r"ECHO:\s*hello world", description="the echo").fingerprint
    assert base.fingerprint != _execution(r"ECHO:\s*hello").fingerprint


def test_fingerprint_tracks_flags_and_lane_defaults() -> None:
    with use_registry(Registry()) as reg:
        for case_id, pattern in (("a", "wait"), ("b", re.compile("wait"))):
            with prompt_case(case_id) as c:
                c.category("trigger")
                c.prompt("same prompt")
                c.expect_skill(None)
                c.must_mention(pattern)
        first, second = reg.cases
    # Same text but different flags ("i" vs ""): grading differs, so does the fingerprint.
    assert first.fingerprint != second.fingerprint
