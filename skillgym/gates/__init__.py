"""CI gates: declarative expressions judged on the run's statistics, and the exit code they give."""

from __future__ import annotations

from ..model import GateSpec as GateSpec
from .expression import GateSyntaxError as GateSyntaxError
from .expression import parse_gate as parse_gate
from .model import GatePart as GatePart
from .model import GateResult as GateResult

__all__ = ("GatePart", "GateResult", "GateSpec", "GateSyntaxError", "parse_gate")
