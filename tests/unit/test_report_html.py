"""report.html: every number it shows is report.json's, verdicts in words, errors apart, text escaped."""

from __future__ import annotations

import random
from html.parser import HTMLParser
from typing import Any

import msgspec
import pytest

from skillgym.events import RunStart
from skillgym.identity import trial_id
from skillgym.report import build_report, compare_to_baseline
from skillgym.report.html import render_html
from skillgym.report.templating import json_script
from skillgym.results import ErrorClass, Grade, TrialPaths, TrialResult
from skillgym.trace import TokenUsage

CONDITIONS = ("none", "self-load", "preloaded", "stale")


def _start() -> RunStart:
    return RunStart(
        run_id="r1",
        at=0.0,
        argv=(),
        suite="evals",
        suite_dir="/nowhere",
        run_dir="/nowhere/runs/r1",
        lanes=("prompt", "execution"),
        conditions=CONDITIONS,
        providers=("stub",),
        model=None,
        trials=3,
        concurrency=1,
        total_trials=0,
        skill_hash="h" * 64,
    )


def _trial(
    lane: str, case: str, condition: str, n: int, passed: bool, error: ErrorClass | None = None, **more: Any
) -> TrialResult:
    key = f"{lane}/{case}/{condition}/stub/trial-{n}"
    status = "errored" if error else ("passed" if passed else "failed")
    fields: dict[str, Any] = {
        "id": trial_id(
            lane=lane,  # type: ignore[arg-type]
            case_id=case,
            condition=condition,
            provider="stub",
            trial=n,
            fingerprint="f" * 64,
        ),
        "category": "c",
        "model": None,
        "status": status,
        "error_class": error,
        "error_message": f"{error}: details" if error else None,
        "grade": None if error else Grade(passed=passed, score=0.9 if passed else 0.3),
        "started_at": 0.0,
        "finished_at": 1.0,
        "duration_s": 1.0,
        "paths": TrialPaths(dir=key, result=f"{key}/result.json"),
    }
    return TrialResult(**{**fields, **more})


def _results(seed: int = 7) -> list[TrialResult]:
    """Two lanes, four conditions, eight cases, three trials: rates that give every lift a number."""
    rng = random.Random(seed)
    odds = {"none": 0.3, "self-load": 0.7, "preloaded": 0.9, "stale": 0.2}
    out = []
    for lane in ("prompt", "execution"):
        for case in range(8):
            for condition in CONDITIONS:
                for n in (1, 2, 3):
                    usage = TokenUsage(input=rng.randint(900, 5000), output=rng.randint(10, 900))
                    usage = msgspec.structs.replace(usage, total=(usage.input or 0) + (usage.output or 0))
                    out.append(
                        _trial(
                            lane, f"case-{case}", condition, n, rng.random() < odds[condition], usage=usage
                        )
                    )
    out.append(_trial("execution", "case-0", "none", 4, False, error="environment-error"))
    out.append(_trial("execution", "case-1", "none", 4, False, error="timeout"))
    return out


class Elements(HTMLParser):
    """Every element's tag, attributes, the ids of the elements around it, and its own text."""

    VOID = {"meta", "input", "br", "img", "hr", "link", "source"}

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[dict[str, Any]] = []
        self._open: list[dict[str, Any]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = {"tag": tag, "attrs": dict(attrs), "within": [e["attrs"].get("id") for e in self._open]}
        element["text"] = ""
        self.found.append(element)
        if tag not in self.VOID:
            self._open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append(
            {
                "tag": tag,
                "attrs": dict(attrs),
                "within": [e["attrs"].get("id") for e in self._open],
                "text": "",
            }
        )

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            if self._open.pop()["tag"] == tag:
                break

    def handle_data(self, data: str) -> None:
        for element in self._open:
            element["text"] += data

    def select(self, within: str, tag: str, attr: str | None = None) -> list[dict[str, Any]]:
        return [
            e
            for e in self.found
            if within in e["within"] and e["tag"] == tag and (attr is None or attr in e["attrs"])
        ]


def _exact(attribute: str | None, value: float | None) -> bool:
    if value is None:
        return attribute == ""
    return attribute == repr(value) and float(attribute) == value


@pytest.fixture(scope="module")
def page() -> tuple[Any, Elements]:
    results = _results()
    report = build_report(_start(), results)
    # What a reader of report.json gets: the numbers after a JSON round trip.
    doc = msgspec.json.decode(msgspec.json.encode(report))
    return doc, Elements(render_html(report, results))


def test_the_pass_rate_chart_holds_report_json_numbers(page: tuple[Any, Elements]) -> None:
    doc, html = page
    marks = html.select("chart-pass-rates", "g", "data-rate")
    assert len(marks) == len(doc["condition_summaries"]) == 8
    for mark, summary in zip(marks, doc["condition_summaries"], strict=True):
        attrs = mark["attrs"]
        assert (attrs["data-lane"], attrs["data-condition"]) == (summary["lane"], summary["condition"])
        assert _exact(attrs["data-rate"], summary["mean_case_pass_rate"])
        interval = summary["case_pass_interval"]
        assert _exact(attrs["data-low"], interval["low"])
        assert _exact(attrs["data-high"], interval["high"])
        shown = f"{summary['mean_case_pass_rate']:.1%} [{interval['low']:.1%}, {interval['high']:.1%}]"
        assert shown in mark["text"]


def test_the_forest_plot_holds_every_comparison_and_its_verdict(page: tuple[Any, Elements]) -> None:
    doc, html = page
    marks = html.select("chart-forest", "g", "data-diff")
    comparisons = doc["condition_comparisons"]
    assert len(marks) == len(comparisons) == 6
    for mark, c in zip(marks, comparisons, strict=True):
        attrs, comp = mark["attrs"], c["comparison"]
        assert _exact(attrs["data-diff"], comp["mean_diff"])
        assert _exact(attrs["data-low"], comp["interval"]["low"])
        assert _exact(attrs["data-high"], comp["interval"]["high"])
        assert attrs["data-verdict"] == comp["verdict"]
        assert attrs["data-pairs"] == str(comp["n_pairs"])
        assert f"{comp['mean_diff'] * 100:+.1f} pp" in mark["text"]
    verdicts = {c["comparison"]["verdict"] for c in comparisons}
    assert "improved" in verdicts  # the seeded rates make the oracle lift conclusive


def test_the_tables_hold_report_json_numbers(page: tuple[Any, Elements]) -> None:
    doc, html = page
    rows = html.select("case-table", "tr", "data-case")
    assert len(rows) == len(doc["cases"])
    cells = html.select("case-table", "td", "data-value")
    assert len(cells) == 2 * len(doc["cases"])  # pass rate and mean score per row
    for index, case in enumerate(doc["cases"]):
        rate, score = cells[2 * index], cells[2 * index + 1]
        assert _exact(rate["attrs"]["data-value"], case["pass_rate"])
        assert rate["text"] == f"{case['pass_rate']:.1%}"
        assert _exact(score["attrs"]["data-value"], case["mean_score"])
    bounds = html.select("case-table", "td", "data-low")
    for cell, case in zip(bounds, doc["cases"], strict=True):
        assert _exact(cell["attrs"]["data-low"], case["pass_interval"]["low"])
        assert _exact(cell["attrs"]["data-high"], case["pass_interval"]["high"])
    summary_cells = html.select("condition-table", "td", "data-value")
    expected = [
        v
        for s in doc["condition_summaries"]
        for v in (s["pass_rate"], s["mean_case_pass_rate"], s["mean_score"])
    ]
    assert [c["attrs"]["data-value"] for c in summary_cells] == [repr(v) for v in expected]
    diffs = html.select("comparison-table", "td", "data-value")
    expected = [
        v
        for c in doc["condition_comparisons"]
        for v in (c["comparison"]["mean_diff"], c["comparison"]["p_value"])
    ]
    assert [c["attrs"]["data-value"] for c in diffs] == [repr(v) for v in expected]
    (counts,) = html.select("summary", "div", "data-total")
    assert {k: int(counts["attrs"][f"data-{k}"]) for k in ("total", "passed", "failed", "errored")} == doc[
        "counts"
    ]


def test_token_figures_are_report_json_ones(page: tuple[Any, Elements]) -> None:
    doc, html = page
    conditions = doc["tokens"]["conditions"]
    marks = html.select("chart-tokens", "g", "data-median")
    assert len(marks) == len(conditions) == 8
    by_key = {(c["lane"], c["condition"]): c for c in conditions}
    for mark in marks:
        figure = by_key[(mark["attrs"]["data-lane"], mark["attrs"]["data-condition"])]["total"]
        for name in ("median", "low", "high", "iqr"):
            assert _exact(mark["attrs"][f"data-{name}"], figure[name])
    (totals,) = html.select("tokens", "p", "data-total")
    assert _exact(totals["attrs"]["data-total"], doc["tokens"]["totals"]["total"])


def test_errors_not_the_agents_are_shown_apart(page: tuple[Any, Elements]) -> None:
    _, html = page
    apart = " ".join(e["text"] for e in html.select("errors-not-agents", "td"))
    theirs = " ".join(e["text"] for e in html.select("errors-agents", "td"))
    assert "environment-error" in apart and "timeout" not in apart
    assert "timeout" in theirs and "environment-error" not in theirs


def test_stale_harm_reads_in_its_own_words() -> None:
    # none passes, stale fails, over ten cases: the stale guidance hurts.
    results = [
        _trial("prompt", f"c{i}", condition, 1, condition == "none")
        for i in range(10)
        for condition in ("none", "stale")
    ]
    html = Elements(render_html(build_report(_start(), results), results))
    (verdict,) = [
        e for e in html.select("comparison-table", "td") if "verdict" in e["attrs"].get("class", "")
    ]
    assert verdict["text"] == "stale hurts"


def test_what_the_agent_wrote_is_escaped() -> None:
    hostile = _trial("prompt", "c1", "none", 1, False, error="provider-unavailable")
    hostile = msgspec.structs.replace(hostile, error_message="<script>alert(1)</script>")
    text = render_html(build_report(_start(), [hostile]), [hostile], {hostile.id.key: "x.html"})
    assert "<script>alert(1)" not in text
    assert "&lt;script&gt;alert(1)" in text


def test_json_in_a_script_element_cannot_end_it() -> None:
    text = str(json_script([{"text": "</script><b>&"}]))
    assert "</script>" not in text and "<" not in text and "&" not in text
    assert msgspec.json.decode(text) == [{"text": "</script><b>&"}]


def test_the_page_loads_nothing() -> None:
    results = _results(3)
    text = render_html(build_report(_start(), results), results)
    for marker in ("http://", "https://", "src=", "<link"):
        assert marker not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_the_baseline_table_holds_report_json_deltas() -> None:
    before = _results(11)
    now = _results(12)
    report = build_report(_start(), now)
    report = msgspec.structs.replace(
        report, baseline=compare_to_baseline(report, build_report(_start(), before))
    )
    doc = msgspec.json.decode(msgspec.json.encode(report))
    html = Elements(render_html(report, now))
    cells = html.select("baseline-table", "td", "data-value")
    assert len(cells) == len(doc["baseline"]["rows"]) > 0
    for cell, row in zip(cells, doc["baseline"]["rows"], strict=True):
        assert _exact(cell["attrs"]["data-value"], row["delta"])


def test_a_run_without_grades_or_tokens_still_renders() -> None:
    errored = [
        _trial("prompt", "c1", "none", 1, False, error="provider-unavailable"),
        _trial("prompt", "c1", "self-load", 1, False, error="timeout"),
    ]
    for results in ([], errored):
        text = render_html(build_report(_start(), results), results)
        assert "No trial reported token usage." in text
        assert 'id="case-table"' in text and 'id="chart-pass-rates"' in text
    html = Elements(render_html(build_report(_start(), errored), errored))
    (no_rate,) = html.select("chart-pass-rates", "g", "data-rate")[:1]
    assert "no usable trials" in no_rate["text"]  # only an error not the agent's: nothing to estimate
