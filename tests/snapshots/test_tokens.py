"""The token section: totals, per lane, per case x condition x provider x model medians and spread."""

from __future__ import annotations

import msgspec

from skillgym.identity import trial_id
from skillgym.report.tokens import build_token_report, token_rows
from skillgym.results import TrialPaths, TrialResult
from skillgym.trace import TokenUsage


def result(
    case: str,
    trial: int,
    usage: TokenUsage | None,
    *,
    lane: str = "prompt",
    model: str | None = None,
) -> TrialResult:
    return TrialResult(
        id=trial_id(
            lane=lane,  # type: ignore[arg-type]
            case_id=case,
            condition="none",
            provider="command",
            trial=trial,
            fingerprint="f" * 64,
        ),
        category="c",
        model=model,
        status="passed",
        usage=usage,
        started_at=0,
        finished_at=1,
        duration_s=1,
        paths=TrialPaths(dir="d", result="d/result.json"),
    )


def usage(total: int, *, cache_read: int | None = None, reasoning: int | None = None) -> TokenUsage:
    return TokenUsage(input=total - 10, output=10, cache_read=cache_read, reasoning=reasoning, total=total)


def test_no_usage_means_no_section() -> None:
    assert build_token_report([result("a", 1, None), result("a", 2, TokenUsage())]) is None
    assert build_token_report([]) is None


def test_totals_lanes_rows_medians_and_spread() -> None:
    results = [
        result("a", 1, usage(100, cache_read=5)),
        result("a", 2, usage(300)),
        result("a", 3, usage(200, reasoning=4)),
        result("a", 4, None),
        result("b", 1, usage(50), lane="execution"),
        result("a", 1, usage(70), model="m2"),
    ]
    report = build_token_report(results)
    assert report is not None
    t = report.totals
    assert (t.trials, t.missing, t.total, t.cache_read, t.cache_write, t.reasoning) == (5, 1, 720, 5, None, 4)
    assert [(lane.lane, lane.totals.total) for lane in report.lanes] == [("prompt", 670), ("execution", 50)]
    keys = [(r.lane, r.case_id, r.model) for r in report.rows]
    assert keys == [("prompt", "a", "default"), ("prompt", "a", "m2"), ("execution", "b", "default")]
    a = report.rows[0]
    assert (a.trials, a.missing) == (3, 1)
    assert a.total is not None and (a.total.median, a.total.low, a.total.high) == (200, 100, 300)
    assert a.cached is not None and (a.cached.n, a.cached.median) == (1, 5)  # only the trial that reported it
    assert report.rows[2].cached is None
    doc = msgspec.json.decode(msgspec.json.encode(report))
    assert doc["rows"][0]["input"]["median"] == 190


def test_rows_include_groups_without_usage() -> None:
    rows = token_rows([result("q", 1, None), result("q", 2, None)])
    assert [(r.case_id, r.trials, r.missing, r.total) for r in rows] == [("q", 0, 2, None)]
