"""The baseline comparison in Markdown: report.md's section and the body of `skillgym compare`."""

from __future__ import annotations

from .aggregate import BaselineSummary, FlakyCase, Report
from .flaky import telling_k
from .mdparts import depends, left_out, p_value, pct, pts, table


def baseline_section(report: Report) -> list[str]:
    out = ["## Baseline comparison", ""]
    b, path = report.baseline, report.baseline_report
    if b is None and path is None:
        return [*out, "No baseline given (use `--compare-baseline REPORT`).", ""]
    if b is None:
        why = f": {report.baseline_problem}" if report.baseline_problem else ""
        return [
            *out,
            f"This run named the baseline `{path}`; it was not compared when this report was built{why}.",
            "",
        ]
    return out + comparison_lines(b, path)


def comparison_lines(b: BaselineSummary, path: str | None) -> list[str]:
    """A run against a baseline in words and tables: report.md's baseline section and `skillgym compare`."""
    dropped = f"; {left_out(b.cases_left_out_for_errors)}" if b.cases_left_out_for_errors else ""
    overall = depends(b.overall_depends_on_errors) if b.overall_depends_on_errors else b.overall.verdict
    c = b.overall
    out = [
        f"Against run {b.baseline_run}" + (f" (`{path}`)" if path else "") + ": overall "
        f"**{overall}** over {c.n_pairs} case(s){dropped}.",
    ]
    if c.mean_diff is not None:
        p = "" if c.p_value is None else f", sign test p {c.p_value:.3g}"
        out.append(
            f"Mean change per case {100 * c.mean_diff:+.0f} pts, 95% CI {pts(c.interval)}, "
            f"W/T/L {c.wins}/{c.ties}/{c.losses}{p}."
            + (f" Test: {b.overall_test}." if b.overall_test else "")
        )
    if b.changes:
        out.append("Rows: " + ", ".join(f"{n} {change}" for change, n in b.changes.items() if n) + ".")
    out += [
        "",
        "Pass rates for verdicts: errors not the agent's are left out (the brackets say how many of the",
        "errored trials), timeouts and provider errors count as failures. A verdict or status that reads",
        "otherwise with the provider errors left out too is inconclusive and says how many decided it.",
        "Rows that were not compared (fingerprint-changed, left-out, new, removed) have no delta.",
        "Each compared row's p is a two-sided Fisher exact test of its two pass rates; a row is flagged",
        "fixed or regressed only when its **Holm**-adjusted p (over every compared row) is below 0.05, so",
        "the chance of even one false flag in this table is at most 5%. The raw p stays beside it. The",
        "95% CI of a row's delta is Newcombe's hybrid score interval, not adjusted for the number of rows:",
        "it describes the change; the flag is the test's, which is exact and more cautious at few trials.",
        "",
    ]
    out += table(
        [
            "lane",
            "case",
            "condition",
            "provider",
            "baseline",
            "current",
            "delta",
            "95% CI",
            "p",
            "p (Holm)",
            "change",
        ],
        [
            [
                r.lane,
                r.case_id,
                r.condition,
                r.provider,
                _with_errored(
                    r.baseline_pass_rate_for_verdicts, r.baseline_errored, r.baseline_errored_not_agents
                ),
                _with_errored(
                    r.current_pass_rate_for_verdicts, r.current_errored, r.current_errored_not_agents
                ),
                "-" if r.delta is None else f"{100 * r.delta:+.0f} pts",
                pts(r.interval),
                p_value(r.p_value),
                p_value(r.p_holm),
                depends(r.depends_on_errors) if r.depends_on_errors else (r.change or r.status),
            ]
            for r in b.rows
        ],
    )
    changed = [f"`{r.lane}/{r.case_id}`" for r in b.rows if r.status == "fingerprint-changed"]
    if changed:
        out += [
            f"**Fingerprint changed** (not compared: the case's task or grading differs between the runs, so "
            f"its rates measure different things): {', '.join(dict.fromkeys(changed))}.",
            "",
        ]
    return (
        out
        + _flaky_lines("baseline", b.baseline_run, b.flaky_baseline)
        + _flaky_lines("current", b.current_run, b.flaky_current)
    )


def _with_errored(rate: float | None, errored: int | None, not_agents: int | None) -> str:
    if not errored:
        return pct(rate)
    return pct(rate) + (
        f" ({errored} errored, {not_agents} left out)" if not_agents else f" ({errored} errored)"
    )


# Beyond this many flaky cases a run's table stops; report.json lists them all.
_FLAKY_SHOWN = 25


def _flaky_lines(side: str, run_id: str | None, flaky: tuple[FlakyCase, ...]) -> list[str]:
    title = f"### Flaky cases, {side} run" + (f" {run_id}" if run_id else "")
    if not flaky:
        return [title, "", "No case's trials disagree.", ""]
    shown = flaky[:_FLAKY_SHOWN]
    more = (
        [f"... and {len(flaky) - len(shown)} more (report.json lists them all).", ""]
        if len(flaky) > len(shown)
        else []
    )
    return [
        title,
        "",
        "Cases whose trials for verdicts disagree. The flip rate is the chance that two of its trials",
        "disagree; pass^k the chance that k of them all pass (k the largest below its trials).",
        "",
        *table(
            ["lane", "case", "condition", "provider", "passed", "flip rate", "pass^k"],
            [
                [
                    f.lane,
                    f.case_id,
                    f.condition,
                    f.provider,
                    f"{f.passed}/{f.trials}",
                    pct(f.flip_rate),
                    f"pass^{telling_k(f)} {pct(f.pass_hat_k[str(telling_k(f))])}",
                ]
                for f in shown
            ],
        ),
        *more,
    ]
