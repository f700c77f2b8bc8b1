"""report.md: the report for people, rendered from the Report struct and nothing else."""

from __future__ import annotations

from ..snapshots.model import SnapshotCheck
from ..stats import Comparison, Interval, Summary
from .aggregate import PairedComparison, Report
from .tokens import TokenReport, TokenTotals


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _interval(interval: Interval | None, *, percent: bool = True) -> str:
    if interval is None:
        return "-"
    if percent:
        return f"[{100 * interval.low:.0f}%, {100 * interval.high:.0f}%]"
    return f"[{interval.low:+.2f}, {interval.high:+.2f}]"


def _esc(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def _row(cells: list[str]) -> str:
    plain = "".join(cells)
    if "|" in plain or "\n" in plain:  # most rows have nothing to escape: no call per cell for them
        cells = [_esc(c) for c in cells]
    return "| " + " | ".join(cells) + " |"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += [_row(row) for row in rows]
    return [*lines, ""]


def _comparison_row(label: str, lane: str, c: Comparison, mcnemar: float | None) -> list[str]:
    p = "-" if c.p_value is None else f"{c.p_value:.3g}"
    if mcnemar is not None:
        p += f" (McNemar {mcnemar:.3g})"
    diff = "-" if c.mean_diff is None else f"{100 * c.mean_diff:+.0f} pts"
    interval = "-" if c.interval is None else f"[{100 * c.interval.low:+.0f}, {100 * c.interval.high:+.0f}]"
    return [label, lane, str(c.n_pairs), diff, interval, f"{c.wins}/{c.ties}/{c.losses}", p, c.verdict]


def _comparisons(items: tuple[PairedComparison, ...], label_of: str) -> list[str]:
    header = ["comparison", "lane", "cases", "mean diff", "95% CI", "W/T/L", "p (sign)", "verdict"]
    rows = [
        _comparison_row(
            c.comparison.name if label_of == "name" else c.provider, c.lane, c.comparison, c.mcnemar_p
        )
        for c in items
    ]
    return _table(header, rows)


def render_markdown(report: Report) -> str:
    """The whole report.md, deterministic for a given Report."""
    c = report.counts
    graded = c.total - c.errored
    out = [f"# skillgym report — run {report.run_id}", ""]
    if report.interrupted:
        out += [
            "> **Interrupted:** this run was stopped before every trial finished; resume it with",
            ">",
            "> `skillgym run --resume <run-dir>`",
            "",
        ]
    out += ["## Executive summary", ""]
    out += [
        f"- Suite `{report.suite}`; lanes {', '.join(report.lanes)}; "
        f"conditions {', '.join(report.conditions)}; "
        f"providers {', '.join(report.providers)}; {report.trials} trial(s) per case and condition.",
        f"- {c.total} trials: {c.passed} passed, {c.failed} failed, {c.errored} errored "
        f"(pass rate {_pct(c.passed / c.total if c.total else None)}; "
        f"excluding infrastructure errors {_pct(c.passed / graded if graded else None)}).",
    ]
    if report.errors_by_class:
        out.append(
            "- Infrastructure errors: "
            + ", ".join(f"{k} {v}" for k, v in report.errors_by_class.items())
            + "."
        )
    for comp in report.condition_comparisons:
        cmp = comp.comparison
        out.append(
            f"- {cmp.name}, {comp.lane} lane ({comp.provider}): **{cmp.verdict}** over {cmp.n_pairs} case(s)."
        )
    if report.tokens is not None:
        t = report.tokens.totals
        out.append(f"- Tokens: {_n(t.total)} in total over {t.trials} trial(s) that reported usage.")
    if report.snapshots is not None and report.snapshots.regressions:
        regressed = ", ".join(
            f"`{r.label}` ({'new cost' if r.change_percent is None else f'{r.change_percent:+.0f}%'})"
            for r in report.snapshots.regressions
        )
        out.append(f"- **Token regressions** against the snapshots: {regressed}.")
    out += [f"- Skill content hash `{report.skill_hash[:12]}`.", ""]

    out += ["## Condition comparison", ""]
    if report.condition_comparisons:
        out += [
            "Paired per case: each case's pass rate under the treatment minus under the control.",
            "The verdict is `inconclusive` whenever the interval contains zero or the exact sign test",
            "does not reject.",
            "",
            *_comparisons(report.condition_comparisons, "name"),
        ]
    else:
        out += ["No condition pairs in this run (run more than one condition to compare).", ""]

    out += ["## Lane breakdown", ""]
    out += _table(
        [
            "lane",
            "cases",
            "trials",
            "passed",
            "failed",
            "errored",
            "pass rate",
            "excl. errors",
            "case-level 95% CI",
            "mean score",
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
                _pct(s.pass_rate_excluding_errors),
                _interval(s.case_pass_interval),
                "-" if s.mean_score is None else f"{s.mean_score:.2f}",
            ]
            for s in report.lane_summaries
        ],
    )

    out += ["## Provider comparison", ""]
    if report.provider_comparisons:
        out += _comparisons(report.provider_comparisons, "provider")
    else:
        out += ["One provider in this run.", ""]

    out += ["## Failed cases", ""]
    if report.failures:
        for f in report.failures:
            label = f"{f.status}" + (f", {f.error_class}" if f.error_class else "")
            out.append(f"- `{f.key}` ({label})")
            out += [f"  - {reason}" for reason in f.reasons]
        out.append("")
    else:
        out += ["None.", ""]

    out += ["## Trial aggregation", ""]
    out += _table(
        [
            "lane",
            "case",
            "condition",
            "provider",
            "trials",
            "pass",
            "95% CI (Wilson)",
            "mean score",
            "pass@k",
            "pass^k",
        ],
        [
            [
                s.lane,
                s.case_id,
                s.condition,
                s.provider,
                str(s.trials),
                f"{s.passed}/{s.trials}",
                _interval(s.pass_interval),
                "-" if s.mean_score is None else f"{s.mean_score:.2f}",
                " ".join(f"@{k}={v:.2f}" for k, v in s.pass_at_k.items()),
                " ".join(f"^{k}={v:.2f}" for k, v in s.pass_hat_k.items()),
            ]
            for s in report.cases
        ],
    )

    out += ["## Baseline comparison", ""]
    if report.baseline is None:
        out += ["No baseline given (use `--compare-baseline REPORT`).", ""]
    else:
        b = report.baseline
        out += [
            f"Against run {b.baseline_run}: overall **{b.overall.verdict}** "
            f"over {b.overall.n_pairs} case(s).",
            "",
        ]
        out += _table(
            ["lane", "case", "condition", "provider", "baseline", "current", "delta", "status"],
            [
                [
                    r.lane,
                    r.case_id,
                    r.condition,
                    r.provider,
                    _pct(r.baseline_pass_rate),
                    _pct(r.current_pass_rate),
                    "-" if r.delta is None else f"{100 * r.delta:+.0f} pts",
                    r.status,
                ]
                for r in b.rows
            ],
        )

    out += ["## Anti-pattern summary", ""]
    if report.anti_patterns:
        out += _table(
            ["rule", "findings by severity"],
            [
                [rule, ", ".join(f"{k} {v}" for k, v in counts.items())]
                for rule, counts in report.anti_patterns.items()
            ],
        )
    else:
        out += ["No anti-pattern findings.", ""]

    out += ["## Completeness summary", ""]
    if report.completeness:
        out += _table(["dogfood item", "mean"], [[k, f"{v:.2f}"] for k, v in report.completeness.items()])
    else:
        out += ["No dogfood trials were graded.", ""]
    if report.tokens is not None:
        out += _token_section(report.tokens)
    if report.snapshots is not None:
        out += _snapshot_section(report.snapshots)
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
        "Per trial: median (min-max); cached is cache read plus cache write.",
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
