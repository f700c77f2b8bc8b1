"""Case patterns on RE2: Python's meaning kept where RE2 spells it differently, refusals named."""

from __future__ import annotations

import re

import pytest

from skillgym.regex import RegexError, compile_regex

TEXTS = (
    "",
    "ok",
    "ok\n",
    "ok\nno\n",
    "tmux new -s app; tmux kill-session -t app",
    "héllo wörld — ünïcode ✓ tmux ok\n",
    "sleep 5 && sleep 0.5\nsleep 1m\n",
    "a\u2028b \U0001f600 tail",
)
PATTERNS = (
    ("ok$", ""),
    ("^ok$", "m"),
    (r"\bsleep\s+\d*\.?\d+[smhd]?", "i"),
    ("w.rld", ""),
    ("(?i)TMUX", ""),
    (r"(\w+) (\w+)", ""),
    ("[^a-z ]+", ""),
    ("", ""),
    ("a.b", "s"),
    (r"\d+\Z", ""),
    (r"tail\Z", ""),
    ("ünï|✓", ""),
    (r"\u00e9|\U0001f600", ""),
    (r"\N{CHECK MARK}", ""),
    ("x*", ""),
    (r"[\w-]+ [\s\d]", ""),
    (r"\S+\W\D", ""),
    ("(?#a comment)ok", ""),
)
_BITS = {"i": re.I, "m": re.M, "s": re.S}


def _python(regex: str, flags: str) -> re.Pattern[str]:
    bits = 0
    for letter in flags:
        bits |= _BITS[letter]
    return re.compile(regex, bits)


@pytest.mark.parametrize(("regex", "flags"), PATTERNS)
def test_matches_as_python_does_with_offsets_in_characters(regex: str, flags: str) -> None:
    ours, theirs = compile_regex(regex, flags), _python(regex, flags)
    for text in TEXTS:
        found, expected = ours.search(text), theirs.search(text)
        assert (found is None) == (expected is None), (regex, text)
        if found is not None and expected is not None:
            assert found.start() == expected.start(), (regex, text)
            # Python's $ matches before a final newline; here it takes that newline into the match.
            assert text[expected.start() : found.end()].rstrip("\n") == expected.group().rstrip("\n")
            assert found.groups() == expected.groups()
        if found is not None and not regex.endswith("$"):  # Python's finditer: the same occurrences
            assert [m.span() for m in ours.finditer(text)] == [m.span() for m in theirs.finditer(text)]


def test_the_next_match_may_reuse_the_context_around_the_last_occurrence() -> None:
    # What lookaround gives in Python: the ';' ends one tmux word and starts the next one's context.
    regex = compile_regex(r"(?:^|[^\w-])(tmux)(?:[^\w-]|$)")
    text = "tmux;tmux x-tmux tmuxy é tmux"
    assert [text[slice(*m.focus())] for m in regex.finditer(text)] == ["tmux", "tmux", "tmux"]
    assert [m.span(1) for m in regex.finditer(text)] == [(0, 4), (5, 9), (25, 29)]


def test_named_groups_read_by_name_and_by_number() -> None:
    match = compile_regex(r"(?P<end>kill)(?: (?P<session>\w+))?").search("tmux kill")
    assert match is not None
    assert (match.group("end"), match.group("session"), match.span("end")) == ("kill", None, (5, 9))
    assert match.re.groupindex == {"end": 1, "session": 2}


@pytest.mark.parametrize(
    ("regex", "says"),
    [
        ("a(?=b)", "uses a lookahead '(?=...)'"),
        ("a(?!b)", "uses a negative lookahead '(?!...)'"),
        ("(?<=a)b", "uses a lookbehind '(?<=...)'"),
        ("(?<!a)b", "uses a negative lookbehind '(?<!...)'"),
        (r"(a)\1", "uses a backreference '\\1'"),
        ("(?P<x>a)(?P=x)", "uses a named backreference '(?P=name)'"),
        ("(?>a+)b", "uses an atomic group '(?>...)'"),
        ("a++", "uses a possessive repeat '++'"),
        ("(a)?(?(1)b|c)", "uses a conditional group"),
        ("(?x) a b", "uses verbose mode '(?x)'"),
        ("(?a)x", "uses the inline flag '(?a)'"),
        ("a{1001}", "has a repeat count over 1000"),
        (r"[\W_]", "uses '\\W' inside a character class"),
        ("(", "does not compile: missing )"),
        ("a\\", "ends with a lone backslash"),
        (r"\u12", "without 4 hex digits"),
        (r"\N{NO SUCH THING}", "names no Unicode character"),
    ],
)
def test_what_re2_cannot_run_is_refused_with_the_construct_named(regex: str, says: str) -> None:
    with pytest.raises(RegexError) as info:
        compile_regex(regex)
    assert says in info.value.reason
    assert info.value.regex == regex


def test_literal_brackets_dollars_and_escapes_stay_literal() -> None:
    assert compile_regex("[]$]").search("a$") is not None
    assert compile_regex(r"\$HOME").search("echo $HOME") is not None
    assert compile_regex(r"[\\$]x").search("$x") is not None
    assert compile_regex(re.escape("a+b (c) [d] {e} $f ^g |h .i *j ?k")).search(
        "x a+b (c) [d] {e} $f ^g |h .i *j ?k y"
    )


def test_unknown_flags_are_named() -> None:
    with pytest.raises(RegexError, match="has unknown flag 'x'"):
        compile_regex("a", "x")


def test_a_pattern_that_backtracks_for_ever_in_python_matches_at_once() -> None:
    regex = compile_regex(r"(a+)+$")
    assert regex.search("a" * 100_000 + "b") is None
    assert regex.search("a" * 100_000) is not None
