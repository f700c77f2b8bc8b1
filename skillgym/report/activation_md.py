"""Did it fire vs did it help, in Markdown: report.md's section on self-loaded skills."""

from __future__ import annotations

from ..paired import Comparison
from ..score_intervals import SMALLEST_CHECKED
from .aggregate import Report
from .mdparts import FEW_CASES, pct, pts, rate_interval, table


def activation_section(report: Report) -> list[str]:
    if "self-load" not in report.conditions:
        return []
    out = ["## Did it fire vs did it help", ""]
    if not report.activation:
        return [
            *out,
            "No graded self-load trial of a case that expects a skill: nothing says whether the skill fires.",
            "",
        ]
    out += [
        "Under self-load the agent must load the skill itself. A trial *activated* the skill when its trace",
        "shows the case's expected skill loaded (a skill tool call, a read of its SKILL.md); naming it in an",
        "answer is not loading it. Errored trials have no grade and are not counted here.",
        "",
    ]
    out += table(
        [
            "lane",
            "provider",
            "activated",
            "95% CI (trials)",
            "95% CI (cases)",
            "pass when loaded",
            "pass when not loaded",
        ],
        [
            [
                a.lane,
                a.provider,
                f"{a.activated}/{a.trials} = {pct(a.activation_rate)} ({a.cases} case(s), "
                f"{a.cases_never_activated} never)",
                rate_interval(a.activation_interval),
                rate_interval(a.case_activation_interval),
                f"{a.passed_when_activated}/{a.activated} = {pct(a.pass_rate_when_activated)} "
                f"{rate_interval(a.pass_interval_when_activated)}",
                f"{a.passed_when_not_activated}/{a.not_activated} = {pct(a.pass_rate_when_not_activated)} "
                f"{rate_interval(a.pass_interval_when_not_activated)}",
            ]
            for a in report.activation
        ],
    )
    for a in report.activation:
        out.append(f"**{a.lane}, {a.provider}.**")
        if a.split_cases:
            out.append(
                f"- Over the {a.split_cases} case(s) that ran none, self-load and preloaded: realized lift "
                f"{_lift(a.realized_lift)} = oracle lift {_lift(a.oracle_lift)} minus activation gap "
                f"{_lift(a.gap)}."
            )
        out.append(
            "- Activation gap (preloaded vs self-load, paired per case): "
            f"{_comparison_words(a.activation_gap)}."
        )
        out.append(
            f"- Help when loaded (self-load trials that loaded the skill vs none, paired per case): "
            f"{_comparison_words(a.help_when_loaded)}"
            + (
                f"; {a.cases_never_activated} case(s) never loaded it and are not in it"
                if a.cases_never_activated
                else ""
            )
            + "."
        )
        out.append("")
    few = any(
        c is not None and c.interval is not None and c.n_pairs < SMALLEST_CHECKED
        for a in report.activation
        for c in (a.activation_gap, a.help_when_loaded)
    )
    return [
        *out,
        *(FEW_CASES if few else []),
        "The activation gap compares two assigned conditions. Help when loaded conditions on the agent's",
        "own choice to load the skill, so it is **observational**: the trials that loaded it may be the",
        "easier (or harder) ones, and the difference is an association, not the skill's effect. The oracle",
        "lift (preloaded vs none) is the assigned estimate of what the skill does once loaded.",
        "",
    ]


def _comparison_words(c: Comparison | None) -> str:
    if c is None:
        return "no case to pair"
    diff = "-" if c.mean_diff is None else f"{100 * c.mean_diff:+.0f} pts"
    few = " †" if c.interval is not None and c.n_pairs < SMALLEST_CHECKED else ""
    return f"{diff}, 95% CI {pts(c.interval)}{few} over {c.n_pairs} case(s): **{c.verdict}**"


def _lift(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.0f} pts"
