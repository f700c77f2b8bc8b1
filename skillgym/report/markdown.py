"""report.md: the report for people, rendered from the Report struct and nothing else."""

from __future__ import annotations

from ..judge.report import judge_markdown
from ..paired import Comparison
from ..results import NOT_THE_AGENTS
from ..score_intervals import SMALLEST_CHECKED
from ..snapshots.model import SnapshotCheck
from ..stats import Interval, Summary
from .activation_md import activation_section
from .adaptive import aa_lines, adaptive_lines
from .aggregate import LIFTS, CaseStats, PairedComparison, Report
from .comparison_md import baseline_section
from .mdparts import FEW_CASES as _FEW_CASES
from .mdparts import depends as _depends
from .mdparts import left_out as _left_out
from .mdparts import pct as _pct
from .mdparts import rate_interval as _interval
from .mdparts import table as _table
from .spend import budget_section, cost_section, gates_section
from .tokens import TokenReport, TokenTotals


def _score_interval(s: CaseStats) -> str:
    if s.score_interval is not None:
        return f"[{s.score_interval.low:.2f}, {s.score_interval.high:.2f}]"
    return "1 trial: no interval" if s.graded == 1 else "-"


def _pass_interval(s: CaseStats) -> str:
    return "no usable trials" if s.pass_interval is None else _interval(s.pass_interval)


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


_LIFTS = {lift.name: lift for lift in LIFTS}


def _verdict(c: Comparison) -> str:
    """The verdict in words that read the right way round (stale harm: "stale hurts", not "improved")."""
    lift = _LIFTS.get(c.name)
    if lift is None or c.verdict == "inconclusive":
        return c.verdict
    return lift.improved if c.verdict == "improved" else lift.regressed


def _paired_verdict(comp: PairedComparison) -> str:
    return _depends(comp.depends_on_errors) if comp.depends_on_errors else _verdict(comp.comparison)


# The basis of every verdict, said wherever verdicts are shown.
_BASIS = [
    "Trials that errored for reasons not the agent's (environment, grader, provider unavailable or silent",
    "for its whole budget, interrupted) are left out; timeouts (the agent ran out of time while it worked)",
    "and provider errors count as failures. A provider error may be an outage or a rate limit as well as",
    "the agent's own failure, so where the compared cases have some, the verdict is also taken with them",
    "left out; if the two differ it is `inconclusive` and says how many decided it. The numbers are those",
    "counting them.",
]
_MCNEMAR = [
    "McNemar is the exact test for paired pass/fail outcomes (one trial a side): it asks whether the cases",
    "only the treatment passed outnumber those only the control passed by more than chance.",
]


# Beyond this many unpaired cases the list stops; report.json lists them all.
_UNPAIRED_SHOWN = 10


def _unpaired(cases: tuple[str, ...]) -> str:
    shown = ", ".join(f"`{c}`" for c in cases[:_UNPAIRED_SHOWN])
    more = f" and {len(cases) - _UNPAIRED_SHOWN} more" if len(cases) > _UNPAIRED_SHOWN else ""
    return f"{len(cases)} unpaired (run on one side only, not compared): {shown}{more}"


def _cases(comp: PairedComparison) -> str:
    n, left_out = comp.comparison.n_pairs, comp.cases_left_out_for_errors
    notes = [_left_out(left_out)] if left_out else []
    notes += [_unpaired(comp.unpaired)] if comp.unpaired else []
    return f"{n} ({'; '.join(notes)})" if notes else str(n)


def _comparison_row(label: str, comp: PairedComparison, provider: str | None) -> list[str]:
    c = comp.comparison
    p = "-" if c.p_value is None else f"{c.p_value:.3g}"
    if comp.mcnemar_p is not None:
        p += f" (McNemar {comp.mcnemar_p:.3g})"
    diff = "-" if c.mean_diff is None else f"{100 * c.mean_diff:+.0f} pts"
    interval = "-" if c.interval is None else f"[{100 * c.interval.low:+.0f}, {100 * c.interval.high:+.0f}]"
    if c.interval is not None and c.n_pairs < SMALLEST_CHECKED:
        interval += " †"
    where = [comp.lane] if provider is None else [comp.lane, provider]
    return [
        label,
        *where,
        _cases(comp),
        diff,
        interval,
        f"{c.wins}/{c.ties}/{c.losses}",
        p,
        _paired_verdict(comp),
    ]


def _comparisons(items: tuple[PairedComparison, ...], *, by_provider: bool, providers: int) -> list[str]:
    """Condition comparisons (a provider column when the run has several) or provider comparisons."""
    with_column = not by_provider and providers > 1
    header = ["comparison", "lane", *(["provider"] if with_column else [])]
    header += ["cases", "mean diff", "95% CI", "W/T/L", "p (sign)", "verdict"]
    rows = [
        _comparison_row(
            c.provider if by_provider else c.comparison.name, c, c.provider if with_column else None
        )
        for c in items
    ]
    few = any(c.comparison.interval is not None and c.comparison.n_pairs < SMALLEST_CHECKED for c in items)
    return _table(header, rows) + (_FEW_CASES if few else [])


def _summary(report: Report) -> list[str]:
    c = report.counts
    graded = c.total - c.errored
    counted = c.total - sum(n for k, n in report.errors_by_class.items() if k in NOT_THE_AGENTS)
    out = ["## Executive summary", ""]
    out += [
        f"- Suite `{report.suite}`; lanes {', '.join(report.lanes) or '(none ran)'}; "
        f"conditions {', '.join(report.conditions)}; "
        f"providers {', '.join(report.providers)}; "
        + (
            f"adaptive trials, at most {report.trials} per case and condition."
            if report.adaptive is not None
            else f"{report.trials} trial(s) per case and condition."
        ),
        f"- {c.total} trials: {c.passed} passed, {c.failed} failed, {c.errored} errored "
        f"(pass rate {_pct(c.passed / c.total if c.total else None)} over every trial; "
        + (
            f"{_pct(c.passed / counted)} for verdicts, over every trial but errors not the agent's; "
            if counted
            else "none for verdicts: every trial errored for reasons not the agent's; "
        )
        + (
            f"{_pct(c.passed / graded)} excluding every errored trial, timeouts and provider errors too)."
            if graded
            else "none excluding errored trials: no trial was graded)."
        ),
    ]
    if report.errors_by_class:
        out.append(f"- Errored trials by class: {_errors_by_class(report.errors_by_class)}.")
    for comp in report.condition_comparisons:
        cmp, left_out = comp.comparison, comp.cases_left_out_for_errors
        out.append(
            f"- {cmp.name}, {comp.lane} lane ({comp.provider}): **{_paired_verdict(comp)}** "
            f"over {cmp.n_pairs} case(s)"
            + (f"; {_left_out(left_out)}" if left_out else "")
            + (f"; {len(comp.unpaired)} unpaired case(s) not compared" if comp.unpaired else "")
            + "."
        )
    if report.warned:
        out.append(f"- {len(report.warned)} trial(s) finished with warnings (see Warnings).")
    if report.tokens is not None:
        t = report.tokens.totals
        out.append(f"- Tokens: {_n(t.total)} in total over {t.trials} trial(s) that reported usage.")
    if report.snapshots is not None and report.snapshots.regressions:
        regressed = ", ".join(
            f"`{r.label}` ({'new cost' if r.change_percent is None else f'{r.change_percent:+.0f}%'})"
            for r in report.snapshots.regressions
        )
        out.append(f"- **Token regressions** against the snapshots: {regressed}.")
    return [*out, *_sandbox_line(report), f"- Skill content hash `{report.skill_hash[:12]}`.", ""]


def _sandbox_line(report: Report) -> list[str]:
    if report.sandbox is None:
        return []
    if report.sandbox == "none":
        return [
            "- **Sandbox: none**: trials were not sandboxed; agents could write anywhere the user can and "
            "read their home."
        ]
    network = report.network or "per provider (host for agent CLIs, none for stand-ins)"
    return [f"- Sandbox: {report.sandbox}, network {network}."]


def _errors_by_class(errors: dict[str, int]) -> str:
    """Errored trials by class, the agent's apart from the rest, saying what comparisons do with each."""
    theirs = ", ".join(f"{k} {v}" for k, v in errors.items() if k not in NOT_THE_AGENTS)
    not_theirs = ", ".join(f"{k} {v}" for k, v in errors.items() if k in NOT_THE_AGENTS)
    parts = [f"{theirs} (the agent's: failures in comparisons)"] if theirs else []
    parts += [f"{not_theirs} (not the agent's: left out of comparisons)"] if not_theirs else []
    return "; ".join(parts)


def _condition_section(report: Report) -> list[str]:
    out = ["## Condition comparison", ""]
    if not report.condition_comparisons:
        return [*out, "No condition pairs in this run (run more than one condition to compare).", ""]
    return [
        *out,
        "Paired per case: each case's pass rate under the treatment minus under the control.",
        *_BASIS,
        "The interval is Newcombe's paired square-and-add over each condition's score interval on case",
        "means (see the README); the verdict is `inconclusive` whenever it contains zero or the exact sign",
        "test does not reject.",
        *(_ERRORS_LEFT_OUT if any(c.cases_left_out_for_errors for c in report.condition_comparisons) else []),
        *(_MCNEMAR if any(c.mcnemar_p is not None for c in report.condition_comparisons) else []),
        "",
        *_comparisons(report.condition_comparisons, by_provider=False, providers=len(report.providers)),
    ]


_ERRORS_LEFT_OUT = [
    "A case whose treatment or control has no trial but errors not the agent's is left out, and the",
    "cases column says how many.",
]


def _lane_section(report: Report) -> list[str]:
    out = [
        "## Lane breakdown",
        "",
        "Rates pool the trials: `pass rate` over every trial; `for verdicts` over every trial but errors not",
        "the agent's (the basis of the verdicts: timeouts and provider errors fail); `excl. errors` over",
        "graded trials (every errored trial left out, timeouts and provider errors too). `mean case score`",
        "averages each case's mean score (per condition and provider) over its graded trials.",
        "",
    ]
    out += _table(
        [
            "lane",
            "cases",
            "trials",
            "passed",
            "failed",
            "errored",
            "pass rate",
            "for verdicts",
            "excl. errors",
            "mean case score",
        ],
        [
            [
                s.lane,
                str(s.cases),
                str(s.counts.total),
                str(s.counts.passed),
                str(s.counts.failed),
                str(s.counts.errored),
                _pct(s.pass_rate),
                _pct(s.pass_rate_for_verdicts),
                _pct(s.pass_rate_excluding_errors),
                _score(s.mean_score),
            ]
            for s in report.lane_summaries
        ],
    )
    if not report.condition_summaries:
        return out
    several = len(report.providers) > 1
    out += [
        "Per condition"
        + (" and provider" if several else "")
        + ": the pooled rates count trials, over every",
        "trial and over graded trials (`excl. errors`: every errored trial left out, timeouts and provider",
        "errors too). `mean case pass rate` weighs every case alike, each case's rate counted as the",
        "comparisons count it (timeouts and provider errors fail, errors not the agent's are left out), over",
        "the cases with such trials (`cases` says so when fewer); the case-level interval beside it is for",
        "that mean, over the same trials: a score-type interval on the case means (two or more are needed).",
        "",
    ]
    header = ["lane", "condition", *(["provider"] if several else []), "cases", "trials", "passed"]
    header += ["failed", "errored", "pooled pass rate", "pooled excl. errors", "mean case pass rate"]
    header += ["its case-level 95% CI", "mean case score"]
    out += _table(
        header,
        [
            [
                s.lane,
                s.condition,
                *([s.provider] if several else []),
                _condition_cases(s.cases, s.cases_in_mean),
                str(s.counts.total),
                str(s.counts.passed),
                str(s.counts.failed),
                str(s.counts.errored),
                _pct(s.pass_rate),
                _pct(s.pass_rate_excluding_errors),
                _pct(s.mean_case_pass_rate),
                _interval(s.case_pass_interval)
                + (" †" if _few(s.case_pass_interval, s.cases_in_mean) else ""),
                _score(s.mean_score),
            ]
            for s in report.condition_summaries
        ],
    )
    if any(_few(s.case_pass_interval, s.cases_in_mean) for s in report.condition_summaries):
        out += _FEW_CASES
    return out


def _few(interval: Interval | None, cases: int | None) -> bool:
    return interval is not None and cases is not None and cases < SMALLEST_CHECKED


def _condition_cases(cases: int, in_mean: int | None) -> str:
    if in_mean is None or in_mean == cases:
        return str(cases)
    return f"{cases} ({in_mean} in the mean case pass rate)"


def _provider_section(report: Report) -> list[str]:
    out = ["## Provider comparison", ""]
    if not report.provider_comparisons:
        return [*out, "One provider in this run.", ""]
    return [
        *out,
        "Paired per case: each provider's pass rate over the conditions both ran, averaged per case.",
        *_BASIS,
        *(_ERRORS_LEFT_OUT if any(c.cases_left_out_for_errors for c in report.provider_comparisons) else []),
        "",
        *_comparisons(report.provider_comparisons, by_provider=True, providers=len(report.providers)),
    ]


def _failures_section(report: Report) -> list[str]:
    out = ["## Failed cases", ""]
    if not report.failures:
        return [*out, "None.", ""]
    for f in report.failures:
        label = f"{f.status}" + (f", {f.error_class}" if f.error_class else "")
        out.append(f"- `{f.key}` ({label})")
        out += [f"  - {reason}" for reason in f.reasons]
    return [*out, ""]


def _passes(s: CaseStats) -> str:
    shown = f"{s.passed}/{s.trials}"
    if not s.errored:
        return shown
    shown += f" ({s.passed}/{s.graded} = {_pct(s.pass_rate_excluding_errors)} excl. errors"
    if s.errored_not_agents:  # else the rate for verdicts is the one over every trial, shown first
        shown += f"; {s.passed}/{s.verdict_trials} = {_pct(s.pass_rate_for_verdicts)} for verdicts"
    return shown + ")"


# Beyond this many warned trials, report.json has the rest: a warning repeated per trial is one problem.
_WARNED_SHOWN = 50


def _warnings_section(report: Report) -> list[str]:
    out = ["## Warnings", ""]
    if not report.warned:
        return [*out, "None.", ""]
    out += ["Worth a look, though no verdict depends on them:", ""]
    for warned in report.warned[:_WARNED_SHOWN]:
        out.append(f"- `{warned.key}`")
        out += [f"  - {warning}" for warning in warned.warnings]
    hidden = len(report.warned) - _WARNED_SHOWN
    if hidden > 0:
        out.append(f"- ... and {hidden} more trial(s) with warnings in report.json")
    return [*out, ""]


def _cases_section(report: Report) -> list[str]:
    out = [
        "## Trial aggregation",
        "",
        "`pass`, pass@k and pass^k are over every trial of the case, errored ones included (an errored",
        "trial is no pass); the Wilson interval is over the trials for verdicts (errors not the agent's left",
        "out: `no usable trials` when nothing else is left).",
    ]
    if any(s.errored for s in report.cases):
        out += [
            "The rate over graded trials follows in brackets (every errored trial left out, timeouts and",
            "provider errors too) and, when some error was not the agent's, the rate for verdicts (those",
            "errors left out; timeouts and provider errors are failures).",
        ]
    out += [
        "Scores are over graded trials; their interval is Wilson's with the mean score in place of the",
        "pass rate (the widest spread a score in [0, 1] can have), and one graded trial has none.",
        "",
    ]
    adaptive = any(s.pass_interval_kind != "wilson" for s in report.cases)
    if adaptive:
        out[-1:] = ["An adaptive case's interval is its confidence sequence (CS): see Adaptive trials.", ""]
    kind = "95% CI (Wilson; CS when adaptive)" if adaptive else "95% CI (Wilson)"
    header = ["lane", "case", "condition", "provider", "trials", "pass", "errored", kind]
    header += ["mean score", "score 95% CI", "pass@k", "pass^k"]
    rows = [
        [
            s.lane,
            s.case_id,
            s.condition,
            s.provider,
            str(s.trials),
            _passes(s),
            str(s.errored),
            _pass_interval(s),
            _score(s.mean_score),
            _score_interval(s),
            " ".join(f"@{k}={v:.2f}" for k, v in s.pass_at_k.items()),
            " ".join(f"^{k}={v:.2f}" for k, v in s.pass_hat_k.items()),
        ]
        for s in report.cases
    ]
    return [*out, *_table(header, rows)]


def _anti_pattern_section(report: Report) -> list[str]:
    out = ["## Anti-pattern summary", ""]
    if not report.anti_patterns:
        return [*out, "No anti-pattern findings.", ""]
    return out + _table(
        ["rule", "findings by severity"],
        [
            [rule, ", ".join(f"{k} {v}" for k, v in counts.items())]
            for rule, counts in report.anti_patterns.items()
        ],
    )


def _completeness_section(report: Report) -> list[str]:
    out = ["## Completeness summary", ""]
    if not report.completeness:
        return [*out, "No dogfood trials were graded.", ""]
    return out + _table(["dogfood item", "mean"], [[k, f"{v:.2f}"] for k, v in report.completeness.items()])


def render_markdown(report: Report) -> str:
    """The whole report.md, deterministic for a given Report."""
    out = [f"# skillgym report — run {report.run_id}", ""]
    if report.interrupted:
        out += [
            "> **Interrupted:** this run was stopped before every trial finished; resume it with",
            ">",
            "> `skillgym run --resume <run-dir>`",
            "",
        ]
    if report.shard is not None:
        out += [
            f"> **Shard {report.shard}:** this run holds its part of the plan only; join every shard's run "
            "folder with `skillgym merge OUT SHARD_DIR...` for the whole run's report.",
            "",
        ]
    out += budget_section(report.budget)
    out += _summary(report)
    out += gates_section(report.gates)
    out += _condition_section(report)
    out += activation_section(report)
    out += _lane_section(report)
    out += _provider_section(report)
    out += _failures_section(report)
    out += _warnings_section(report)
    if report.adaptive is not None:
        out += adaptive_lines(report.adaptive)
    if report.aa:
        out += aa_lines(report.aa)
    out += _cases_section(report)
    out += baseline_section(report)
    out += _anti_pattern_section(report)
    out += _completeness_section(report)
    if report.tokens is not None:
        out += _token_section(report.tokens)
    if report.snapshots is not None:
        out += _snapshot_section(report.snapshots)
    out += cost_section(report.cost)
    if report.judge is not None:
        out += judge_markdown(report.judge)
    return "\n".join(out).rstrip() + "\n"


def _n(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _per_trial(s: Summary | None) -> str:
    return "-" if s is None else f"{_n(s.median)} ({_n(s.low)}-{_n(s.high)})"


def _totals_row(label: str, t: TokenTotals) -> list[str]:
    counts = (t.input, t.output, t.cache_read, t.cache_write, t.reasoning, t.total)
    return [label, str(t.trials), str(t.missing), *(_n(c) for c in counts)]


def _token_section(tokens: TokenReport) -> list[str]:
    out = [
        "## Token usage",
        "",
        "As the providers reported it: a trial without usage is counted as missing, never estimated.",
        "Totals over the run and per lane:",
        "",
    ]
    head = [
        "",
        "trials",
        "without usage",
        "input",
        "output",
        "cache read",
        "cache write",
        "reasoning",
        "total",
    ]
    out += _table(
        head,
        [_totals_row("**all**", tokens.totals)]
        + [_totals_row(lane.lane, lane.totals) for lane in tokens.lanes],
    )
    out += ["Per case and condition, per trial: median (min-max); cached is cache read plus cache write.", ""]
    out += _table(
        ["lane", "case", "condition", "provider", "model", "trials", "input", "output", "cached", "total"],
        [
            [
                r.lane,
                r.case_id,
                r.condition,
                r.provider,
                r.model,
                str(r.trials) + (f" (+{r.missing} without usage)" if r.missing else ""),
                _per_trial(r.input),
                _per_trial(r.output),
                _per_trial(r.cached),
                _per_trial(r.total),
            ]
            for r in tokens.rows
        ],
    )
    return out


def _snapshot_section(check: SnapshotCheck) -> list[str]:
    counts = ", ".join(f"{n} {status}" for status, n in check.counts.items()) or "nothing measured"
    out = [
        "## Token snapshots",
        "",
        f"Median total tokens per trial against `{check.directory}` (threshold {check.threshold_percent:g}%; "
        f"a case's own token budget wins): {counts}."
        + (" Enforced: a regression fails the run." if check.enforce else ""),
        "",
    ]
    out += _table(
        [
            "status",
            "lane",
            "case",
            "condition",
            "provider/model",
            "median total",
            "snapshot",
            "change",
            "threshold",
        ],
        [
            [
                r.status,
                r.lane,
                r.case_id,
                r.condition,
                f"{r.provider}/{r.model}",
                _n(r.current_total),
                _n(r.snapshot_total),
                "-" if r.change_percent is None else f"{r.change_percent:+.1f}%",
                f"{r.threshold_percent:g}%",
            ]
            for r in check.rows
        ],
    )
    out += [f"> {note}" for note in check.notes]
    return out
