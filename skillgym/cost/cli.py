"""`skillgym run`'s cost flags: --prices, --budget-usd, --budget-tokens, and the dry run's estimate."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from ..model import Suite
from ..plan import Plan
from .estimate import RunEstimate, estimate_plan
from .model import RunBudget
from .prices import PriceTable, load_prices, price_layers
from .summary import dollars

DEFAULT_SNAPSHOT_DIR = "snapshots"


def add_cost_flags(run: argparse.ArgumentParser) -> None:
    """Register the price table and budget flags on ``skillgym run``."""
    group = run.add_argument_group("cost (dollars and budgets)")
    group.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="a price table (TOML) merged over the default and the suite's prices.toml",
    )
    group.add_argument(
        "--budget-usd",
        type=_positive_float,
        metavar="X",
        help="start no trial that could take the run's spend past X dollars",
    )
    group.add_argument(
        "--budget-tokens",
        type=_positive_int,
        metavar="N",
        help="start no trial that could take the run's tokens past N",
    )


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of dollars, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of dollars, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of tokens, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of tokens, got {text!r}")
    return value


def run_prices(suite: Suite, given: Path | None) -> tuple[PriceTable, tuple[str, ...]]:
    """The run's merged price table and the override files it merged (absolute, for a resume)."""
    layers = price_layers(suite.root, given)
    return load_prices(layers), tuple(str(p.resolve()) for p in layers)


def run_budget(args: argparse.Namespace) -> RunBudget | None:
    if args.budget_usd is None and args.budget_tokens is None:
        return None
    return RunBudget(usd=args.budget_usd, tokens=args.budget_tokens)


def snapshot_dir(args: argparse.Namespace) -> Path:
    return Path(args.snapshot_dir or DEFAULT_SNAPSHOT_DIR)


def dry_run_estimate(plan: Plan, args: argparse.Namespace, prices: PriceTable) -> RunEstimate:
    return estimate_plan(plan, snapshot_dir(args), prices)


def estimate_lines(estimate: RunEstimate, out: Console, budget: RunBudget | None = None) -> None:
    """The dry run's closing lines: estimated tokens and dollars, the cells without an estimate, and how
    the estimate compares with the budget, when there is one."""
    cells = len(estimate.cells)
    tokens = "-" if estimate.tokens is None else f"{estimate.tokens:,.0f}"
    out.print(
        f"estimate from token snapshots: {tokens} tokens over {cells - len(estimate.no_tokens)} of {cells} "
        f"cell(s); {dollars(estimate.usd)} over {cells - len(estimate.no_usd)} of {cells}",
        markup=False,
    )
    # Grouped by why: a provider without snapshots is one line, not one per cell (--json lists every cell).
    reasons: dict[tuple[bool, str], list[str]] = {}
    for c in estimate.cells:
        if c.missing is not None:
            key = (c.tokens_per_trial is not None, c.missing)
            reasons.setdefault(key, []).append(f"{c.lane}/{c.case_id}/{c.condition}/{c.provider}")
    for (has_tokens, why), keys in reasons.items():
        example = keys[0] if len(keys) == 1 else f"{keys[0]} and {len(keys) - 1} more"
        what = "dollar estimate" if has_tokens else "estimate"
        out.print(f"  no {what} for {len(keys)} cell(s): {why} ({example})", markup=False)
    if budget is not None:
        for measure, limit, guess, unknown in (
            ("usd", budget.usd, estimate.usd, estimate.no_usd),
            ("tokens", budget.tokens, estimate.tokens, estimate.no_tokens),
        ):
            if limit is None:
                continue
            shown = dollars(limit) if measure == "usd" else f"{limit:,} tokens"
            if guess is None:
                verdict = "no estimate to hold it against"
            else:
                fits = "fits within" if guess <= limit else "exceeds"
                amount = dollars(guess) if measure == "usd" else f"{guess:,.0f} tokens"
                verdict = f"the estimate ({amount}) {fits} it" + (
                    f", leaving out {len(unknown)} cell(s) without an estimate" if unknown else ""
                )
            out.print(f"budget {shown}: {verdict}", markup=False)
