"""Budgets: --budget-usd and --budget-tokens decide, before each trial, whether it may start.

The rule: a trial starts only when what finished trials spent, plus the estimates of the trials still
running, plus this trial's estimate, stays within every budget. A trial's estimate is the most a finished
trial of the same case, condition and provider spent in this run; else its token snapshot's median (tokens,
and dollars at the price table's prices); else the most any finished trial spent; else unknown, and then
it starts only when no other trial is running, so the first trials run one at a time until one has shown
what a trial costs. Once a trial is refused nothing new starts; finished trials are kept and
``skillgym run --resume RUN_DIR --budget-usd LARGER`` continues.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeAlias

import anyio
import msgspec

from ..errors import SkillgymError
from ..identity import Group
from ..plan import Plan, WorkItem
from ..providers.base import Provider
from ..results import TrialResult
from .model import BudgetStop, Measure, RunBudget, ShortCell
from .prices import PriceTable

# Setup failed before the agent ran: nothing was spent, though nothing was reported either.
_NOTHING_SPENT = ("environment-error",)


def spent(results: Iterable[TrialResult], measure: Measure) -> float | None:
    """What ``results`` spent on ``measure``; None when a trial's figure is unknown (its spend is unseen)."""
    total = 0.0
    for result in results:
        value = _spend(result, measure)
        if value is None:
            return None
        total += value
    return total


def _spend(result: TrialResult, measure: Measure) -> float | None:
    if measure == "usd":
        value: float | None = result.cost.usd if result.cost is not None else None
    else:
        value = result.usage.total if result.usage is not None else None
    if value is None and result.error_class in _NOTHING_SPENT:
        return 0.0
    return value


Estimates: TypeAlias = Mapping[tuple[Group, Measure], float]  # from the token snapshots, per cell


class BudgetGate:
    """Admits trials while the budget holds (see the module's rule); one per run, on the run's event loop."""

    def __init__(self, budget: RunBudget, done: Sequence[TrialResult], snapshot_estimates: Estimates) -> None:
        self.budget = budget
        self.snapshot = snapshot_estimates
        self.most: dict[tuple[Group, Measure], float] = {}  # per cell: the most one trial spent
        self.most_any: dict[Measure, float] = {}  # the most any trial spent
        self.spent: dict[Measure, float] = dict.fromkeys(budget.measures, 0.0)
        self.spent_tokens = 0
        self.running: dict[str, dict[Measure, float | None]] = {}
        self.stop: str | None = None
        self._changed = anyio.Event()
        for result in done:
            self._account(result)

    async def admit(self, item: WorkItem) -> bool:
        """True when ``item`` may start now; waits while an unknown estimate must run alone; False once the
        budget has ended the run (``stop`` says why)."""
        while self.stop is None:
            guess = {m: self._estimate(item.id.group, m) for m in self.budget.measures}
            unknown = any(v is None for v in guess.values()) or any(
                v is None for running in self.running.values() for v in running.values()
            )
            if unknown and self.running:
                await self._wait()
                continue
            for measure, estimate in guess.items():
                committed = self.spent[measure] + sum(r[measure] or 0.0 for r in self.running.values())
                if estimate is not None and committed + estimate > self.budget.limit(measure):
                    self.stop = (
                        f"the next trial ({item.id.key}) could spend {_fmt(measure, estimate)} and "
                        f"{_fmt(measure, committed)} of the {_fmt(measure, self.budget.limit(measure))} "
                        "budget is spent or committed"
                    )
                    break
            else:
                self.running[item.id.key] = guess
                return True
        return False

    def finished(self, result: TrialResult) -> None:
        """A trial ended: its spend counts, its estimate is released, waiting workers look again."""
        self.running.pop(result.id.key, None)
        self._account(result)
        self._changed.set()
        self._changed = anyio.Event()

    def _account(self, result: TrialResult) -> None:
        if result.usage is not None and result.usage.total is not None:
            self.spent_tokens += result.usage.total
        for measure in self.budget.measures:
            value = _spend(result, measure)
            if value is None:
                what = "dollar cost" if measure == "usd" else "token usage"
                self.stop = self.stop or (
                    f"trial {result.id.key} reported no {what}, so the budget cannot see what the run "
                    "spends; nothing more starts"
                )
                continue
            self.spent[measure] += value
            key = (result.id.group, measure)
            self.most[key] = max(self.most.get(key, 0.0), value)
            self.most_any[measure] = max(self.most_any.get(measure, 0.0), value)

    def _estimate(self, group: Group, measure: Measure) -> float | None:
        key = (group, measure)
        if key in self.most:
            return self.most[key]
        if key in self.snapshot:
            return self.snapshot[key]
        return self.most_any.get(measure)

    async def _wait(self) -> None:
        await self._changed.wait()

    def outcome(self, planned: Sequence[WorkItem], results: Sequence[TrialResult]) -> BudgetStop | None:
        """What the report says when the budget ended the run; None when it did not."""
        if self.stop is None:
            return None
        want = Counter(i.id.group for i in planned)
        got = Counter(r.id.group for r in results)
        short = tuple(
            ShortCell(
                lane=g[0], case_id=g[1], condition=g[2], provider=g[3], planned=n, finished=got.get(g, 0)
            )
            for g, n in want.items()
            if got.get(g, 0) < n
        )
        return BudgetStop(
            budget=self.budget,
            spent_usd=_rounded(spent(results, "usd")),
            spent_tokens=self.spent_tokens,
            reason=self.stop,
            short=short,
        )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _fmt(measure: Measure, value: float) -> str:
    return f"${value:,.4f}" if measure == "usd" else f"{value:,.0f} tokens"


def budget_from(usd: float | None, tokens: int | None) -> RunBudget | None:
    """The run's budget from its flags; None when neither is given."""
    if usd is None and tokens is None:
        return None
    return RunBudget(usd=usd, tokens=tokens)


def replace_budget(
    recorded: Mapping[str, object] | None, usd: float | None, tokens: int | None
) -> RunBudget | None:
    """A resumed run's budget: the one it recorded, with each measure given again replacing its own."""
    old = msgspec.convert(recorded, RunBudget) if recorded else RunBudget()
    merged = RunBudget(
        usd=usd if usd is not None else old.usd, tokens=tokens if tokens is not None else old.tokens
    )
    return merged if merged.measures else None


class BudgetBlind(SkillgymError):
    """A budget over a provider that reports no usage (or no cost): a cap that cannot see spend is no cap."""


def check_budget(
    plan: Plan, providers: Mapping[str, Provider], budget: RunBudget | None, prices: PriceTable | None
) -> None:
    """Before the matrix: every provider under a budget must report what it spends.

    A provider that reports no token usage (``reports_usage = False``: stub) cannot run under a budget; under
    --budget-usd one that reports no dollar cost (``reports_cost``: Claude's CLI does) needs a price for the
    run's model. Providers whose usage depends on the agent (command) are checked trial by trial: a trial
    that reports nothing ends the run's new starts.
    """
    if budget is None:
        return
    problems = []
    for name, provider in providers.items():
        if not getattr(provider, "reports_usage", True):
            problems.append(
                f"provider {name!r} reports no token usage, so a budget cannot see what it spends"
            )
        elif (
            budget.usd is not None
            and not getattr(provider, "reports_cost", False)
            and plan.model is not None
            and (prices is None or prices.price_of(plan.model) is None)
        ):
            problems.append(
                f"provider {name!r} reports no dollar cost and the price table has no price for model "
                f"{plan.model!r}; add it to a prices.toml in the suite or to a file given with --prices"
            )
    if problems:
        raise BudgetBlind("; ".join(problems) + "; drop --budget-usd/--budget-tokens or change the provider")
