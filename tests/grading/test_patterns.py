"""Tests for skillgym.grading.patterns: flags, line numbers, focus groups and the negation window."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillgym.grading.negation import FLIP_VERBS, NEGATORS, NOT_NEGATED
from skillgym.grading.patterns import (
    PatternError,
    compile_pattern,
    find_all,
    find_first,
    find_forbidden,
    is_negated,
    show_pattern,
)
from skillgym.model import Pattern

SLEEP = Pattern(regex=r"\bsleep\b")


def test_flags_map_to_re_flags() -> None:
    assert compile_pattern(Pattern(regex="a.b", flags="s")).search("a\nb")
    assert compile_pattern(Pattern(regex="^b", flags="m")).search("a\nb")
    assert compile_pattern(Pattern(regex="ABC", flags="i")).search("abc")
    assert not compile_pattern(Pattern(regex="ABC", flags="")).search("abc")


def test_compile_is_cached() -> None:
    assert compile_pattern(Pattern(regex="x+")) is compile_pattern(Pattern(regex="x+"))


def test_bad_flag_and_bad_regex_are_named() -> None:
    with pytest.raises(PatternError, match=r"unknown flag 'x'"):
        compile_pattern(Pattern(regex="a", flags="x"))
    with pytest.raises(PatternError, match=r"/\(/ does not compile"):
        compile_pattern(Pattern(regex="("))
    assert issubclass(PatternError, ValueError)


def test_find_all_gives_1_based_lines() -> None:
    text = "one\ntwo sleep\nthree\nsleep again"
    found = find_all(SLEEP, text)
    assert [(m.line, m.text) for m in found] == [(2, "sleep"), (4, "sleep")]
    assert text[found[0].start : found[0].end] == "sleep"


def test_first_non_empty_group_is_the_occurrence() -> None:
    found = find_all(Pattern(regex=r"(?:^|;)\s*(sleep \d)"), "echo hi; sleep 2")
    assert [m.text for m in found] == ["sleep 2"]


@pytest.mark.parametrize(
    "text",
    [
        "Poll the pane instead of sleep.",
        "Wait for READY rather than sleep.",
        "Never sleep here.",
        "never use sleep",
        "Avoid using sleep in scripts.",
        "Avoid using a fixed sleep.",
        "Don't sleep; poll.",
        "Do not use `sleep`.",
        "**Never** sleep.",
        "This works without sleep.",
        "There is no need for sleep.",
        "Unlike sleep, polling ends early.",
        "I don\u2019t sleep.",
        # Every contraction in n't negates, as do cannot, no and ruling out.
        "You shouldn't sleep here.",
        "I won't use sleep.",
        "It doesn't need sleep.",
        "We didn't sleep.",
        "This isn't a sleep.",
        "Fixed waits aren't sleep calls.",
        "You can't sleep here.",
        "You cannot sleep here.",
        "You mustn't sleep.",
        "It wouldn't sleep.",
        "No `sleep` calls.",
        "No fixed sleep.",
        "After ruling out sleep, poll.",
        # A flip followed by a new negation is a negation again.
        "Don't forget to avoid sleep.",
        # Several negated items: each negator opens the window again.
        "No screen and no sleep.",
        # A colon opens what is negated; "just", "only" and "merely" after an imperative keep the warning.
        "Avoid: sleep 5.",
        "Don't do this: sleep 5.",
        "Do not use the following: sleep 5.",
        "Things to avoid: sleep 5.",
        "**Never**: sleep 5.",
        "Don't just sleep 5 and hope.",
        "Never just sleep 5.",
        "Do not merely sleep 5.",
    ],
)
def test_negated_mentions(text: str) -> None:
    found = find_forbidden(SLEEP, text)
    assert len(found) == 1
    assert found[0].negated


@pytest.mark.parametrize(
    "text",
    [
        "sleep 2",
        "Then sleep 2 seconds.",
        "It is not ready yet. Sleep 2 and check.",  # the negation is in the previous sentence
        "If it's not ready, sleep 2.",  # a comma ends the negated phrase
        "Do not hurry to start the server and then keep going to sleep",  # too many words after "not"
        # A negation followed by a verb of not doing is an instruction to do it.
        "Don't forget to sleep 5.",
        "Do not skip the sleep 5.",
        "You cannot avoid using sleep.",
        "Never fail to sleep.",
        "Don't hesitate to sleep.",
        "There is no need to avoid sleep.",
        "I didn't miss the sleep.",
        # A clause end closes the negation.
        "There is no output yet so sleep 2.",
        "Do not poll but sleep 2.",
        "It is not ready \u2014 sleep 2.",
        "It didn't start in time: sleep 5.",
        "Not ready;then sleep 5",
        # A negator followed by one of these words negates nothing.
        "It won't hurt to sleep 5.",
        "It never hurts to sleep 5.",
        "There's no harm in a sleep 5.",
        "No doubt sleep 5 is enough.",
    ],
)
def test_plain_mentions_are_not_negated(text: str) -> None:
    found = find_forbidden(SLEEP, text)
    assert len(found) == 1
    assert not found[0].negated


@pytest.mark.parametrize(
    "text",
    ["It is not just a sleep.", "That isn't only sleep.", "These were not merely sleep calls."],
)
def test_a_negated_to_be_before_just_only_or_merely_negates_nothing(text: str) -> None:
    assert not is_negated(text, text.index("sleep"))


@pytest.mark.parametrize("word", sorted(NOT_NEGATED))
def test_a_negator_before_a_not_negated_word_negates_nothing(word: str) -> None:
    for negator in ("not", "no", "never", "nor", "cannot", "won't"):
        assert not is_negated(f"{negator} {word} sleep", len(f"{negator} {word} ")), negator


@pytest.mark.parametrize(
    "text",
    [
        # Only the plain negators are qualified; a phrase still negates what it is followed by.
        "Poll instead of just sleep.",
        "Wait for READY rather than merely sleep.",
        "Poll the pane without just sleep.",
        "Avoid only sleep.",
        # A later negator in the same clause still negates.
        "It won't hurt, no sleep.",
        "It is not just a sleep, never sleep.",
    ],
)
def test_other_negators_keep_negating(text: str) -> None:
    assert find_forbidden(SLEEP, text)[-1].negated


def test_a_window_cut_mid_word_drops_the_fragment() -> None:
    # The 50-character window starts at the "no" of "casino": a fragment, not the word "no".
    text = "casino " + "a" * 15 + " " + "b" * 15 + " " + "c" * 14 + " sleep"
    assert text[text.index("sleep") - 50 :].startswith("no ")
    assert not is_negated(text, text.index("sleep"))
    assert is_negated(text[4:], text.index("sleep") - 4)  # the same words with "no" whole


@pytest.mark.parametrize("flip", sorted(FLIP_VERBS))
def test_every_flip_verb_cancels_a_negation(flip: str) -> None:
    assert not is_negated(f"don't {flip} sleep", len(f"don't {flip} "))


@pytest.mark.parametrize("negator", NEGATORS)
def test_every_negator_negates(negator: str) -> None:
    assert is_negated(f"{negator} sleep", len(f"{negator} "))


def test_window_does_not_cross_a_line() -> None:
    assert not is_negated("never\nsleep", len("never\n"))
    assert is_negated("never sleep", len("never "))


def test_window_is_about_50_characters() -> None:
    far = "never " + "x" * 60 + " sleep"
    assert not find_forbidden(SLEEP, far)[0].negated


def test_show_pattern_spells_out_non_default_flags() -> None:
    assert show_pattern(Pattern(regex=r"ECHO:\s*hello world")) == r"/ECHO:\s*hello world/"
    assert (
        show_pattern(Pattern(regex="x", flags="ms")) == "/x/ (case-sensitive, multiline, dot matches newline)"
    )


@given(st.text(alphabet=st.sampled_from("ab \n.;sleptnvro'"), max_size=80))
def test_matches_agree_with_the_text(text: str) -> None:
    for match in find_forbidden(SLEEP, text):
        assert text[match.start : match.end] == match.text
        assert match.line == text.count("\n", 0, match.start) + 1


@given(
    st.text(alphabet=st.sampled_from("ab \n.;sleptnvro'"), max_size=80),
    st.sampled_from([SLEEP, Pattern(regex=r"(s)le"), Pattern(regex="^a", flags="im"), Pattern(regex="o$")]),
)
def test_find_first_is_the_first_of_find_all(text: str, pattern: Pattern) -> None:
    every = find_all(pattern, text)
    first = find_first(pattern, text)
    assert (first is None) == (not every)
    if every:
        assert first == every[0]
