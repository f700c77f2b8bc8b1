"""Did it fire vs did it help: activation, pass rates by activation, and the split of realized lift."""

from __future__ import annotations

import pytest

from skillgym.events import RunStart
from skillgym.report import build_report, render_markdown
from skillgym.report.activation import GAP, HELP, activation_summaries
from skillgym.results import ErrorClass, Grade, TrialResult
from skillgym.score_intervals import suite_pass_interval
from skillgym.stats import wilson_interval
from tests.results import result_for
from tests.unit.test_report import _start


def _trial(
    case: str, condition: str, n: int, passed: bool, loaded: bool | None, error: ErrorClass | None = None
) -> TrialResult:
    key = f"execution/{case}/{condition}/stub/trial-{n}"
    if error is not None:
        return result_for(key, "errored", error_class=error)
    grade = Grade(passed=passed, score=1.0 if passed else 0.0, skill_loaded=loaded)
    return result_for(key, "passed" if passed else "failed", grade=grade)


def _suite_run() -> list[TrialResult]:
    """Six cases, four trials each: none passes 1 of 4 and preloaded 4 of 4 everywhere; under self-load,
    c0-c2 load the skill every time and pass, c3-c5 never load it and pass 1 of 4 (like none)."""
    trials: list[TrialResult] = []
    for i in range(6):
        case = f"c{i}"
        fires = i < 3
        for n in range(1, 5):
            trials.append(_trial(case, "none", n, n == 1, False))
            trials.append(_trial(case, "preloaded", n, True, True))
            trials.append(_trial(case, "self-load", n, fires or n == 1, fires))
    # A timeout has no grade, so no load evidence: not counted in activation (it fails in verdicts).
    trials.append(_trial("c0", "self-load", 5, False, None, error="timeout"))
    # A case that expects no skill has no activation at all.
    trials += [_trial("quiet", "self-load", n, True, None) for n in (1, 2)]
    return trials


def _start_execution() -> RunStart:
    return _start(lanes=("execution",))


def test_activation_counts_load_evidence_over_graded_trials() -> None:
    (a,) = activation_summaries(_suite_run(), ("stub",))
    assert (a.lane, a.provider, a.condition) == ("execution", "stub", "self-load")
    assert (a.cases, a.trials, a.activated) == (6, 24, 12)
    assert a.activation_rate == 0.5
    assert a.activation_interval == wilson_interval(12, 24)
    assert a.case_activation_interval == suite_pass_interval([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], 4)
    assert a.cases_never_activated == 3


def test_pass_rates_when_activated_and_when_not() -> None:
    (a,) = activation_summaries(_suite_run(), ("stub",))
    assert (a.passed_when_activated, a.activated, a.pass_rate_when_activated) == (12, 12, 1.0)
    assert (a.passed_when_not_activated, a.not_activated, a.pass_rate_when_not_activated) == (3, 12, 0.25)
    assert a.pass_interval_when_activated == wilson_interval(12, 12)
    assert a.pass_interval_when_not_activated == wilson_interval(3, 12)


def test_realized_lift_splits_into_oracle_lift_minus_activation_gap() -> None:
    (a,) = activation_summaries(_suite_run(), ("stub",))
    # Per case, realized (self-load - none): c0 passes 4/5 under self-load (its timeout fails), c1 and c2
    # 4/4, against none's 1/4; c3-c5 pass 1/4 like none.
    realized = ((4 / 5 - 1 / 4) + 2 * 0.75 + 3 * 0.0) / 6
    assert a.split_cases == 6
    assert a.realized_lift == pytest.approx(realized)
    assert a.oracle_lift == pytest.approx(0.75)
    assert a.gap == pytest.approx(0.75 - realized)
    assert a.realized_lift == pytest.approx(a.oracle_lift - a.gap)


def test_the_gap_and_help_when_loaded_are_paired_per_case_with_their_names() -> None:
    (a,) = activation_summaries(_suite_run(), ("stub",))
    gap, helped = a.activation_gap, a.help_when_loaded
    assert gap is not None and helped is not None
    assert (gap.name, gap.n_pairs) == (GAP, 6)
    assert gap.mean_diff == pytest.approx(((1 - 4 / 5) + 2 * 0.0 + 3 * 0.75) / 6)
    # Only the cases with an activated trial, and only those trials: 4/4 against none's 1/4.
    assert (helped.name, helped.n_pairs, helped.wins) == (HELP, 3, 3)
    assert helped.mean_diff == pytest.approx(0.75)
    # Three agreeing cases are not enough for the exact sign test: inconclusive, never "improved".
    assert helped.verdict == "inconclusive" and helped.interval is not None


def test_report_json_and_md_carry_it() -> None:
    report = build_report(_start_execution(), _suite_run())
    assert len(report.activation) == 1 and report.activation[0].activated == 12
    md = render_markdown(report)
    section = md.split("## Did it fire vs did it help\n", 1)[1].split("\n## ", 1)[0]
    assert "| execution | stub | 12/24 = 50% (6 case(s), 3 never) | [31%, 69%] | [14%, 86%] |" in section
    assert "| 12/12 = 100% [76%, 100%] | 3/12 = 25% [9%, 53%] |" in section
    assert (
        "- Over the 6 case(s) that ran none, self-load and preloaded: realized lift +34 pts = oracle lift "
        "+75 pts minus activation gap +41 pts." in section
    )
    assert (
        "- Help when loaded (self-load trials that loaded the skill vs none, paired per case): +75 pts"
        in section
    )
    assert "3 case(s) never loaded it and are not in it." in section
    assert "it is **observational**" in section
    assert "† Over fewer than 6 cases" in section  # help when loaded pairs three


def test_without_self_load_there_is_no_section_and_no_field() -> None:
    trials = [_trial("c", "none", 1, True, False), _trial("c", "preloaded", 1, True, True)]
    report = build_report(_start(lanes=("execution",), conditions=("none", "preloaded")), trials)
    assert report.activation == ()
    assert "Did it fire" not in render_markdown(report)


def test_self_load_without_load_evidence_says_so() -> None:
    # Older results (or cases that expect no skill) record no load evidence: nothing to say, said once.
    trials = [_trial("c", "self-load", 1, True, None), _trial("c", "none", 1, True, None)]
    report = build_report(_start_execution(), trials)
    assert report.activation == ()
    assert "No graded self-load trial of a case that expects a skill" in render_markdown(report)
