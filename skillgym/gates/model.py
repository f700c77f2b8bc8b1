"""What a judged gate is: data only, so that run.finish (skillgym.events) can carry it."""

from __future__ import annotations

from typing import Literal, TypeAlias

from ..model import Data
from ..stats import Interval

GateStatus: TypeAlias = Literal["passed", "failed", "inconclusive", "skipped"]


class GatePart(Data, frozen=True, kw_only=True):
    """The gate in one lane and provider: the estimate, its interval and the verdict they give."""

    lane: str
    provider: str
    status: GateStatus
    value: float | None = None
    interval: Interval | None = None
    errors: int = 0
    detail: str = ""


class GateResult(Data, frozen=True, kw_only=True):
    """One gate's outcome, as report.json's ``gates`` lists it."""

    expression: str
    origin: str
    status: GateStatus
    detail: str
    parts: tuple[GatePart, ...] = ()
    errors: int = 0  # summed over the parts

    @property
    def blocked_by_errors(self) -> bool:
        """Inconclusive, with data taken away by errors that are not the agent's: exit 3."""
        return self.status == "inconclusive" and self.errors > 0
