"""Gates judged on a run's statistics: conclusive passes and fails, inconclusive otherwise, and exit codes."""

from __future__ import annotations

import pytest

from skillgym.errors import ExitCode
from skillgym.events import RunStart
from skillgym.gates.evaluate import decide, evaluate_gate, regression_gate
from skillgym.gates.expression import parse_gate
from skillgym.gates.step import run_exit_code
from skillgym.report import Report, build_report, compare_to_baseline
from skillgym.results import Grade, TrialResult
from tests.results import result_for


def _start() -> RunStart:
    return RunStart(
        run_id="r",
        at=0.0,
        argv=(),
        suite="s",
        suite_dir="/s",
        run_dir="/r",
        lanes=("prompt", "execution"),
        conditions=("none", "self-load"),
        providers=("stub",),
        model=None,
        trials=3,
        concurrency=1,
        total_trials=0,
        skill_hash="h",
    )


def _trial(
    case: str, condition: str, n: int, status: str, *, lane: str = "prompt", **fields: object
) -> TrialResult:
    grade = Grade(passed=status == "passed", score=1.0 if status == "passed" else 0.0)
    return result_for(
        f"{lane}/{case}/{condition}/stub/trial-{n}",
        status,
        grade=None if status == "errored" else grade,
        **fields,
    )


def _report(results: list[TrialResult]) -> Report:
    return build_report(_start(), results)


def _suite(*, cases: int, self_load: str, none: str, trials: int = 3) -> list[TrialResult]:
    return [
        _trial(f"c{i}", condition, n, status)
        for i in range(cases)
        for condition, status in (("self-load", self_load), ("none", none))
        for n in range(1, trials + 1)
    ]


@pytest.mark.parametrize(
    ("low", "high", "op", "threshold", "status"),
    [
        (0.2, 0.6, ">", 0.0, "passed"),
        (0.0, 0.6, ">", 0.0, "inconclusive"),
        (0.0, 0.6, ">=", 0.0, "passed"),
        (-0.5, -0.1, ">", 0.0, "failed"),
        (-0.5, 0.0, ">", 0.0, "failed"),
        (-0.5, 0.0, ">=", 0.0, "inconclusive"),
        (0.85, 0.95, "<", 0.8, "failed"),
        (0.5, 0.7, "<", 0.8, "passed"),
        (0.5, 0.8, "<=", 0.8, "passed"),
        (0.7, 0.9, "<=", 0.8, "inconclusive"),
    ],
)
def test_the_whole_interval_decides(low: float, high: float, op: str, threshold: float, status: str) -> None:
    assert decide(low, high, op, threshold) == status


def test_a_lift_every_case_shows_passes_and_one_no_case_shows_fails() -> None:
    helped = _report(_suite(cases=8, self_load="passed", none="failed"))
    gate = evaluate_gate(parse_gate("lift(self-load, none) > 0"), helped)
    assert gate.status == "passed", gate.detail
    assert gate.parts[0].interval is not None and gate.parts[0].interval.low > 0
    harmed = _report(_suite(cases=8, self_load="failed", none="passed"))
    assert evaluate_gate(parse_gate("lift(self-load, none) > 0"), harmed).status == "failed"


def test_too_few_cases_leave_a_lift_gate_inconclusive_without_blaming_errors() -> None:
    report = _report(_suite(cases=2, self_load="passed", none="failed"))
    gate = evaluate_gate(parse_gate("lift(self-load, none) > 0"), report)
    assert gate.status == "inconclusive"
    assert not gate.blocked_by_errors
    # Not shown, with nothing but the agent's own results behind it: the gate did not pass.
    assert run_exit_code([], [gate], interrupted=False) == ExitCode.FAILED


def test_pass_rate_uses_the_case_level_interval_and_one_case_its_wilson_interval() -> None:
    report = _report(_suite(cases=8, self_load="passed", none="failed"))
    passing = evaluate_gate(parse_gate("pass_rate(prompt, self-load) >= 0.5"), report)
    assert passing.status == "passed"
    assert "over 8 cases" in passing.detail
    failing = evaluate_gate(parse_gate("pass_rate(prompt, none) >= 0.5"), report)
    assert failing.status == "failed"
    one = evaluate_gate(parse_gate("pass_rate(prompt, self-load, case=c0) >= 0.5"), report)
    assert one.status == "inconclusive"  # 3/3 trials: Wilson [44%, 100%] straddles 50%
    assert "over 3 trials" in one.detail


def test_a_gate_on_a_lane_the_run_left_out_is_skipped() -> None:
    report = _report(_suite(cases=4, self_load="passed", none="failed"))
    gate = evaluate_gate(parse_gate("pass_rate(execution, self-load) >= 0.5"), report)
    assert gate.status == "skipped"
    assert run_exit_code([], [gate], interrupted=False) == ExitCode.OK  # no failed trial given


def test_errors_not_the_agents_that_leave_a_gate_open_make_it_exit_3() -> None:
    results = [
        _trial(f"c{i}", "self-load", n, "passed" if i < 2 else "errored", error_class="provider-unavailable")
        for i in range(8)
        for n in (1, 2, 3)
    ] + [_trial(f"c{i}", "none", n, "failed") for i in range(8) for n in (1, 2, 3)]
    report = _report(results)
    gate = evaluate_gate(parse_gate("lift(self-load, none) > 0"), report)
    assert gate.status == "inconclusive"
    assert gate.blocked_by_errors
    assert run_exit_code(results, [gate], interrupted=False) == ExitCode.INCONCLUSIVE
    assert run_exit_code(results, [gate], interrupted=True) == ExitCode.INTERRUPTED


def test_without_gates_the_trials_decide_and_errors_not_the_agents_alone_are_3() -> None:
    ok = [_trial("a", "none", 1, "passed")]
    assert run_exit_code(ok, [], interrupted=False) == ExitCode.OK
    outage = [*ok, _trial("b", "none", 1, "errored", error_class="provider-unavailable")]
    assert run_exit_code(outage, [], interrupted=False) == ExitCode.INCONCLUSIVE
    timeout = [*outage, _trial("c", "none", 1, "errored", error_class="timeout")]
    assert run_exit_code(timeout, [], interrupted=False) == ExitCode.FAILED  # the agent's own failure
    failed = [*outage, _trial("d", "none", 1, "failed")]
    assert run_exit_code(failed, [], interrupted=False) == ExitCode.FAILED
    assert run_exit_code(ok, [], interrupted=False, failed_step=True) == ExitCode.FAILED


def test_a_failed_gate_outweighs_an_inconclusive_one_and_passing_gates_ignore_failed_trials() -> None:
    report = _report(_suite(cases=8, self_load="passed", none="failed"))
    passed = evaluate_gate(parse_gate("lift(self-load, none) > 0"), report)
    failed = evaluate_gate(parse_gate("pass_rate(prompt, none) > 0.5"), report)
    results = _suite(cases=8, self_load="passed", none="failed")
    assert run_exit_code(results, [passed], interrupted=False) == ExitCode.OK  # baselines fail by design
    assert run_exit_code(results, [passed, failed], interrupted=False) == ExitCode.FAILED


def test_the_regression_gate_fails_on_a_regressed_case_and_passes_otherwise() -> None:
    before = _report(
        [_trial("a", "none", n, "passed") for n in range(1, 6)] + [_trial("b", "none", 1, "passed")]
    )
    after = _report(
        [_trial("a", "none", n, "failed") for n in range(1, 6)] + [_trial("b", "none", 1, "passed")]
    )
    regressed = regression_gate(compare_to_baseline(after, before), None)
    assert regressed.status == "failed"
    assert "prompt/a/none/stub" in regressed.detail
    same = regression_gate(compare_to_baseline(before, before), None)
    assert same.status == "passed"
    missing = regression_gate(None, "not found")
    assert missing.blocked_by_errors


def test_a_lift_gate_is_skipped_without_both_conditions_and_open_without_a_pair() -> None:
    only_none = _report([_trial(f"c{i}", "none", 1, "failed") for i in range(4)])
    assert evaluate_gate(parse_gate("lift(self-load, none) > 0"), only_none).status == "skipped"
    apart = _report([_trial("a", "self-load", 1, "passed"), _trial("b", "none", 1, "failed")])
    gate = evaluate_gate(parse_gate("lift(self-load, none) > 0"), apart)
    assert gate.status == "inconclusive"
    assert "no case ran under both conditions" in gate.detail
