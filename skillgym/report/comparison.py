"""Two runs side by side for `skillgym compare`: the comparison, what fails it, its md, json and html."""

from __future__ import annotations

from typing import Final

import jinja2
import msgspec

from ..errors import UsageError
from .aggregate import BaselineSummary, Report
from .baseline import compare_to_baseline
from .comparison_md import comparison_lines
from .flaky import telling_k

FORMATS: Final = ("md", "json", "html")


class RunComparison(msgspec.Struct, frozen=True, kw_only=True):
    """What `skillgym compare A B` prints as JSON: where each run came from and the comparison.

    ``comparison`` is exactly what report.json's ``baseline`` holds after ``run --compare-baseline A``.
    """

    baseline_source: str
    current_source: str
    comparison: BaselineSummary
    # Each conclusive regression (a regressed row's key, or the overall verdict): what fails
    # --fail-on-regression.
    regressions: tuple[str, ...]


def compare_runs(baseline: Report, current: Report, *, sources: tuple[str, str]) -> RunComparison:
    """Compare ``current`` with ``baseline``; refuse runs that share no case, since nothing pairs there."""
    shared = {(c.lane, c.case_id) for c in baseline.cases} & {(c.lane, c.case_id) for c in current.cases}
    if not shared and (baseline.cases or current.cases):
        raise UsageError(
            f"{sources[0]} (suite {baseline.suite}) and {sources[1]} (suite {current.suite}) have no case in "
            "common, so nothing pairs; compare two runs of the same suite"
        )
    summary = compare_to_baseline(current, baseline)
    return RunComparison(
        baseline_source=sources[0],
        current_source=sources[1],
        comparison=summary,
        regressions=tuple(conclusive_regressions(summary)),
    )


def conclusive_regressions(summary: BaselineSummary) -> list[str]:
    """Each regressed row's key, and the overall verdict when it regressed (no provider error deciding)."""
    found = [
        f"{r.lane}/{r.case_id}/{r.condition}/{r.provider}" for r in summary.rows if r.change == "regressed"
    ]
    if summary.overall.verdict == "regressed" and not summary.overall_depends_on_errors:
        found.append("overall (paired per case)")
    return found


def render_json(comparison: RunComparison) -> str:
    """The comparison as JSON: sorted keys, two-space indent, a trailing newline."""
    doc = msgspec.json.encode(comparison, order="deterministic")
    return (msgspec.json.format(doc, indent=2) + b"\n").decode()


def render_md(comparison: RunComparison) -> str:
    """The comparison as Markdown: the same words and tables as report.md's baseline section."""
    c = comparison.comparison
    out = [
        f"# skillgym compare — {c.baseline_run} → {c.current_run or comparison.current_source}",
        "",
        f"- Baseline (A): `{comparison.baseline_source}`, run {c.baseline_run}, suite `{c.baseline_suite}`, "
        f"skill `{(c.baseline_skill_hash or '-')[:12]}`.",
        f"- Current (B): `{comparison.current_source}`, run {c.current_run}, suite `{c.current_suite}`, "
        f"skill `{(c.current_skill_hash or '-')[:12]}`.",
        "- Conclusive regressions: "
        + (", ".join(f"`{r}`" for r in comparison.regressions) if comparison.regressions else "none")
        + ".",
        "",
        *comparison_lines(c, comparison.baseline_source),
    ]
    return "\n".join(out).rstrip() + "\n"


_env = jinja2.Environment(
    loader=jinja2.PackageLoader("skillgym.report", "templates"),
    autoescape=True,  # case ids, paths and suite names are the user's text
    undefined=jinja2.StrictUndefined,  # a misspelt field is an error in the tests, not an empty cell
    trim_blocks=True,
    lstrip_blocks=True,
)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _pts(low: float, high: float) -> str:
    return f"[{100 * low:+.0f}, {100 * high:+.0f}]"


_env.filters.update(pct=_pct, pts=_pts, telling_k=telling_k)


def render_html(comparison: RunComparison) -> str:
    """The comparison as one self-contained page: inline styles, no script, nothing fetched."""
    return _env.get_template("compare.html.j2").render(c=comparison.comparison, run=comparison)
