"""report.html in a real browser: opened from disk, offline, its charts, filters, sorting and trial pages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import Watch, same, save_screenshot
from tests.conftest import REPO, run_cli

CASES = (
    "hello-prompt",
    "export-proof",
    "crash-recovery",
    "wait-for-output",
    "screen-bait",
    "session-creation",
    "resize-regression",
)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A replayed run of part of the example suite: every lane and condition, tool calls, a proof bundle."""
    where = tmp_path_factory.mktemp("browser-run")
    args = ["run", "--suite", str(REPO / "evals"), "--output", str(where / "runs")]
    args += ["--lane", "prompt", "--lane", "execution", "--lane", "dogfood"]
    for case in CASES:
        args += ["--case", case]
    done = run_cli(*args, cwd=where, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    (found,) = [d for d in (where / "runs").iterdir() if not d.is_symlink()]
    return found


def _report(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "report.json").read_text())
    return data


def test_the_charts_show_report_json_numbers(page: tuple[Any, Watch], run_dir: Path, tmp_path: Path) -> None:
    p, _ = page
    report = _report(run_dir)
    p.goto((run_dir / "report.html").as_uri())
    marks = p.locator("#chart-pass-rates g.mark")
    assert marks.count() == len(report["condition_summaries"]) > 0
    for index, summary in enumerate(report["condition_summaries"]):
        mark = marks.nth(index)
        assert mark.get_attribute("data-lane") == summary["lane"]
        assert mark.get_attribute("data-condition") == summary["condition"]
        assert same(mark.get_attribute("data-rate"), summary["mean_case_pass_rate"])
        interval = summary["case_pass_interval"]
        assert same(mark.get_attribute("data-low"), interval and interval["low"])
        assert same(mark.get_attribute("data-high"), interval and interval["high"])
        assert mark.locator("circle.point").count() == (summary["mean_case_pass_rate"] is not None)
        assert mark.locator("line.whisker").count() == (interval is not None)
        assert mark.locator("circle.point").is_visible()
    comparisons = [*report["condition_comparisons"], *report["provider_comparisons"]]
    forest = p.locator("#chart-forest g.mark")
    assert forest.count() == len(comparisons) > 0
    for index, c in enumerate(comparisons):
        mark = forest.nth(index)
        assert same(mark.get_attribute("data-diff"), c["comparison"]["mean_diff"])
        assert mark.get_attribute("data-verdict") == c["comparison"]["verdict"]
        interval = c["comparison"]["interval"]
        assert same(mark.get_attribute("data-low"), interval and interval["low"])
    assert p.locator("#chart-forest line.zero").count() == 1
    tokens = p.locator("#chart-tokens g.mark")
    assert tokens.count() == len(report["tokens"]["conditions"])
    save_screenshot(p, tmp_path, "report-summary.png")  # the first screen, as a laptop shows it
    save_screenshot(p, tmp_path, "report-page.png", full_page=True)


def test_the_case_table_filters_and_sorts(page: tuple[Any, Watch], run_dir: Path) -> None:
    p, _ = page
    report = _report(run_dir)
    p.goto((run_dir / "report.html").as_uri())
    rows = p.locator("#case-table tbody tr")
    visible = p.locator("#case-table tbody tr:not([hidden])")
    assert rows.count() == len(report["cases"])
    p.select_option("#filter-lane", "execution")
    execution = [c for c in report["cases"] if c["lane"] == "execution"]
    assert visible.count() == len(execution)
    assert set(visible.evaluate_all("rows => rows.map(r => r.dataset.lane)")) == {"execution"}
    p.select_option("#filter-condition", "stale")
    assert visible.count() == sum(c["condition"] == "stale" for c in execution)
    p.select_option("#filter-condition", "")
    p.fill("#filter-text", "hello")
    assert visible.evaluate_all("rows => rows.map(r => r.dataset.case)") == ["hello-prompt"] * 4
    assert p.locator("#case-count").text_content() == f"4 of {len(report['cases'])} rows"
    p.fill("#filter-text", "")
    p.select_option("#filter-lane", "")
    p.select_option("#filter-status", "failed")
    failing = [c for c in report["cases"] if c["failed"]]
    assert visible.count() == len(failing)
    p.select_option("#filter-status", "")

    header = p.locator("#case-table thead th", has_text="pass rate")
    header.locator("button").click()
    rates = [
        float(v)
        for v in p.locator("#case-table tbody tr td[data-sort]:nth-child(10)").evaluate_all(
            "cells => cells.map(c => c.dataset.sort)"
        )
    ]
    assert rates == sorted(rates) and len(set(rates)) > 1
    assert header.get_attribute("aria-sort") == "ascending"
    header.locator("button").click()
    rates = [
        float(v)
        for v in p.locator("#case-table tbody tr td[data-sort]:nth-child(10)").evaluate_all(
            "cells => cells.map(c => c.dataset.sort)"
        )
    ]
    assert rates == sorted(rates, reverse=True)
    p.locator("#case-table thead th", has_text="case").first.locator("button").click()
    cases = p.locator("#case-table tbody tr").evaluate_all("rows => rows.map(r => r.dataset.case)")
    assert cases == sorted(cases)


def test_a_trial_page_opens_with_its_tool_calls(
    page: tuple[Any, Watch], run_dir: Path, tmp_path: Path
) -> None:
    p, _ = page
    p.goto((run_dir / "report.html").as_uri())
    row = p.locator("#case-table tbody tr[data-case='hello-prompt'][data-condition='preloaded']")
    row.locator("a.trial").first.click()
    p.wait_for_selector("#trial")
    key = "execution/hello-prompt/preloaded/replay/trial-1"
    assert p.locator("#trial").get_attribute("data-key") == key
    trace = json.loads((run_dir / "trials" / key / "trace.json").read_text())
    calls = p.locator("#conversation .call")
    assert calls.count() == len(trace["tool_calls"]) > 0
    for index, call in enumerate(trace["tool_calls"]):
        shown = calls.nth(index)
        if call["command"] is not None:
            assert call["command"].splitlines()[0] in shown.inner_text()
        exit_code = call["exit_code"]
        assert shown.get_attribute("data-exit") == ("" if exit_code is None else str(exit_code))
    result = json.loads((run_dir / "trials" / key / "result.json").read_text())
    checks = p.locator("#check-table tbody tr")
    assert checks.count() == len(result["grade"]["checks"])
    assert p.locator("#trial-folder").text_content() == str((run_dir / "trials" / key).resolve())
    # The fixture's own log, which a verifier read, is linked from the page.
    assert p.locator("#verifier-reads a", has_text="fixture-logs/hello-prompt.jsonl").count() == 1
    assert "tmux" in p.locator("#skills").inner_text()
    save_screenshot(p, tmp_path, "trial-view.png", full_page=True)
    p.locator("header.top a", has_text="report").click()
    p.wait_for_selector("#case-table")


def test_a_trial_page_shows_messages_and_tool_calls_in_the_order_they_happened(
    page: tuple[Any, Watch], run_dir: Path, tmp_path: Path
) -> None:
    p, _ = page
    key = "execution/hello-prompt/self-load/replay/trial-1"
    p.goto((run_dir / "trials" / key / "trial.html").as_uri())
    trace = json.loads((run_dir / "trials" / key / "trace.json").read_text())
    expected: list[str] = []
    for number, call in enumerate(trace["tool_calls"], start=1):
        while expected.count("message") < call["after_messages"]:
            expected.append("message")
        expected.append(f"call-{number}")
    expected += ["message"] * (len(trace["messages"]) - expected.count("message"))
    shown = p.locator("#conversation > .msg, #conversation > .call").evaluate_all(
        "nodes => nodes.map(n => n.classList.contains('msg') ? 'message' : n.id)"
    )
    assert shown == expected
    # The skill is loaded between the first two messages, not after all three.
    assert shown[:3] == ["message", "call-1", "message"]
    texts = p.locator("#conversation > .msg").all_inner_texts()
    assert all(m["text"].splitlines()[0] in t for m, t in zip(trace["messages"], texts, strict=True))
    assert p.locator("#order-unknown").count() == 0
    save_screenshot(p, tmp_path, "trial-conversation.png", full_page=True)
    # A call's anchor (what a finding links to) still lands on that call, wherever it stands.
    p.goto((run_dir / "trials" / key / "trial.html").as_uri() + "#call-2")
    assert p.locator("#call-2").evaluate("n => n.matches(':target')")
    assert trace["tool_calls"][1]["command"].split()[0] in p.locator("#call-2").inner_text()


def test_findings_link_to_the_tool_call_that_fired_them_among_the_messages(
    page: tuple[Any, Watch], run_dir: Path
) -> None:
    p, _ = page
    key = "execution/hello-prompt/stale/replay/trial-1"  # stale guidance: screen, sleep, a user tmux
    p.goto((run_dir / "trials" / key / "trial.html").as_uri())
    result = json.loads((run_dir / "trials" / key / "result.json").read_text())
    trace = json.loads((run_dir / "trials" / key / "trace.json").read_text())
    assert len(trace["messages"]) > 1 and len({c["after_messages"] for c in trace["tool_calls"]}) > 1
    links = p.locator("#finding-table tbody tr td a[href^='#call-']")
    assert links.count() == len(result["grade"]["findings"]) > 0
    for index, finding in enumerate(result["grade"]["findings"]):
        link = links.nth(index)
        link.click()
        target = p.locator(link.get_attribute("href") or "")
        assert target.evaluate("n => n.matches(':target') && n.parentElement.id === 'conversation'")
        assert finding["matched_text"] in target.locator("pre").first.inner_text()


def test_the_summary_and_tables_read_without_javascript(browser: Any, run_dir: Path) -> None:
    context = browser.new_context(java_script_enabled=False)
    p = context.new_page()
    p.goto((run_dir / "report.html").as_uri())
    report = _report(run_dir)
    assert p.locator("#chart-pass-rates g.mark circle.point").count() == len(report["condition_summaries"])
    assert p.locator("#case-table tbody tr:visible").count() == len(report["cases"])
    assert p.locator("#case-filters").is_hidden()  # the filters need the script, so they hide without it
    context.close()


def _large_report(where: Path, cases: int) -> Path:
    """report.html of a run with ``cases`` case rows (one trial each), written without trial pages."""
    from skillgym.events import RunStart
    from skillgym.report import build_report
    from skillgym.report.html import render_html
    from tests.results import result_for

    results = [
        result_for(f"prompt/case-{n:04d}/none/stub/trial-1", "passed" if n % 3 else "failed")
        for n in range(cases)
    ]
    start = RunStart(
        run_id="large",
        at=0.0,
        argv=(),
        suite="evals",
        suite_dir=str(where),
        run_dir=str(where),
        lanes=("prompt",),
        conditions=("none",),
        providers=("stub",),
        model=None,
        trials=1,
        concurrency=1,
        total_trials=cases,
        skill_hash="h" * 64,
    )
    page = where / "report.html"
    page.write_text(render_html(build_report(start, results), results), encoding="utf-8")
    return page


def test_a_large_case_table_is_paged(page: tuple[Any, Watch], tmp_path: Path, browser: Any) -> None:
    p, _ = page
    report = _large_report(tmp_path, 250)
    p.goto(report.as_uri())
    visible = p.locator("#case-table tbody tr:visible")
    assert visible.count() == 100
    assert p.locator("#case-count").text_content() == "250 of 250 rows; page 1 of 3"
    assert p.locator("#page-prev").is_disabled()
    p.click("#page-next")
    p.click("#page-next")
    assert visible.count() == 50
    assert visible.first.get_attribute("data-case") == "case-0200"
    assert p.locator("#page-next").is_disabled()
    p.select_option("#filter-status", "failed")  # a filter starts again at its first page
    assert visible.count() == 84
    assert p.locator("#case-count").text_content() == "84 of 250 rows"
    p.select_option("#filter-status", "")
    p.select_option("#page-size", "0")
    assert visible.count() == 250
    # Without the script every row shows: nothing is hidden that a reader could not reach.
    context = browser.new_context(java_script_enabled=False)
    plain = context.new_page()
    plain.goto(report.as_uri())
    assert plain.locator("#case-table tbody tr:visible").count() == 250
    context.close()


def test_a_dogfood_trial_shows_its_screenshots(
    page: tuple[Any, Watch], run_dir: Path, tmp_path: Path
) -> None:
    p, _ = page
    bundles = [
        r
        for r in (json.loads(f.read_text()) for f in run_dir.glob("trials/dogfood/*/*/*/*/result.json"))
        if r["paths"]["bundle"] and list((run_dir / r["paths"]["bundle"]).rglob("*.svg"))
    ]
    assert bundles, "the replayed dogfood trials left no screenshot"
    p.goto((run_dir / bundles[0]["paths"]["dir"] / "trial.html").as_uri())
    images = p.locator("#bundle figure[data-kind=image] img")
    assert images.count() == len(list((run_dir / bundles[0]["paths"]["bundle"]).rglob("*.svg")))
    images.first.scroll_into_view_if_needed()
    p.wait_for_function("() => [...document.querySelectorAll('#bundle img')].every(i => i.complete)")
    widths = images.evaluate_all("imgs => imgs.map(i => i.naturalWidth)")
    assert all(width > 0 for width in widths), widths  # each screenshot really loaded from disk
    p.evaluate("() => window.scrollTo(0, 0)")
    save_screenshot(p, tmp_path, "trial-bundle.png", full_page=True)
