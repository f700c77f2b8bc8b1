"""skill-creator's result files field for field: grading.json, timing.json, eval_metadata, benchmark.

The field names are the ones skill-creator's viewer (eval-viewer/generate_review.py, viewer.html) and its
aggregation (scripts/aggregate_benchmark.py) read, as its references/schemas.md documents them. A value
skillgym does not know (tokens a provider never reported) is null, never a guessed number. Each file
also carries a ``skillgym`` object with what the format has no field for (the trial key, the strict
pass, the error); skill-creator's tools ignore keys they do not read.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any, Final

from ..model import Case
from ..results import CheckOutcome, TrialResult
from ..trace import Trace

WITH_SKILL: Final = "with_skill"
WITHOUT_SKILL: Final = "without_skill"
NOT_JUDGED: Final = "not graded: the run had no judge (run with --judge) or the trial ended before grading"


def expectations(result: TrialResult, case: Case | None) -> list[dict[str, Any]]:
    """The trial's graded checks as ``{text, passed, evidence}``: the case's judged checks first, in order.

    A judged check the trial has no outcome for (no judge, or the trial errored) is listed as not passed,
    with evidence saying why: the viewer shows it, and it never counts as met.
    """
    checks = result.grade.checks if result.grade is not None else ()
    by_id = {c.id: c for c in checks}
    rows: list[dict[str, Any]] = []
    taken: set[str] = set()
    for judged in case.judged if case is not None else ():
        outcome = by_id.get(judged.id)
        taken.add(judged.id)
        if outcome is None:
            evidence = NOT_JUDGED if result.status != "errored" else f"not graded: {_error(result)}"
            rows.append({"text": judged.expectation, "passed": False, "evidence": evidence})
        else:
            rows.append(
                {"text": judged.expectation, "passed": outcome.passed, "evidence": _evidence(outcome)}
            )
    for outcome in checks:
        if outcome.id in taken:
            continue
        rows.append(
            {"text": _statement(outcome, case), "passed": outcome.passed, "evidence": _evidence(outcome)}
        )
    return rows


def _evidence(outcome: CheckOutcome) -> str:
    if outcome.evidence and outcome.message:
        return f"{outcome.evidence} ({outcome.message})"
    return outcome.evidence or outcome.message


def _statement(outcome: CheckOutcome, case: Case | None) -> str:
    """What a check asks, in words: the expectation, the step's or verifier's description, or its id."""
    if outcome.expectation:
        return outcome.expectation
    described = ""
    if case is not None:
        parts: Sequence[Any] = (
            *case.workflow,
            *getattr(case, "verifiers", ()),
            *getattr(case, "report_requirements", ()),
        )
        described = next((p.description for p in parts if getattr(p, "id", None) == outcome.id), "")
    if described:
        return described
    if outcome.kind == "skill" and case is not None:
        skill = case.expected_skill
        return "the agent uses no skill" if skill is None else f"the agent uses the {skill} skill"
    noun = {
        "workflow": "step",
        "expected-pattern": "expected pattern",
        "forbidden-pattern": "forbidden pattern",
    }
    return f"{noun.get(outcome.kind, outcome.kind)} {outcome.id!r} holds"


def _error(result: TrialResult) -> str:
    return f"the trial errored ({result.error_class}: {result.error_message or 'no message'})"


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``{passed, failed, total, pass_rate}`` of expectation rows (pass_rate 0.0 when there are none)."""
    passed = sum(1 for r in rows if r["passed"])
    total = len(rows)
    return {"passed": passed, "failed": total - passed, "total": total, "pass_rate": _rate(passed, total)}


def _rate(passed: int, total: int) -> float:
    return round(passed / total, 4) if total else 0.0


def grading(
    result: TrialResult, case: Case | None, trace: Trace | None, transcript_chars: int
) -> dict[str, Any]:
    """The run's grading.json."""
    rows = expectations(result, case)
    notes = [*result.warnings, *([_error(result)] if result.status == "errored" else [])]
    return {
        "expectations": rows,
        "summary": summary(rows),
        "execution_metrics": execution_metrics(result, trace, transcript_chars),
        "timing": {
            "executor_duration_seconds": round(result.duration_s, 3),
            "grader_duration_seconds": round(result.judge_s, 3),
            "total_duration_seconds": round(result.duration_s + result.judge_s, 3),
        },
        "user_notes_summary": {"uncertainties": [], "needs_review": notes, "workarounds": []},
        "skillgym": _trial(result),
    }


def execution_metrics(result: TrialResult, trace: Trace | None, transcript_chars: int) -> dict[str, Any]:
    """Tool use and output size; ``errors_encountered`` is 1 when the trial errored (the viewer's crashes)."""
    calls: dict[str, int] = {}
    for call in trace.tool_calls if trace is not None else ():
        calls[call.name] = calls.get(call.name, 0) + 1
    return {
        "tool_calls": calls,
        "total_tool_calls": sum(calls.values()),
        "total_steps": (trace.num_turns if trace is not None and trace.num_turns is not None else None),
        "errors_encountered": 1 if result.status == "errored" else 0,
        "output_chars": len(trace.final_text) if trace is not None else 0,
        "transcript_chars": transcript_chars,
    }


def tokens(result: TrialResult) -> int | None:
    """The trial's total tokens as its provider reported them, or None."""
    return result.usage.total if result.usage is not None else None


def timing(result: TrialResult) -> dict[str, Any]:
    """The run's timing.json: tokens and wall time of the agent's work (its wait for a slot left out) and
    of the judge's grading (the total is both)."""
    return {
        "total_tokens": tokens(result),
        "duration_ms": round(result.duration_s * 1000),
        "total_duration_seconds": round(result.duration_s + result.judge_s, 3),
        "executor_duration_seconds": round(result.duration_s, 3),
        "grader_duration_seconds": round(result.judge_s, 3),
    }


def _trial(result: TrialResult) -> dict[str, Any]:
    return {
        "trial": result.id.key,
        "case": result.id.case_id,
        "condition": result.id.condition,
        "provider": result.id.provider,
        "model": result.model,
        "status": result.status,  # the strict pass rule: every required check held
        "error_class": result.error_class,
        "error_message": result.error_message,
        "score": result.grade.score if result.grade is not None else None,
    }


def benchmark_run(
    result: TrialResult, case: Case | None, *, eval_id: int | str, eval_name: str, configuration: str
) -> dict[str, Any]:
    """One entry of benchmark.json's ``runs``."""
    rows = expectations(result, case)
    counts = summary(rows)
    return {
        "eval_id": eval_id,
        "eval_name": eval_name,
        "configuration": configuration,
        "run_number": result.id.trial,
        "result": {
            "pass_rate": counts["pass_rate"],
            "passed": counts["passed"],
            "failed": counts["failed"],
            "total": counts["total"],
            "time_seconds": round(result.duration_s, 3),
            "tokens": tokens(result),
            "errors": 1 if result.status == "errored" else 0,
        },
        "expectations": rows,
        "notes": [*result.warnings, *([_error(result)] if result.status == "errored" else [])],
    }


def stats(values: Sequence[float]) -> dict[str, float] | None:
    """``{mean, stddev, min, max}`` as skill-creator computes them (sample stddev), or None without values."""
    if not values:
        return None
    stddev = statistics.stdev(values) if len(values) > 1 else 0.0
    return {
        "mean": round(statistics.fmean(values), 4),
        "stddev": round(stddev, 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def run_summary(runs: Sequence[dict[str, Any]], configurations: Sequence[str]) -> dict[str, Any]:
    """benchmark.json's ``run_summary``: per configuration, then ``delta`` (the first minus the second)."""
    out: dict[str, Any] = {}
    for config in configurations:
        mine = [r["result"] for r in runs if r["configuration"] == config]
        known_tokens = [float(r["tokens"]) for r in mine if r["tokens"] is not None]
        out[config] = {
            "pass_rate": stats([r["pass_rate"] for r in mine]),
            "time_seconds": stats([r["time_seconds"] for r in mine]),
            "tokens": stats(known_tokens),
            "runs": len(mine),
        }
    first = out.get(configurations[0]) if configurations else None
    second = out.get(configurations[1]) if len(configurations) > 1 else None
    out["delta"] = {
        "pass_rate": _delta(first, second, "pass_rate", "{:+.2f}"),
        "time_seconds": _delta(first, second, "time_seconds", "{:+.1f}"),
        "tokens": _delta(first, second, "tokens", "{:+.0f}"),
    }
    return out


def _delta(first: dict[str, Any] | None, second: dict[str, Any] | None, key: str, form: str) -> str | None:
    if first is None or second is None or first[key] is None or second[key] is None:
        return None
    value = first[key]["mean"] - second[key]["mean"]
    return form.format(0.0 if math.isclose(value, 0.0, abs_tol=1e-12) else value)
