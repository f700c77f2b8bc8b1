"""The judge's part of report.json and report.md: its token usage apart from the agent's, and pairwise."""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Data
from ..results import TrialResult
from ..stats import Interval
from ..trace import TokenUsage
from .judges import usage_sum
from .pairwise import PairwiseReport


class JudgeReport(Data, frozen=True, kw_only=True):
    """What judging a run took and found: never counted in the agent's tokens.

    ``usage`` sums what the judge reported for questions asked in this run (answers from the cache or the
    suite's cassettes cost nothing and add nothing); ``checks`` and ``undecided`` count judged checks.
    """

    trials: int  # trials with judged checks or rubrics
    checks: int
    passed: int
    undecided: int
    usage: TokenUsage | None = None
    pairwise: PairwiseReport | None = None
    # What the run said at its start about its judge: who grades, and the judge's stored calibration
    # against the suite's min_kappa (its figures, or a warning that they are missing or too low).
    notes: tuple[str, ...] = ()


def judge_report(results: Sequence[TrialResult]) -> JudgeReport | None:
    """The judge section of a report (None when no trial was judged)."""
    judged = [r for r in results if r.paths.judge is not None]
    if not judged:
        return None
    checks = [c for r in judged if r.grade is not None for c in r.grade.checks if c.kind == "judge"]
    return JudgeReport(
        trials=len(judged),
        checks=len(checks),
        passed=sum(c.passed for c in checks),
        undecided=sum(c.message.startswith("the judge could not decide") for c in checks),
        usage=usage_sum([r.judge_usage for r in judged]),
    )


def with_pairwise(report: JudgeReport | None, pairwise: PairwiseReport | None) -> JudgeReport | None:
    """``report`` with the run's pairwise comparison attached (a run without judged checks may have one)."""
    if pairwise is None:
        return report
    base = report or JudgeReport(trials=0, checks=0, passed=0, undecided=0)
    return JudgeReport(
        trials=base.trials,
        checks=base.checks,
        passed=base.passed,
        undecided=base.undecided,
        usage=base.usage,
        pairwise=pairwise,
        notes=base.notes,
    )


def judge_markdown(report: JudgeReport) -> list[str]:
    """The "Judge" section of report.md."""
    out = ["## Judge", ""]
    if report.checks:
        out.append(
            f"{report.checks} judged checks in {report.trials} trials: {report.passed} passed, "
            f"{report.undecided} undecided (a grader-error when required)."
        )
    out.append(f"Judge tokens (apart from the agent's): {_usage(report.usage)}.")
    out.append("")
    pairwise = report.pairwise
    if pairwise is not None:
        out += _pairwise(pairwise)
    return out


def _pairwise(p: PairwiseReport) -> list[str]:
    out = [
        f"### Blind pairwise comparison (judge {p.judge}, seed {p.seed})",
        "",
        f"Each pair was judged twice with A and B swapped; a winner counts only when both orders agree. "
        f"Judge tokens for the comparison: {_usage(p.usage)}.",
        "",
        "| condition vs none | cases | net preference | 95% interval | case W/T/L | p | verdict | pairs | "
        "swap disagreed |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in p.conditions:
        bias = "—" if c.position_bias is None else f"{c.swap_disagreements} ({c.position_bias:.0%})"
        out.append(
            f"| {c.condition} | {c.cases} | {_signed(c.mean_diff)} | {_interval(c.interval)} | "
            f"{c.case_wins}/{c.case_ties}/{c.case_losses} | {_p(c.p_value)} | {c.verdict} | {c.pairs} | "
            f"{bias} |"
        )
    out += [
        "",
        "| case | lane | condition | win | tie | loss | undecided | swap disagreed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in p.cases:
        out.append(
            f"| {row.case_id} | {row.lane} | {row.condition} | {row.wins} | {row.ties} | {row.losses} | "
            f"{row.undecided} | {row.swap_disagreements} |"
        )
    if p.unpaired:
        out += ["", f"Unpaired trials (errored or without a baseline partner): {', '.join(p.unpaired)}."]
    out.append("")
    return out


def _usage(usage: TokenUsage | None) -> str:
    if usage is None or usage.total is None:
        return (
            "none reported (every answer came from the cache or the suite's recorded verdicts, or the "
            "judge reports no usage)"
        )
    parts = [f"{usage.total} total"]
    if usage.input is not None:
        parts.append(f"{usage.input} input")
    if usage.output is not None:
        parts.append(f"{usage.output} output")
    cached = (usage.cache_read or 0) + (usage.cache_write or 0)
    if usage.cache_read is not None or usage.cache_write is not None:
        parts.append(f"{cached} cached")
    return ", ".join(parts)


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}"


def _interval(interval: Interval | None) -> str:
    return "—" if interval is None else f"[{interval.low:+.2f}, {interval.high:+.2f}]"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"
