"""Cost in dollars: the price table, each trial's cost, budgets and dry-run estimates."""

from __future__ import annotations

from .prices import Cost as Cost
from .prices import ModelPrice as ModelPrice
from .prices import PriceError as PriceError
from .prices import PriceTable as PriceTable
from .prices import load_prices as load_prices
from .prices import trial_cost as trial_cost

__all__ = ("Cost", "ModelPrice", "PriceError", "PriceTable", "load_prices", "trial_cost")
