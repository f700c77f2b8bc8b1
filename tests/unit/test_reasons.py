"""Tests for skillgym.reasons: the end of a run says why its trials errored, one line per problem."""

from __future__ import annotations

from skillgym.reasons import error_reasons
from skillgym.results import TrialResult
from tests.results import result_for


def _result(
    key: str, status: str = "errored", error_class: str = "provider-error", message: str = ""
) -> TrialResult:
    if status != "errored":
        return result_for(key, status)
    return result_for(key, status, error_class=error_class, error_message=message)


def _stub_missing(case: str, condition: str) -> TrialResult:
    message = (
        f"stub provider has no canned output for case {case}: add stubs/{case}.md "
        f"(or stubs/{case}/{condition}.md for the {condition!r} condition only)"
    )
    return _result(f"prompt/{case}/{condition}/stub/trial-1", message=message)


def test_one_problem_every_trial_hits_is_one_line_with_its_count() -> None:
    results = [_stub_missing(case, cond) for case in ("a", "b") for cond in ("none", "self-load")]
    results.append(_result("prompt/c/none/stub/trial-1", status="passed"))
    results.append(
        _result("execution/d/none/stub/trial-1", error_class="environment-error", message="no\n tmux")
    )
    assert error_reasons(results) == [
        "why 5 trial(s) errored:",
        "  4 x provider-error: stub provider has no canned output for case <case>: add stubs/<case>.md (or "
        "stubs/<case>/<condition>.md for the '<condition>' condition only) "
        "(prompt/a/none/stub/trial-1 and 3 more)",
        "  1 x environment-error: no tmux (execution/d/none/stub/trial-1)",
    ]


def test_a_condition_that_is_an_everyday_word_stays_in_plain_text() -> None:
    (line,) = error_reasons([_result("prompt/a/none/stub/trial-1", message="known fixtures: none found")])[1:]
    assert "none found" in line


def test_beyond_the_top_the_rest_is_counted_and_nothing_errored_prints_nothing() -> None:
    results = [_result(f"prompt/c{n}/none/stub/trial-1", message=f"problem {n}") for n in range(7)]
    lines = error_reasons(results, top=5)
    assert len(lines) == 7
    assert lines[-1] == "  ... 2 other reason(s) for 2 trial(s): see report.md"
    assert error_reasons([_result("prompt/a/none/stub/trial-1", status="failed")]) == []
