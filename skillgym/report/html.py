"""report.html: one self-contained page (charts, tables, filters) plus one page per trial, from the Report.

The page inlines its style and script and loads nothing: it opens from ``file://`` offline. Charts are SVG
drawn here, so the summary and tables read without JavaScript; the script only filters, sorts and pages
the case table. Trial
detail lives in ``trial.html`` inside each trial's folder (next to the screenshots it shows), so the main
page stays small however many trials a run has.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

from ..errors import SkillgymError
from ..files import write_atomic
from ..model import Case
from ..results import NOT_THE_AGENTS, TrialResult
from ..stats import Interval
from ..usage import ConditionTokens
from .aggregate import LIFTS, PairedComparison, Report
from .charts import Chart, Row, chart, exact, nice_ceiling
from .html_sections import sections
from .templating import DASH, compact, environment, interval_text, pct, pp, static
from .trialpage import TRIAL_PAGE, trial_page

HTML_NAME: Final = "report.html"
# The case table's rows per page (the script pages it; without a script every row shows).
FIRST_PAGE: Final = 100
PAGE_WRITERS: Final = 8


def write_html(
    run_dir: Path, report: Report, results: Sequence[TrialResult], *, suite_dir: str | None = None
) -> None:
    """Write each trial's page, then report.html (atomically) linking to them.

    ``suite_dir`` (the run's suite) says which files each verifier reads, for the cases whose
    fingerprint is still the one their trials ran with.
    """
    cases = suite_cases(suite_dir)
    environment()  # built once, before the threads share it

    def page_of(result: TrialResult) -> str | None:
        case = cases.get(result.id.case_id)
        same = case is not None and case.fingerprint == result.id.fingerprint
        return trial_page(run_dir, result, case if same else None)

    # Threads: making and writing a page's file waits on the disk, so several at once hide that latency;
    # rendering itself holds the GIL and gains nothing.
    with ThreadPoolExecutor(max_workers=PAGE_WRITERS) as pool:
        written = list(pool.map(page_of, results))
    pages = {r.id.key: page for r, page in zip(results, written, strict=True) if page is not None}
    write_atomic(run_dir / HTML_NAME, render_html(report, results, pages))


def suite_cases(suite_dir: str | None) -> dict[str, Case]:
    """The suite's cases by id; none when it is gone or no longer loads (the pages then omit what it adds)."""
    if suite_dir is None or not Path(suite_dir).is_dir():
        return {}
    from ..loader import load_suite

    try:
        return {case.id: case for case in load_suite(Path(suite_dir)).cases}
    except SkillgymError:
        return {}


def render_html(report: Report, results: Sequence[TrialResult], pages: dict[str, str] | None = None) -> str:
    """The page itself; ``pages`` maps a trial key to its page (relative to the run folder)."""
    pages = pages if pages is not None else {}
    env = environment()
    return env.get_template("report.html.j2").render(
        report=report,
        summary_chart=_summary_chart(report),
        forest=_forest(report),
        comparisons=[*_rows(report.condition_comparisons), *_rows(report.provider_comparisons)],
        token_chart=_token_chart(report),
        token_conditions=token_conditions(report),
        trials_by_group=_trials_by_group(results, pages),
        not_agents=[f for f in report.failures if f.error_class in NOT_THE_AGENTS],
        errors_agents={k: v for k, v in report.errors_by_class.items() if k not in NOT_THE_AGENTS},
        errors_not_agents={k: v for k, v in report.errors_by_class.items() if k in NOT_THE_AGENTS},
        trial_links=pages,
        style=static("style.css"),
        script=static("report.js"),
        trial_page=TRIAL_PAGE,
        first_page=FIRST_PAGE,
        **sections(report),
    )


def _summary_chart(report: Report) -> Chart:
    """Pass rate per lane x condition (x provider): the mean case pass rate with its case-level interval."""
    many = len(report.providers) > 1
    rows = []
    for s in report.condition_summaries:
        label = f"{s.lane} · {s.condition}" + (f" · {s.provider}" if many else "")
        if s.mean_case_pass_rate is None:
            text = "no usable trials"
        else:
            text = pct(s.mean_case_pass_rate)
            if s.case_pass_interval is not None:
                text += f" {interval_text(s.case_pass_interval)}"
            else:
                text += " (one case: no interval)"
        rows.append(
            Row(
                label=label,
                value=s.mean_case_pass_rate,
                interval=s.case_pass_interval,
                text=text,
                tone=s.lane,
                data={
                    "lane": s.lane,
                    "condition": s.condition,
                    "provider": s.provider,
                    "rate": exact(s.mean_case_pass_rate),
                    "low": exact(s.case_pass_interval.low if s.case_pass_interval else None),
                    "high": exact(s.case_pass_interval.high if s.case_pass_interval else None),
                },
            )
        )
    return chart(
        "pass-rates",
        "Mean case pass rate per lane and condition, with its case-level 95% interval",
        rows,
        low=0.0,
        high=1.0,
        ticks=(0.0, 0.25, 0.5, 0.75, 1.0),
    )


def verdict_word(comparison: PairedComparison) -> str:
    """The verdict in words, read the way its lift reads ("stale hurts" for stale harm)."""
    verdict = comparison.comparison.verdict
    for lift in LIFTS:
        if (lift.treatment, lift.control) == (comparison.treatment, comparison.control):
            return {"improved": lift.improved, "regressed": lift.regressed}.get(verdict, verdict)
    return verdict


def _rows(comparisons: Sequence[PairedComparison]) -> list[dict[str, Any]]:
    return [{"c": c, "word": verdict_word(c)} for c in comparisons]


def _forest(report: Report) -> Chart:
    """Every condition and provider comparison: the mean paired difference and its interval, around zero."""
    rows = []
    for c in (*report.condition_comparisons, *report.provider_comparisons):
        comp = c.comparison
        text = f"{pp(comp.mean_diff)} {verdict_word(c)}"
        rows.append(
            Row(
                label=f"{c.lane} · {comp.name}" + (f" · {c.provider}" if len(report.providers) > 1 else ""),
                value=comp.mean_diff,
                interval=comp.interval,
                text=text,
                tone=comp.verdict,
                data={
                    "lane": c.lane,
                    "provider": c.provider,
                    "treatment": c.treatment,
                    "control": c.control,
                    "diff": exact(comp.mean_diff),
                    "low": exact(comp.interval.low if comp.interval else None),
                    "high": exact(comp.interval.high if comp.interval else None),
                    "verdict": comp.verdict,
                    "pairs": str(comp.n_pairs),
                },
            )
        )
    return chart(
        "forest",
        "Condition comparisons: mean paired difference in pass rate, 95% interval",
        rows,
        low=-1.0,
        high=1.0,
        ticks=(-1.0, -0.5, 0.0, 0.5, 1.0),
        tick_label="{:+.0%}",
        zero=True,
    )


def _token_chart(report: Report) -> Chart | None:
    """Per lane and condition (and provider): the median total tokens per trial, whiskers from min to max."""
    ordered = [c for c in token_conditions(report) if c.total is not None]
    if not ordered:
        return None
    many = len(report.providers) > 1
    rows = []
    for c in ordered:
        assert c.total is not None  # filtered above
        rows.append(
            Row(
                label=f"{c.lane} · {c.condition}" + (f" · {c.provider}" if many else ""),
                value=c.total.median,
                interval=Interval(low=c.total.low, high=c.total.high),
                text=f"{compact(c.total.median)} ({compact(c.total.low)}{DASH}{compact(c.total.high)})",
                tone=c.lane,
                data={
                    "lane": c.lane,
                    "condition": c.condition,
                    "provider": c.provider,
                    "median": exact(c.total.median),
                    "low": exact(c.total.low),
                    "high": exact(c.total.high),
                    "iqr": exact(c.total.iqr),
                    "trials": str(c.trials),
                },
            )
        )
    high = nice_ceiling(max((c.total.high for c in ordered if c.total is not None), default=0.0))
    return chart(
        "tokens",
        "Total tokens per trial: median, whiskers from min to max",
        rows,
        low=0.0,
        high=high,
        ticks=tuple(high * f for f in (0.0, 0.25, 0.5, 0.75, 1.0)),
        tick_label="{:,.0f}",
    )


def token_conditions(report: Report) -> list[ConditionTokens]:
    """The token section's condition rows in the run's order of lanes, conditions and providers."""
    if report.tokens is None:
        return []
    return sorted(
        report.tokens.conditions,
        key=lambda c: (
            _index(report.lanes, c.lane),
            _index(report.conditions, c.condition),
            _index(report.providers, c.provider),
        ),
    )


def _index(names: Sequence[str], name: str) -> int:
    return names.index(name) if name in names else len(names)


def _trials_by_group(
    results: Sequence[TrialResult], pages: dict[str, str]
) -> dict[str, list[dict[str, Any]]]:
    """Per case row (lane/case/condition/provider): its trials in order, each with status and page."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in sorted(results, key=lambda r: r.id.trial):
        groups["/".join(r.id.group)].append(
            {"trial": r.id.trial, "status": r.status, "key": r.id.key, "page": pages.get(r.id.key)}
        )
    return groups
