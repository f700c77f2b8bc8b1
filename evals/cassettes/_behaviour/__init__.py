"""Scripted agent behaviour per (lane, case, condition), from which _generate.py writes the cassettes."""

from __future__ import annotations

from . import dogfood, execution, prompt
from .common import BEHAVIOURS

__all__ = ("BEHAVIOURS", "dogfood", "execution", "prompt")
