"""report.html's run-design sections: gates, budget, dollars, did it fire vs help, adaptive, A/A, judge.

Each function only arranges what report.json already holds (the statistics are the report modules'); the
words are the ones report.md uses, so the two pages read alike.
"""

from __future__ import annotations

from typing import Any, Final

from ..cost.summary import dollars
from ..gates.model import GateResult
from ..paired import Comparison
from .aggregate import Report
from .charts import Chart, Row, chart, exact
from .templating import DASH

# What each gate verdict means for the exit code, as report.md's Gates section says it.
GATE_WORDS: Final = {
    "passed": "passed",
    "failed": "failed",
    "inconclusive": "inconclusive",
    "skipped": "skipped",
}


def gate_rows(gates: tuple[GateResult, ...]) -> list[dict[str, Any]]:
    """Each gate with its verdict in words (and whether errors not the agent's left it open)."""
    return [
        {
            "g": g,
            "word": GATE_WORDS[g.status] + (" (errors not the agent's)" if g.blocked_by_errors else ""),
            # A lift is a difference (percentage points); a pass rate is a rate.
            "points": g.expression.startswith("lift"),
        }
        for g in gates
    ]


def activation_chart(report: Report) -> Chart | None:
    """Per lane and provider: the activation rate with its Wilson interval, on [0, 1]."""
    if not report.activation:
        return None
    many = len(report.providers) > 1
    rows = []
    for a in report.activation:
        rows.append(
            Row(
                label=f"{a.lane} · activated" + (f" · {a.provider}" if many else ""),
                value=a.activation_rate,
                interval=a.activation_interval,
                text=f"{a.activated}/{a.trials} trials loaded it",
                tone=a.lane,
                data={
                    "lane": a.lane,
                    "provider": a.provider,
                    "rate": exact(a.activation_rate),
                    "low": exact(a.activation_interval.low if a.activation_interval else None),
                    "high": exact(a.activation_interval.high if a.activation_interval else None),
                    "activated": str(a.activated),
                    "trials": str(a.trials),
                },
            )
        )
    return chart(
        "activation",
        "Activation rate under self-load: the share of trials whose trace shows the skill loaded, "
        "95% interval",
        rows,
        low=0.0,
        high=1.0,
        ticks=(0.0, 0.25, 0.5, 0.75, 1.0),
    )


def split_chart(report: Report) -> Chart | None:
    """Per lane and provider: the activation gap and help when loaded, paired per case, around zero."""
    many = len(report.providers) > 1
    rows = []
    for a in report.activation:
        for kind, name, c in (
            ("gap", "activation gap", a.activation_gap),
            ("help", "help when loaded", a.help_when_loaded),
        ):
            if c is None:
                continue
            rows.append(
                Row(
                    label=f"{a.lane} · {name}" + (f" · {a.provider}" if many else ""),
                    value=c.mean_diff,
                    interval=c.interval,
                    text=_diff_text(c),
                    tone=c.verdict,
                    data={
                        "lane": a.lane,
                        "provider": a.provider,
                        "kind": kind,
                        "diff": exact(c.mean_diff),
                        "low": exact(c.interval.low if c.interval else None),
                        "high": exact(c.interval.high if c.interval else None),
                        "verdict": c.verdict,
                        "pairs": str(c.n_pairs),
                    },
                )
            )
    if not rows:
        return None
    return chart(
        "activation-split",
        "Activation gap (preloaded vs self-load) and help when loaded (observational), paired per case, "
        "95% interval",
        rows,
        low=-1.0,
        high=1.0,
        ticks=(-1.0, -0.5, 0.0, 0.5, 1.0),
        tick_label="{:+.0%}",
        zero=True,
    )


def _diff_text(c: Comparison) -> str:
    diff = DASH if c.mean_diff is None else f"{c.mean_diff * 100:+.1f} pp"
    return f"{diff} {c.verdict}"


def sections(report: Report) -> dict[str, Any]:
    """Everything the run-design sections need, beside the report itself."""
    return {
        "gate_rows": gate_rows(report.gates),
        "activation_chart": activation_chart(report),
        "split_chart": split_chart(report),
        "case_interval_title": (
            "95% interval of the pass rate: Wilson; an adaptive case's is its confidence sequence"
            if any(s.pass_interval_kind != "wilson" for s in report.cases)
            else "95% Wilson interval of the pass rate"
        ),
        "dollars": dollars,
    }
