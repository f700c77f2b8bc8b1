"""Tests for pattern conversion: str is a case-insensitive regex, compiled patterns keep their flags."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillgym.authoring.checks import check_pattern, suggest_id, to_pattern
from skillgym.errors import DefinitionError
from skillgym.model import Pattern

_WHERE = {"where": "in step 's'", "case_id": "c", "origin": "x.py:1"}


def test_a_str_is_a_case_insensitive_regex() -> None:
    assert to_pattern(r"wait\s+for", **_WHERE) == Pattern(regex=r"wait\s+for", flags="i")


@pytest.mark.parametrize(
    ("flags", "letters"),
    [
        (0, ""),
        (re.I, "i"),
        (re.M, "m"),
        (re.S, "s"),
        (re.I | re.M | re.S, "ims"),
        (re.S | re.I, "is"),
    ],
)
def test_a_compiled_pattern_keeps_its_flags(flags: int, letters: str) -> None:
    assert to_pattern(re.compile("a.b", flags), **_WHERE) == Pattern(regex="a.b", flags=letters)


def test_inline_flags_travel_inside_the_expression() -> None:
    assert to_pattern(re.compile("(?s)a.b"), **_WHERE) == Pattern(regex="(?s)a.b", flags="")


def test_verbose_mode_inline_is_refused_because_re2_lacks_it() -> None:
    with pytest.raises(DefinitionError, match=r"uses verbose mode '\(\?x\)'"):
        to_pattern(re.compile("(?x) a b"), **_WHERE)


@pytest.mark.parametrize("flag", [re.X, re.A, re.X | re.I])
def test_other_flags_are_definition_errors(flag: int) -> None:
    with pytest.raises(DefinitionError) as info:
        to_pattern(re.compile("a", flag), **_WHERE)
    assert "unsupported regex flag" in str(info.value)
    assert "only re.I, re.M and re.S reach the grader" in str(info.value)
    assert info.value.origin == "x.py:1"


def test_bytes_patterns_and_other_types_are_refused() -> None:
    with pytest.raises(DefinitionError, match="bytes pattern b'a'"):
        to_pattern(re.compile(b"a"), **_WHERE)
    with pytest.raises(
        DefinitionError, match=r"must be a str \(a regex\) or a compiled re\.Pattern, got int 3"
    ):
        to_pattern(3, **_WHERE)


def test_an_empty_pattern_would_match_anything() -> None:
    with pytest.raises(DefinitionError, match="empty pattern in step 's': it would match any text"):
        to_pattern("", **_WHERE)


def test_invalid_regex_message() -> None:
    with pytest.raises(DefinitionError) as info:
        to_pattern("(", **_WHERE)
    assert str(info.value) == (
        "x.py:1: case 'c': invalid regex '(' in step 's': missing ), unterminated subpattern at position 0; "
        "fix the expression or pass re.escape(text) for a literal"
    )
    assert isinstance(info.value.__cause__, re.error)


def test_check_pattern_accepts_structs_and_strings() -> None:
    assert check_pattern(Pattern(regex="a", flags="ms"), **_WHERE) == Pattern(regex="a", flags="ms")
    assert check_pattern("b", **_WHERE) == Pattern(regex="b", flags="i")
    with pytest.raises(DefinitionError, match="flags are a subset of 'ims'"):
        check_pattern(Pattern(regex="a", flags="g"), **_WHERE)


@given(st.text(min_size=1))
def test_any_escaped_text_is_a_valid_pattern_that_finds_itself(text: str) -> None:
    pattern = to_pattern(re.escape(text), **_WHERE)
    assert re.search(pattern.regex, text, re.I)


@given(st.text())
def test_suggested_ids_follow_the_id_rule(text: str) -> None:
    assert re.fullmatch(r"[a-z0-9][a-z0-9._-]*", suggest_id(text))


_SYNTAX_CHARS = set("\\.^$*+?{}[]|()")


@given(text=st.text(min_size=1).filter(lambda t: not _SYNTAX_CHARS & set(t)))
def test_text_without_regex_syntax_is_accepted_and_compiles_under_every_flag(text: str) -> None:
    # Such text is accepted without compiling it; this is why that is sound.
    assert to_pattern(text, **_WHERE) == Pattern(regex=text, flags="i")
    assert check_pattern(Pattern(regex=text, flags="ims"), **_WHERE).regex == text
    re.compile(text, re.I | re.M | re.S)


@pytest.mark.parametrize("regex", ["(", ")", "[a-", "*a", "a**", "\\", "(?P<", "a{2,1}", "x|(?<=a+)b"])
def test_every_invalid_regex_is_refused_with_the_compiler_message(regex: str) -> None:
    with pytest.raises(re.error) as compiler:
        re.compile(regex, re.I)
    with pytest.raises(DefinitionError) as error:
        to_pattern(regex, **_WHERE)
    assert f"invalid regex {regex!r} in step 's': {compiler.value}; " in str(error.value)
