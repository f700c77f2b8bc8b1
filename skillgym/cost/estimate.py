"""What a plan will spend, estimated from the committed token snapshots (per case x condition medians).

A cell (case, condition, provider) takes its snapshot entry's median tokens per trial, times its planned
trials. Dollars are those tokens at the snapshot model's prices, with the cached tokens at the cache-write
price (a snapshot does not split cache reads from writes), so the dollar figure leans high. A cell with no
entry, or whose provider has no single snapshot file for the run's model, has no estimate and is named.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import msgspec

from ..identity import Group
from ..model import Data, Lane
from ..plan import Plan
from ..snapshots.model import Figures, SnapshotFile
from ..snapshots.store import provider_files, read_snapshot, snapshot_path
from .model import Measure
from .prices import PriceTable


class CellEstimate(Data, frozen=True, kw_only=True):
    """One case under one condition and provider: its planned trials and what each is expected to spend."""

    lane: Lane
    case_id: str
    condition: str
    provider: str
    trials: int
    tokens_per_trial: float | None = None  # the snapshot's median total
    usd_per_trial: float | None = None
    snapshot: str | None = None  # the file the figures come from
    missing: str | None = None  # why there is no estimate


class RunEstimate(Data, frozen=True, kw_only=True):
    """The plan's estimated spend: sums over the cells with an estimate, and the cells without one."""

    tokens: float | None
    usd: float | None
    cells: tuple[CellEstimate, ...]
    no_tokens: tuple[str, ...] = ()  # lane/case/condition/provider without a token estimate
    no_usd: tuple[str, ...] = ()  # ... without a dollar estimate (no tokens, or an unpriced model)


def _snapshot_for(directory: Path, provider: str, model: str | None) -> tuple[SnapshotFile | None, str]:
    if model is not None:
        path = snapshot_path(directory, provider, model)
        found = read_snapshot(path, provider=provider, model=model)
        return found, (str(path) if found else f"no snapshot file {path}")
    files = provider_files(directory, provider)
    if len(files) == 1:
        return read_snapshot(files[0], provider=provider), str(files[0])
    if not files:
        return None, f"no snapshot file for provider {provider!r} in {directory}"
    return None, f"{len(files)} snapshot files for provider {provider!r}: pass --model to choose one"


def _usd(figures: Figures, model: str, prices: PriceTable) -> float | None:
    found = prices.price_of(model)
    if found is None or figures.input is None or figures.output is None:
        return None
    price = found[1]
    cached = price.cache_write if price.cache_write is not None else price.input
    return (
        figures.input * price.input + figures.output * price.output + (figures.cached or 0) * cached
    ) / 1e6


def estimate_plan(plan: Plan, directory: Path, prices: PriceTable) -> RunEstimate:
    """Every planned cell's estimate from ``directory``'s snapshots, in plan order."""
    planned = Counter(item.id.group for item in plan.items)
    files = {p: _snapshot_for(directory, p, plan.model) for p in plan.providers}
    cells: list[CellEstimate] = []
    for (lane, case_id, condition, provider), trials in planned.items():
        snapshot, where = files[provider]
        entry = None
        if snapshot is not None:
            entry = next(
                (e for e in snapshot.entries if e.key == (lane, case_id, condition)),
                None,
            )
        cell = CellEstimate(lane=lane, case_id=case_id, condition=condition, provider=provider, trials=trials)
        if snapshot is None or entry is None:
            why = where if snapshot is None else f"no entry in {where}"
            cells.append(msgspec.structs.replace(cell, missing=why))
            continue
        usd = _usd(entry.median, snapshot.model, prices)
        cells.append(
            msgspec.structs.replace(
                cell,
                tokens_per_trial=float(entry.median.total),
                usd_per_trial=None if usd is None else round(usd, 6),
                snapshot=where,
                missing=None if usd is not None else f"model {snapshot.model!r} has no price",
            )
        )
    with_tokens = [c for c in cells if c.tokens_per_trial is not None]
    with_usd = [c for c in cells if c.usd_per_trial is not None]
    return RunEstimate(
        tokens=sum(c.trials * (c.tokens_per_trial or 0.0) for c in with_tokens) if with_tokens else None,
        usd=round(sum(c.trials * (c.usd_per_trial or 0.0) for c in with_usd), 6) if with_usd else None,
        cells=tuple(cells),
        no_tokens=tuple(_key(c) for c in cells if c.tokens_per_trial is None),
        no_usd=tuple(_key(c) for c in cells if c.usd_per_trial is None),
    )


def _key(cell: CellEstimate) -> str:
    return f"{cell.lane}/{cell.case_id}/{cell.condition}/{cell.provider}"


def per_trial(estimate: RunEstimate) -> Mapping[tuple[Group, Measure], float]:
    """Each cell's per-trial estimate by measure: what a budget falls back on before a cell has finished."""
    out: dict[tuple[Group, Measure], float] = {}
    for c in estimate.cells:
        group: Group = (c.lane, c.case_id, c.condition, c.provider)
        if c.tokens_per_trial is not None:
            out[(group, "tokens")] = c.tokens_per_trial
        if c.usd_per_trial is not None:
            out[(group, "usd")] = c.usd_per_trial
    return out
