"""What a budget is and what it did: data only, so that run.finish (skillgym.events) can carry it."""

from __future__ import annotations

from typing import Literal, TypeAlias

from ..errors import UsageError
from ..model import Data

Measure: TypeAlias = Literal["usd", "tokens"]


class RunBudget(Data, frozen=True, kw_only=True):
    """What a run may spend: dollars, tokens, or both; None is no limit on that measure."""

    usd: float | None = None
    tokens: int | None = None

    def __post_init__(self) -> None:
        if self.usd is not None and not self.usd > 0:
            raise UsageError(f"--budget-usd must be more than 0, got {self.usd:g}")
        if self.tokens is not None and self.tokens < 1:
            raise UsageError(f"--budget-tokens must be at least 1, got {self.tokens}")

    @property
    def measures(self) -> tuple[Measure, ...]:
        return (
            *(("usd",) if self.usd is not None else ()),
            *(("tokens",) if self.tokens is not None else ()),
        )

    def limit(self, measure: Measure) -> float:
        value = self.usd if measure == "usd" else self.tokens
        assert value is not None
        return float(value)


class ShortCell(Data, frozen=True, kw_only=True):
    """A case under a condition and provider that got fewer trials than planned when the budget ended."""

    lane: str
    case_id: str
    condition: str
    provider: str
    planned: int
    finished: int


class BudgetStop(Data, frozen=True, kw_only=True):
    """Why the budget ended the run, what was spent, and which cells are short."""

    budget: RunBudget
    spent_usd: float | None  # None: some finished trial's dollars are unknown
    spent_tokens: int
    reason: str
    short: tuple[ShortCell, ...] = ()
