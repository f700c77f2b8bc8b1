"""The gate step: a finisher that judges the run's gates on its report, and the run's exit code."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ExitCode
from ..events import RunStart
from ..finishers import FinishPart
from ..model import GateSpec, Suite
from ..plan import Plan
from ..report import Report, build_report, compare_to_baseline
from ..results import NOT_THE_AGENTS, TrialResult
from .evaluate import evaluate_gate, regression_gate
from .expression import parse_gate
from .model import GateResult


def recorded_gate_step(
    plan: Plan, suite: Suite, settings: dict[str, object], *, baseline: Report | None
) -> GateStep:
    """The gate step of a run whose ``--gate`` flags are in its run.json ``settings`` (resume, merge):
    those gates again, then the suite's own that the flags did not repeat."""
    given = settings.get("gates") or ()
    specs = [parse_gate(str(text)) for text in given] if isinstance(given, list | tuple) else []
    seen = {g.expression for g in specs}
    specs += [g for g in suite.gates if g.expression not in seen]
    return GateStep(
        plan, specs, baseline=baseline, fail_on_regression=bool(settings.get("fail_on_regression", False))
    )


class GateStep:
    """Judges ``specs`` (and, with ``fail_on_regression``, the baseline comparison) when the trials end."""

    name = "gates"

    def __init__(
        self,
        plan: Plan,
        specs: Sequence[GateSpec],
        *,
        baseline: Report | None = None,
        fail_on_regression: bool = False,
    ) -> None:
        self.plan = plan
        self.specs = tuple(specs)
        self.baseline = baseline
        self.fail_on_regression = fail_on_regression

    async def on_event(self, event: object) -> None:
        return None

    async def finish(self) -> None:
        return None

    async def finish_run(
        self, results: Sequence[TrialResult], *, run_id: str, interrupted: bool
    ) -> FinishPart:
        if not self.specs and not self.fail_on_regression:
            return FinishPart()
        return FinishPart(
            gates=judge(
                self.plan,
                self.specs,
                results,
                run_id=run_id,
                interrupted=interrupted,
                baseline=self.baseline,
                fail_on_regression=self.fail_on_regression,
            )
        )


def judge(
    plan: Plan,
    specs: Sequence[GateSpec],
    results: Sequence[TrialResult],
    *,
    run_id: str,
    interrupted: bool,
    baseline: Report | None,
    fail_on_regression: bool,
) -> tuple[GateResult, ...]:
    """Every gate on the report of ``results``, built as the final report builds it (``build_report``
    reads only the plan's part of run.start), and the baseline comparison for --fail-on-regression."""
    start = RunStart(
        run_id=run_id,
        at=0.0,
        argv=(),
        suite=plan.suite,
        suite_dir="",
        run_dir="",
        lanes=plan.lanes,
        conditions=plan.conditions,
        providers=plan.providers,
        case_filter=plan.case_ids,
        model=plan.model,
        trials=plan.trials,
        concurrency=1,
        total_trials=len(plan.items),
        skill_hash="",
    )
    report = build_report(start, results, interrupted=interrupted)
    gates = [evaluate_gate(spec, report) for spec in specs]
    if fail_on_regression:
        summary = compare_to_baseline(report, baseline) if baseline is not None else None
        gates.append(regression_gate(summary, None if baseline is not None else "no --compare-baseline"))
    return tuple(gates)


def run_exit_code(
    results: Sequence[TrialResult],
    gates: Sequence[GateResult],
    *,
    interrupted: bool,
    failed_step: bool = False,
    budget_stopped: bool = False,
) -> int:
    """The run's exit code from its trials and gates (the README's exit-code table says the same).

    With gates: 1 when one failed (or ``failed_step``, a snapshot regression under --snapshot-enforce),
    3 when none failed but one is inconclusive because errors that are not the agent's (or the budget)
    took its data, 1 when one is inconclusive otherwise (it did not pass), else 0. Without gates: 0 when
    every trial passed, 1 when a trial failed by the agent's doing (a failure, a timeout, a provider
    error), 3 when the only trials that did not pass errored for reasons not the agent's (NOT_THE_AGENTS).
    Interrupted: 130.
    """
    if interrupted:
        return ExitCode.INTERRUPTED
    judged = [g for g in gates if g.status != "skipped"]
    if failed_step or any(g.status == "failed" for g in judged):
        return ExitCode.FAILED
    if judged:
        open_ = [g for g in judged if g.status == "inconclusive"]
        if not open_:
            return ExitCode.OK
        if all(g.blocked_by_errors or budget_stopped for g in open_):
            return ExitCode.INCONCLUSIVE
        return ExitCode.FAILED
    if all(r.status == "passed" for r in results):
        return ExitCode.OK
    if any(
        r.status == "failed" or (r.status == "errored" and r.error_class not in NOT_THE_AGENTS)
        for r in results
    ):
        return ExitCode.FAILED
    return ExitCode.INCONCLUSIVE
