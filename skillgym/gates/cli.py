"""`skillgym run`'s gate flags (--gate, --fail-on-regression), their checks, and the run's closing lines."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.console import Console

from ..errors import ExitCode, UsageError
from ..model import GateSpec, Suite
from ..plan import Plan
from ..report import Report
from ..report.spend import budget_section, cost_section, gates_section
from .expression import parse_gate
from .model import GateResult

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def add_gate_flags(run: argparse.ArgumentParser) -> None:
    """Register ``--gate`` and ``--fail-on-regression`` on ``skillgym run``."""
    group = run.add_argument_group("gates (what the exit code says)")
    group.add_argument(
        "--gate",
        action="append",
        default=[],
        metavar="EXPR",
        help="a CI gate, e.g. 'lift(self-load, none) > 0' or 'pass_rate(execution, self-load) >= 0.8' "
        "(repeatable; with the suite's gate(...) declarations)",
    )
    group.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="a gate: no case may regress against --compare-baseline",
    )


def run_gates(args: argparse.Namespace, suite: Suite, plan: Plan) -> tuple[GateSpec, ...]:
    """The suite's gates and ``--gate``'s, parsed; a command-line gate naming what the run lacks is an error.

    A suite gate on a lane or condition the run leaves out is judged "skipped" instead: ``nox -s prompt``
    runs one lane of a suite whose gates cover all of them.
    """
    if args.fail_on_regression and args.compare_baseline is None:
        raise UsageError(
            "--fail-on-regression gates on the baseline comparison: add --compare-baseline REPORT"
        )
    given = [parse_gate(text) for text in args.gate]
    for spec in given:
        _check_in_plan(spec, plan)
    seen = {g.expression for g in given}
    return (*given, *(g for g in suite.gates if g.expression not in seen))


def _check_in_plan(spec: GateSpec, plan: Plan) -> None:
    names = {
        "lane": plan.lanes,
        "condition": plan.conditions,
        "treatment": plan.conditions,
        "control": plan.conditions,
        "provider": plan.providers,
        "case": tuple(dict.fromkeys(i.id.case_id for i in plan.items)),
    }
    for parameter, value in spec.arguments.items():
        known = names[parameter]
        if value not in known:
            what = "condition" if parameter in ("treatment", "control") else parameter
            raise UsageError(
                f"--gate {spec.expression!r}: {what} {value!r} is not in this run; the run's {what}s: "
                f"{', '.join(known) or '(none)'}"
            )


def gate_lines(gates: Sequence[GateResult], exit_code: int, out: Console) -> None:
    """The console's closing lines: one per gate, then what the exit code means."""
    for gate in gates:
        mark = {"passed": "PASS", "failed": "FAIL", "inconclusive": "INCONCLUSIVE", "skipped": "SKIP"}[
            gate.status
        ]
        out.print(f"gate {mark}: {gate.expression} — {gate.detail}", markup=False)
    if exit_code == ExitCode.INCONCLUSIVE:
        out.print(
            "exit 3 (inconclusive): errors that are not the agent's (an outage, the environment, the grader) "
            "or the budget left too little data to decide; see report.md, then run again or --resume",
            markup=False,
        )


def write_step_summary(markdown: str, environ: Mapping[str, str]) -> str | None:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY`` when GitHub Actions set it (as GitHub expects: each
    command of a step appends); a problem writing it, or None. The run's results stand either way."""
    target = environ.get(STEP_SUMMARY)
    if not target:
        return None
    try:
        with open(target, "a", encoding="utf-8") as summary:
            summary.write(markdown)
    except OSError as exc:
        return f"${STEP_SUMMARY} ({target}) was not written: {exc.strerror or exc}"
    return None


def step_summary(report: Report, exit_code: int, run_dir: str) -> str:
    """The step summary: the run's counts and exit code, its gates, budget and cost, and where report.md
    is."""
    c = report.counts
    meaning = {0: "passed", 1: "failed", 2: "bad input", 3: "inconclusive", 130: "interrupted"}
    lines = [
        f"## skillgym run {report.run_id}: {meaning.get(exit_code, 'exit')} (exit {exit_code})",
        "",
        f"{c.total} trials: {c.passed} passed, {c.failed} failed, {c.errored} errored"
        + (
            f" ({', '.join(f'{n} {k}' for k, n in report.errors_by_class.items())})"
            if report.errors_by_class
            else ""
        )
        + ".",
        "",
        *gates_section(report.gates),
        *budget_section(report.budget),
        *cost_section(report.cost),
        f"The full report: `{Path(run_dir) / 'report.md'}`.",
        "",
    ]
    return "\n".join(lines)
