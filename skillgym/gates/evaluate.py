"""Gates judged on the run's report: each passes only when its whole interval is on the right side.

A gate is judged per lane and provider it covers; the gate is the worst of its parts (failed, then
inconclusive, then passed). ``errors`` counts what errors that are not the agent's doing took from a
gate's data (trials and cases left out, and provider errors a verdict depends on): an inconclusive gate
with such errors is the run's exit 3, never a pass or a fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..model import GateSpec
from ..report.aggregate import BaselineSummary, CaseStats, PairedComparison, Report
from .model import GatePart, GateResult, GateStatus

_WORST: Final[tuple[GateStatus, ...]] = ("skipped", "passed", "inconclusive", "failed")
REGRESSION: Final = "no case regressed against the baseline"


def decide(low: float, high: float, operator: str, threshold: float) -> GateStatus:
    """The whole interval on the right side passes; wholly on the wrong side fails; otherwise inconclusive."""
    if operator == ">":
        return "passed" if low > threshold else ("failed" if high <= threshold else "inconclusive")
    if operator == ">=":
        return "passed" if low >= threshold else ("failed" if high < threshold else "inconclusive")
    if operator == "<":
        return "passed" if high < threshold else ("failed" if low >= threshold else "inconclusive")
    return "passed" if high <= threshold else ("failed" if low > threshold else "inconclusive")


def _worst(statuses: Sequence[GateStatus]) -> GateStatus:
    return max(statuses, key=_WORST.index, default="skipped")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.0f} pts" if value < 0 else f"{value * 100:.0f}%"


def _lift_part(spec: GateSpec, comp: PairedComparison, cells: Sequence[CaseStats]) -> GatePart:
    c = comp.comparison
    errors = (
        comp.cases_left_out_for_errors + comp.depends_on_errors + sum(s.errored_not_agents for s in cells)
    )
    status: GateStatus = "inconclusive"
    if c.interval is not None and comp.depends_on_errors == 0:
        status = decide(c.interval.low, c.interval.high, spec.operator, spec.threshold)
        # At 0 the report's verdict (interval and sign test) must agree, so a gate never contradicts it.
        if status == "passed" and spec.threshold == 0.0:
            wanted = "improved" if spec.operator in (">", ">=") else "regressed"
            status = "passed" if c.verdict == wanted else "inconclusive"
    interval = (
        f"[{c.interval.low * 100:+.0f}, {c.interval.high * 100:+.0f}] pts" if c.interval else "no interval"
    )
    mean = "-" if c.mean_diff is None else f"{c.mean_diff * 100:+.0f} pts"
    return GatePart(
        lane=comp.lane,
        provider=comp.provider,
        status=status,
        value=c.mean_diff,
        interval=c.interval,
        errors=errors,
        detail=f"{comp.lane}/{comp.provider}: lift {mean} {interval} over {c.n_pairs} case(s), "
        f"verdict {c.verdict}"
        + (f"; {errors} left out or decided by errors not the agent's" if errors else ""),
    )


def _lift(spec: GateSpec, report: Report) -> list[GatePart]:
    a = spec.arguments
    parts = []
    for comp in report.condition_comparisons:
        if (comp.treatment, comp.control) != (a["treatment"], a["control"]):
            continue
        if a.get("lane", comp.lane) != comp.lane or a.get("provider", comp.provider) != comp.provider:
            continue
        cells = [
            s
            for s in report.cases
            if s.lane == comp.lane
            and s.provider == comp.provider
            and s.condition in (comp.treatment, comp.control)
        ]
        parts.append(_lift_part(spec, comp, cells))
    return parts


def _pass_rate(spec: GateSpec, report: Report) -> list[GatePart]:
    a = spec.arguments
    parts = []
    for summary in report.condition_summaries:
        if (summary.lane, summary.condition) != (a["lane"], a["condition"]):
            continue
        if a.get("provider", summary.provider) != summary.provider:
            continue
        cells = [
            s
            for s in report.cases
            if (s.lane, s.condition, s.provider) == (summary.lane, summary.condition, summary.provider)
            and a.get("case", s.case_id) == s.case_id
        ]
        if not cells:
            continue
        if "case" in a or len(cells) == 1:  # one case: its own Wilson interval over its trials
            value, interval, unit = cells[0].pass_rate_for_verdicts, cells[0].pass_interval, "trials"
            count = cells[0].verdict_trials
        else:
            value, interval, unit = summary.mean_case_pass_rate, summary.case_pass_interval, "cases"
            count = summary.cases_in_mean or 0
        errors = sum(s.errored_not_agents + s.provider_errors for s in cells)
        status: GateStatus = "inconclusive"
        if interval is not None:
            status = decide(interval.low, interval.high, spec.operator, spec.threshold)
        shown = f"[{interval.low * 100:.0f}%, {interval.high * 100:.0f}%]" if interval else "no interval"
        parts.append(
            GatePart(
                lane=summary.lane,
                provider=summary.provider,
                status=status,
                value=value,
                interval=interval,
                errors=errors,
                detail=f"{summary.lane}/{summary.provider}: pass rate {_pct(value)} {shown} over {count} "
                f"{unit}"
                + (f"; {errors} trial(s) errored for reasons that may not be the agent's" if errors else ""),
            )
        )
    return parts


def _applies(spec: GateSpec, report: Report) -> bool:
    """Whether the run has trials under each condition the gate names (in its lane and provider, if given)."""
    a = spec.arguments
    wanted = (a["treatment"], a["control"]) if spec.metric == "lift" else (a["condition"],)
    ran = {
        s.condition
        for s in report.cases
        if a.get("lane", s.lane) == s.lane
        and a.get("provider", s.provider) == s.provider
        and a.get("case", s.case_id) == s.case_id
    }
    return all(condition in ran for condition in wanted)


def evaluate_gate(spec: GateSpec, report: Report) -> GateResult:
    """``spec`` judged on ``report``; skipped when the run has none of what it names (another lane's gate)."""
    if not _applies(spec, report):
        return GateResult(
            expression=spec.expression,
            origin=spec.origin,
            status="skipped",
            detail="this run has no trial it applies to",
        )
    parts = _lift(spec, report) if spec.metric == "lift" else _pass_rate(spec, report)
    if not parts:  # the conditions ran, but never on one case together
        return GateResult(
            expression=spec.expression,
            origin=spec.origin,
            status="inconclusive",
            detail="no case ran under both conditions, so there is no paired lift",
        )
    status = _worst([p.status for p in parts])
    errors = sum(p.errors for p in parts)
    if status == "inconclusive" and not errors and report.interrupted:
        errors = 1  # a run cut short: more trials may decide it
    return GateResult(
        expression=spec.expression,
        origin=spec.origin,
        status=status,
        detail="; ".join(p.detail for p in parts),
        parts=tuple(parts),
        errors=errors,
    )


def regression_gate(baseline: BaselineSummary | None, problem: str | None) -> GateResult:
    """--fail-on-regression: fails on any conclusively regressed case (or overall regression); inconclusive
    when errors that are not the agent's left a case without a comparison; passes otherwise."""
    if baseline is None:
        return GateResult(
            expression=REGRESSION,
            origin="--fail-on-regression",
            status="inconclusive",
            detail=f"the baseline was not compared: {problem or 'no baseline'}",
            errors=1,
        )
    regressed = [
        f"{r.lane}/{r.case_id}/{r.condition}/{r.provider}" for r in baseline.rows if r.status == "regressed"
    ]
    blocked = [r for r in baseline.rows if r.status == "left-out" or r.depends_on_errors]
    errors = len(blocked) + baseline.overall_depends_on_errors
    if regressed or baseline.overall.verdict == "regressed":
        status: GateStatus = "failed"
        detail = f"regressed: {', '.join(regressed) or 'the suite overall'}"
    elif errors:
        status = "inconclusive"
        detail = f"{len(blocked)} case(s) not compared or decided by errors not the agent's"
    else:
        status = "passed"
        detail = f"no regression over {len(baseline.rows)} row(s); overall {baseline.overall.verdict}"
    return GateResult(
        expression=REGRESSION, origin="--fail-on-regression", status=status, detail=detail, errors=errors
    )
