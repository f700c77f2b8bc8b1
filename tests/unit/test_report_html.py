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


# The run-design sections: gates, budget, dollars, did it fire, adaptive trials, A/A, the judge.


def _design_start() -> RunStart:
    conditions = ("none", "self-load", "preloaded", "none~aa")
    policy = {"auto": True, "min_trials": 2, "max_trials": 6}
    return msgspec.structs.replace(
        _start(),
        lanes=("execution",),
        conditions=conditions,
        trials=6,
        settings={"auto": {f"case-{i}": policy for i in range(6)}, "decision_threshold": 0.5},
        notes=(
            "judged checks are graded by stub:word-match",
            "warning: judge stub:word-match has no stored calibration for prompt v1; the suite asks for "
            "kappa >= 0.5",
            "replay plays recorded answers",
        ),
    )


def _design_results() -> list[TrialResult]:
    """Six cases x four conditions x four trials; self-load loads the skill in the even cases only."""
    from skillgym.cost.prices import Cost
    from skillgym.results import CheckOutcome

    rng = random.Random(5)
    odds = {"none": 0.2, "self-load": 0.6, "preloaded": 0.9, "none~aa": 0.2}
    out = []
    for case in range(6):
        for condition in odds:
            for n in (1, 2, 3, 4):
                passed = rng.random() < odds[condition]
                loaded = condition == "self-load" and case % 2 == 0
                judged = CheckOutcome(
                    id="judge-1",
                    kind="judge",
                    required=True,
                    passed=passed,
                    message="every word of the expectation occurs" if passed else "missing: hello",
                    expectation="the greeting is hello",
                    evidence="hello from the skill" if passed else "",
                )
                grade = Grade(
                    passed=passed,
                    score=0.9 if passed else 0.3,
                    skill_loaded=loaded if condition == "self-load" else None,
                    checks=(judged,),
                )
                key = f"execution/case-{case}/{condition}/stub/trial-{n}"
                cost = (
                    None if case == 5 else Cost(usd=0.01 + case / 1000, source="cli" if n % 2 else "prices")
                )
                out.append(
                    _trial(
                        "execution",
                        f"case-{case}",
                        condition,
                        n,
                        passed,
                        grade=grade,
                        cost=cost,
                        usage=TokenUsage(input=1000, output=100, total=1100),
                        judge_usage=TokenUsage(input=300, output=20, total=320),
                        paths=TrialPaths(dir=key, result=f"{key}/result.json", judge=f"{key}/judge.json"),
                    )
                )
    return out


@pytest.fixture(scope="module")
def design() -> tuple[Any, Elements, Any]:
    from skillgym.cost.model import BudgetStop, RunBudget, ShortCell
    from skillgym.gates.model import GatePart, GateResult
    from skillgym.judge.pairwise import CasePairwise, ConditionPairwise, PairwiseReport
    from skillgym.judge.report import with_pairwise
    from skillgym.reporters.final import report_from
    from skillgym.stats import Interval

    results = _design_results()
    report = report_from(_design_start(), results, None, None)
    pairwise = PairwiseReport(
        judge="stub:word-match",
        seed=0,
        conditions=(
            ConditionPairwise(
                condition="self-load",
                cases=6,
                mean_diff=0.5,
                interval=Interval(low=0.1, high=0.9),
                case_wins=4,
                case_ties=1,
                case_losses=1,
                p_value=0.375,
                verdict="inconclusive",
                pairs=24,
                swap_disagreements=3,
                position_bias=0.125,
            ),
        ),
        cases=(
            CasePairwise(
                case_id="case-0",
                lane="execution",
                condition="self-load",
                wins=3,
                ties=1,
                losses=0,
                undecided=0,
                swap_disagreements=1,
            ),
        ),
    )
    gates = (
        GateResult(
            expression="lift(self-load, none) > 0",
            origin="--gate",
            status="inconclusive",
            detail="execution/stub: lift +40 pts [-5, +80] pts over 6 case(s)",
            parts=(
                GatePart(
                    lane="execution",
                    provider="stub",
                    status="inconclusive",
                    value=0.4,
                    interval=Interval(low=-0.05, high=0.8),
                    errors=1,
                ),
            ),
            errors=1,
        ),
        GateResult(
            expression="pass_rate(prompt, none) >= 0.5",
            origin="suite.py:4",
            status="skipped",
            detail="no prompt lane",
        ),
    )
    budget = BudgetStop(
        budget=RunBudget(usd=0.5),
        spent_usd=0.4801,
        spent_tokens=105_600,
        reason="the next trial could spend $0.0150 and only $0.0199 is left",
        short=(
            ShortCell(
                lane="execution", case_id="case-5", condition="none", provider="stub", planned=6, finished=4
            ),
        ),
    )
    report = msgspec.structs.replace(
        report, gates=gates, budget=budget, judge=with_pairwise(report.judge, pairwise)
    )
    doc = msgspec.json.decode(msgspec.json.encode(report))
    return doc, Elements(render_html(report, results)), report


def test_gates_and_the_budget_stop_show_report_json_figures(design: tuple[Any, Elements, Any]) -> None:
    doc, html, _ = design
    rows = html.select("gate-table", "tr", "data-status")
    assert [r["attrs"]["data-expression"] for r in rows] == [g["expression"] for g in doc["gates"]]
    lift, skipped = rows
    part = doc["gates"][0]["parts"][0]
    assert lift["attrs"]["data-status"] == "inconclusive" and lift["attrs"]["data-errors"] == "1"
    assert _exact(lift["attrs"]["data-value"], part["value"])
    assert _exact(lift["attrs"]["data-low"], part["interval"]["low"])
    assert _exact(lift["attrs"]["data-high"], part["interval"]["high"])
    assert "+40.0 pp" in lift["text"] and "[-5.0 pp, +80.0 pp]" in lift["text"]
    assert "inconclusive (errors not the agent's)" in lift["text"]
    assert skipped["attrs"]["data-status"] == "skipped" and "no prompt lane" in skipped["text"]
    (budget,) = html.select("summary", "div", "data-spent-usd")
    assert _exact(budget["attrs"]["data-spent-usd"], doc["budget"]["spent_usd"])
    assert budget["attrs"]["data-spent-tokens"] == str(doc["budget"]["spent_tokens"])
    words = " ".join(budget["text"].split())
    assert "The budget ($0.5000) ended this run: the next trial could spend $0.0150" in words
    assert "Spent: $0.4801, 105,600 tokens." in words
    (short,) = html.select("budget-short", "tr", "data-finished")
    assert (short["attrs"]["data-finished"], short["attrs"]["data-planned"]) == ("4", "6")


def test_dollars_sit_beside_the_token_cost(design: tuple[Any, Elements, Any]) -> None:
    doc, html, _ = design
    (totals,) = html.select("tokens", "p", "data-usd")
    cost = doc["cost"]
    assert _exact(totals["attrs"]["data-usd"], cost["totals"]["usd"])
    assert totals["attrs"]["data-unpriced"] == str(cost["totals"]["unpriced"]) == "16"
    assert "16 trial(s) of unknown cost are not counted" in totals["text"]
    rows = html.select("cost-table", "tr", "data-usd")
    assert len(rows) == len(cost["conditions"]) == 4
    for row, c in zip(rows, cost["conditions"], strict=True):
        assert (row["attrs"]["data-lane"], row["attrs"]["data-condition"]) == (c["lane"], c["condition"])
        assert _exact(row["attrs"]["data-usd"], c["totals"]["usd"])
        assert row["attrs"]["data-unpriced"] == str(c["totals"]["unpriced"])


def test_did_it_fire_shows_the_activation_figures_and_the_caveat(design: tuple[Any, Elements, Any]) -> None:
    doc, html, _ = design
    (a,) = doc["activation"]
    (mark,) = html.select("chart-activation", "g", "data-rate")
    (row,) = html.select("activation-table", "tr", "data-rate")
    for element in (mark, row):
        assert _exact(element["attrs"]["data-rate"], a["activation_rate"])
        assert _exact(element["attrs"]["data-low"], a["activation_interval"]["low"])
        assert _exact(element["attrs"]["data-high"], a["activation_interval"]["high"])
    assert _exact(row["attrs"]["data-pass-loaded"], a["pass_rate_when_activated"])
    assert _exact(row["attrs"]["data-pass-not-loaded"], a["pass_rate_when_not_activated"])
    assert f"{a['activated']}/{a['trials']} = 50.0%" in row["text"]
    split = {r["attrs"]["data-kind"]: r for r in html.select("activation-split", "tr", "data-kind")}
    for kind, field in (("gap", "activation_gap"), ("help", "help_when_loaded")):
        c = a[field]
        assert _exact(split[kind]["attrs"]["data-diff"], c["mean_diff"])
        assert _exact(split[kind]["attrs"]["data-low"], c["interval"]["low"])
        assert split[kind]["attrs"]["data-verdict"] == c["verdict"]
    assert _exact(split["split"]["attrs"]["data-gap"], a["gap"])
    assert len(html.select("chart-activation-split", "g", "data-diff")) == 2
    (caveat,) = html.select("activation", "p", "id")[-1:]
    assert "observational" in caveat["text"] and "not the skill's effect" in caveat["text"]


def test_adaptive_cells_say_why_they_stopped_and_aa_its_false_positive_rate(
    design: tuple[Any, Elements, Any],
) -> None:
    doc, html, _ = design
    adaptive = doc["adaptive"]
    (totals,) = html.select("adaptive", "p", "data-trials-run")
    assert totals["attrs"]["data-trials-run"] == str(adaptive["trials_run"])
    assert totals["attrs"]["data-planned-most"] == str(adaptive["planned_most"])
    section = " ".join(e["text"] for e in html.select("adaptive", "p"))
    assert "confidence sequences" in section and "anytime-valid" in section
    cells = html.select("adaptive-cells", "tr", "data-trials")
    assert len(cells) == len(adaptive["cells"]) == 24
    for cell, stop in zip(cells, adaptive["cells"], strict=True):
        assert cell["attrs"]["data-trials"] == str(stop["trials"]) and stop["reason"] in cell["text"]
    questions = html.select("adaptive-questions", "tr", "data-status")
    for row, q in zip(questions, adaptive["questions"], strict=True):
        assert row["attrs"]["data-status"] == q["status"]
        assert _exact(row["attrs"]["data-estimate"], q["estimate"])
        assert _exact(row["attrs"]["data-low"], q["interval"] and q["interval"]["low"])
    (aa,) = html.select("aa-table", "tr", "data-rate")
    (calibration,) = doc["aa"]
    assert _exact(aa["attrs"]["data-rate"], calibration["false_positive_rate"])
    assert _exact(aa["attrs"]["data-low"], calibration["interval"]["low"])
    assert _exact(aa["attrs"]["data-high"], calibration["interval"]["high"])
    # The case table says its intervals are confidence sequences, not Wilson intervals.
    (header,) = [e for e in html.select("case-table", "th") if "95%" in e["text"]]
    assert "confidence sequence" in header["attrs"]["title"]
    (note,) = html.select("cases", "p", "id")
    assert note["attrs"]["id"] == "case-intervals-note" and "confidence sequence" in note["text"]


def test_the_judge_keeps_its_tokens_apart_and_shows_pairwise(design: tuple[Any, Elements, Any]) -> None:
    doc, html, _ = design
    judge = doc["judge"]
    (usage,) = html.select("judge", "p", "data-total")
    assert (
        _exact(usage["attrs"]["data-total"], judge["usage"]["total"]) and judge["usage"]["total"] == 96 * 320
    )
    # The agent's token totals leave the judge's out.
    (tokens,) = html.select("tokens", "p", "data-trials")
    assert tokens["attrs"]["data-total"] == repr(96 * 1100)
    # The run's notes about its judge are kept with it; the others (a provider's) are not.
    assert judge["notes"] == list(_design_start().notes[:2])
    notes = [e["text"] for e in html.select("judge-notes", "li")]
    assert notes == judge["notes"]
    (condition,) = html.select("pairwise-conditions", "tr", "data-diff")
    expected = judge["pairwise"]["conditions"][0]
    assert _exact(condition["attrs"]["data-diff"], expected["mean_diff"])
    assert _exact(condition["attrs"]["data-position-bias"], expected["position_bias"])
    assert "3 (12.5%)" in condition["text"]
    (case,) = html.select("pairwise-cases", "tr", "data-wins")
    assert (case["attrs"]["data-wins"], case["attrs"]["data-ties"], case["attrs"]["data-losses"]) == (
        "3",
        "1",
        "0",
    )


def test_a_run_without_the_design_sections_shows_none_of_them(page: tuple[Any, Elements]) -> None:
    doc, html = page
    ids = {e["attrs"].get("id") for e in html.found}
    assert not ids & {"gates", "budget", "adaptive", "judge", "aa-table", "chart-activation"}
    assert "activation" in ids  # the run has self-load, and says the skill's firing is unknown
    # Usage without a price: every trial's cost unknown, none of it counted as zero.
    (totals,) = html.select("tokens", "p", "data-usd")
    assert totals["attrs"]["data-usd"] == "" and doc["cost"]["totals"]["usd"] is None
    assert (
        totals["attrs"]["data-unpriced"]
        == str(doc["cost"]["totals"]["unpriced"])
        == str(doc["counts"]["total"])
    )


def test_a_chart_label_is_shown_whole_and_never_under_the_plot() -> None:
    from skillgym.report.charts import MAX_LABEL_WIDTH, Row, chart
    from skillgym.report.templating import environment
    from skillgym.stats import Interval

    labels = (
        "execution · realized lift (self-load vs none)",
        "execution · realized lift (self-load vs none) · claude-code",
        "prompt · none",
    )
    rows = [Row(label=label, value=0.5, interval=Interval(low=0.0, high=1.0), text="") for label in labels]
    drawn = chart("c", "t", rows, low=0.0, high=1.0, ticks=(0.0, 1.0))
    svg = environment().from_string('{% from "_chart.html.j2" import svg_chart %}{{ svg_chart(c) }}')
    rendered = svg.render(c=drawn)
    texts = [e["text"] for e in Elements(rendered).select("chart-c", "text")]
    assert "…" not in rendered  # no label cut
    for label in labels:
        assert any(text.startswith(label) for text in texts)
    # The widest label fits in front of the plot: every tick, point and whisker starts right of it.
    widest = max(len(label) for label in labels) * 6.6
    assert all(m.low_x is not None and m.low_x >= widest for m in drawn.marks)
    assert all(t.x >= widest for t in drawn.ticks)
    huge = chart("h", "t", [Row(label="x" * 200, value=0.5, interval=None, text="")], low=0, high=1, ticks=())
    assert huge.plot_left == MAX_LABEL_WIDTH + 10 and huge.label_chars < 200


def test_a_pass_rate_over_no_trial_says_so(design: tuple[Any, Elements, Any]) -> None:
    _, _, report = design
    (a,) = report.activation
    every = msgspec.structs.replace(
        a,
        activated=a.trials,
        not_activated=0,
        passed_when_not_activated=0,
        pass_rate_when_not_activated=None,
        pass_interval_when_not_activated=None,
    )
    html = Elements(render_html(msgspec.structs.replace(report, activation=(every,)), []))
    (row,) = html.select("activation-table", "tr", "data-rate")
    cells = [e["text"] for e in html.found if e["tag"] == "td" and "activation-table" in e["within"]]
    assert cells[-1] == "no such trial"  # not a rate and an interval of nothing
    assert cells[-2].startswith(f"{a.passed_when_activated}/{a.trials} = ")
    assert "0/0" not in row["text"]


def test_the_snapshot_table_holds_report_json_changes() -> None:
    from skillgym.snapshots.model import EntryCheck, SnapshotCheck

    results = _results(5)
    rows = tuple(
        EntryCheck(
            file="snapshots/stub/none.toml",
            provider="stub",
            model="none",
            lane="prompt",
            case_id=case,
            condition="none",
            status=status,
            threshold_percent=10.0,
            trials=3,
            snapshot_trials=3,
            current_total=current,
            snapshot_total=1000.0,
            change_percent=(current - 1000.0) / 10.0,
        )
        for case, status, current in (("c1", "regressed", 1235.0), ("c2", "improved", 876.0))
    )
    check = SnapshotCheck(
        directory="snapshots", threshold_percent=10.0, rows=rows, counts={"regressed": 1, "improved": 1}
    )
    report = msgspec.structs.replace(build_report(_start(), results), snapshots=check)
    doc = msgspec.json.decode(msgspec.json.encode(report))
    html = Elements(render_html(report, results))
    cells = html.select("snapshot-table", "td", "data-value")
    assert len(cells) == len(doc["snapshots"]["rows"]) == 2
    for cell, row in zip(cells, doc["snapshots"]["rows"], strict=True):
        assert _exact(cell["attrs"]["data-value"], row["change_percent"])
    text = " ".join(e["text"] for e in html.select("snapshot-table", "tr"))
    assert "+23.5%" in text and "-12.4%" in text and "1,235" in text and "regressed" in text
