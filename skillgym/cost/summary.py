"""The report's cost section: dollars per run and per lane, condition and provider, unknown kept unknown."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ..model import Data
from ..results import TrialResult


class CostTotals(Data, frozen=True, kw_only=True):
    """Dollars summed over the trials with a known cost; the trials without one are counted, never zeroed."""

    usd: float | None  # None: no trial had a known cost
    priced: int  # trials with a known cost
    unpriced: int  # trials without: their CLI said nothing and the price table has no price for the model
    from_cli: int = 0  # of the priced, those whose agent CLI reported the cost itself

    @property
    def per_trial(self) -> float | None:
        return None if self.usd is None or not self.priced else self.usd / self.priced


class ConditionCost(Data, frozen=True, kw_only=True):
    lane: str
    condition: str
    provider: str
    totals: CostTotals


class CostReport(Data, frozen=True, kw_only=True):
    """The run's cost: its totals and one row per lane, condition and provider, in report order."""

    totals: CostTotals
    conditions: tuple[ConditionCost, ...]
    unpriced_models: tuple[str, ...] = ()  # the models of trials with usage but no price: add them


def totals(results: Sequence[TrialResult]) -> CostTotals:
    costs = [r.cost for r in results if r.cost is not None]
    return CostTotals(
        usd=round(sum(c.usd for c in costs), 6) if costs else None,
        priced=len(costs),
        unpriced=len(results) - len(costs),
        from_cli=sum(1 for c in costs if c.source == "cli"),
    )


def build_cost_report(results: Sequence[TrialResult]) -> CostReport | None:
    """None when no trial reported usage or a cost: a run of stand-ins has no cost to speak of."""
    if not any(r.cost is not None or r.usage is not None for r in results):
        return None
    groups: dict[tuple[str, str, str], list[TrialResult]] = defaultdict(list)
    for r in results:
        groups[(r.id.lane, r.id.condition, r.id.provider)].append(r)
    unpriced = sorted(
        {
            r.model or "a model the agent did not name"
            for r in results
            if r.cost is None and r.usage is not None
        }
    )
    return CostReport(
        totals=totals(results),
        conditions=tuple(
            ConditionCost(lane=lane, condition=condition, provider=provider, totals=totals(trials))
            for (lane, condition, provider), trials in groups.items()
        ),
        unpriced_models=tuple(unpriced),
    )


def dollars(value: float | None) -> str:
    """``$1.2345`` (four places below a dollar, two above); ``-`` when unknown."""
    if value is None:
        return "-"
    return f"${value:,.2f}" if value >= 1 else f"${value:.4f}"


def cost_line(cost: CostReport | None) -> str | None:
    """The console's closing line about dollars; None when the run has no cost section."""
    if cost is None:
        return None
    t = cost.totals
    line = f"cost: {dollars(t.usd)} over {t.priced} trial(s)"
    if t.unpriced:
        models = f" (no price for {', '.join(cost.unpriced_models)})" if cost.unpriced_models else ""
        line += f"; {t.unpriced} trial(s) of unknown cost{models}, not counted"
    return line
