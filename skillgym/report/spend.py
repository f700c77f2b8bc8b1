"""report.md's Gates, Budget and Cost sections, also the body of the GitHub step summary."""

from __future__ import annotations

from collections.abc import Sequence

from ..cost.model import BudgetStop
from ..cost.summary import CostReport, dollars
from ..gates.model import GateResult

_MARK = {"passed": "pass", "failed": "FAIL", "inconclusive": "inconclusive", "skipped": "skipped"}


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    def row(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    return [row(header), "|" + "|".join("---" for _ in header) + "|", *(row(r) for r in rows), ""]


def gates_section(gates: Sequence[GateResult]) -> list[str]:
    """One row per gate: its verdict and why (the interval against the threshold, per lane and provider)."""
    if not gates:
        return []
    out = [
        "## Gates",
        "",
        "A gate passes only when its whole 95% interval is on the right side of the threshold, fails when it "
        "is wholly on the wrong side, and is inconclusive otherwise (exit 3 when errors that are not the "
        "agent's took its data, else exit 1: not shown).",
        "",
    ]
    rows = [
        [
            f"`{g.expression}`",
            _MARK[g.status] + (" (errors)" if g.blocked_by_errors else ""),
            g.detail,
            g.origin,
        ]
        for g in gates
    ]
    return out + _table(["gate", "verdict", "evidence", "declared at"], rows)


def budget_section(budget: BudgetStop | None) -> list[str]:
    if budget is None:
        return []
    limits = [
        *([f"{dollars(budget.budget.usd)}"] if budget.budget.usd is not None else []),
        *([f"{budget.budget.tokens:,} tokens"] if budget.budget.tokens is not None else []),
    ]
    out = [
        "## Budget",
        "",
        f"**The budget ({' and '.join(limits)}) ended this run:** {budget.reason}. Spent: "
        f"{dollars(budget.spent_usd)}, {budget.spent_tokens:,} tokens. Finished trials are kept; "
        "continue with "
        "`skillgym run --resume <run-dir> --budget-usd <larger>` (or `--budget-tokens`).",
        "",
    ]
    if budget.short:
        out += ["Cells short of their planned trials:", ""]
        out += _table(
            ["lane", "case", "condition", "provider", "finished", "planned"],
            [
                [c.lane, c.case_id, c.condition, c.provider, str(c.finished), str(c.planned)]
                for c in budget.short
            ],
        )
    return out


def cost_section(cost: CostReport | None) -> list[str]:
    if cost is None:
        return []
    t = cost.totals
    out = [
        "## Cost",
        "",
        f"{dollars(t.usd)} over {t.priced} trial(s) with a known cost ({t.from_cli} reported by the agent "
        f"CLI, {t.priced - t.from_cli} from the price table); {t.unpriced} trial(s) of unknown cost are not "
        "counted"
        + (f" (no price for {', '.join(cost.unpriced_models)})" if cost.unpriced_models else "")
        + ".",
        "",
    ]
    rows = [
        [
            c.lane,
            c.condition,
            c.provider,
            dollars(c.totals.usd),
            dollars(c.totals.per_trial),
            str(c.totals.priced),
            str(c.totals.unpriced),
        ]
        for c in cost.conditions
    ]
    return out + _table(["lane", "condition", "provider", "cost", "per trial", "priced", "unknown"], rows)
