"""Shards: a deterministic, cost-balanced part of a plan for `run --shard I/N`, and the plan fingerprint.

Placement. Every placement unit (a trial, or with ``--shard-by case`` a whole case) ranks the N shards by
a BLAKE3 hash of its key (rendezvous hashing): without any balancing, a unit's shard depends on its own
key and N alone, so adding a case moves only that case's trials, and every unit lands in exactly one
shard. Hashing alone balances only on average, and a suite has tens of cases whose trials can differ in
cost by 10x; so the units are placed greedily, the costliest first, each in the first shard of its own
ranking that has room under a cap of ``(1 + SLACK)`` times the mean load. A unit whose first choice is
full moves to its second: that is the price of balance. Adding a case can push a unit placed after it
to its next choice, so "only the new case's trials move" holds for every unit that does not meet a full
shard, not for all (BENCHMARKS.md measures both on the example suite). The cap keeps every shard within
``SLACK`` of the mean as long as no single unit is larger than that margin.

Cost. A trial's expected cost is its (lane, case, condition)'s median total tokens per trial in the
committed token snapshots of its provider; a trial with no snapshot costs the median of those that have
one (every trial costs 1 when none has). The costs used are recorded in the shard's run.json, so a
resume and a merge place the trials again from the record, not from snapshot files that may have moved.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeAlias

import blake3
import msgspec

from .errors import UsageError
from .identity import item_key
from .model import Data
from .plan import Plan, WorkItem

ShardBy: TypeAlias = Literal["trial", "case"]
SHARD_BY: tuple[ShardBy, ...] = ("trial", "case")
MAX_SHARDS = 1000  # a CI matrix of more jobs than this is a typo; each shard is a whole run folder
# How far above the mean load a shard may go before a unit moves to its next-ranked shard. Smaller
# balances tighter and moves more units when the plan changes; 10% is about what CI jobs vary anyway.
SLACK = 0.10
# The settings beside the plan's items that change a trial's result; the plan fingerprint covers them.
RESULT_SETTINGS = ("replay_source", "agent_command", "sandbox", "network", "judge")

_PLAN_CONTEXT = "skillgym 2026-12 plan fingerprint v1"
_PLACE_CONTEXT = "skillgym 2026-12 shard placement v1"
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class ShardSpec(Data, frozen=True, kw_only=True):
    """Which part of which plan a run is: recorded in run.json and run.start by `run --shard I/N`.

    ``label`` is ``I/N`` as typed.
    """

    index: int  # 1-based: shard I of N
    count: int  # N, the number of shards the plan is split into
    by: ShardBy = "trial"  # what stays together: a trial, or a case with all its trials
    plan_fingerprint: str  # of the whole, unsharded plan
    plan_trials: int  # trials in the whole, unsharded plan
    costs: dict[str, float] = {}  # expected cost per trial by lane/case/condition/provider, from snapshots

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` as (I, N); a UsageError saying what is wrong and what is meant otherwise."""
    match = _SHARD.match(text)
    if match is None:
        raise UsageError(f"--shard {text!r} is not I/N; write the shard's number and the count, e.g. 2/4")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise UsageError(f"--shard {text}: the count must be between 1 and {MAX_SHARDS}, got {count}")
    if not 1 <= index <= count:
        raise UsageError(f"--shard {text}: the shard number must be between 1 and {count}, got {index}")
    return index, count


def plan_fingerprint(plan: Plan, settings: Mapping[str, Any]) -> str:
    """BLAKE3 over the whole plan's trial keys, case fingerprints and workspaces, in order, the model
    asked for and the ``RESULT_SETTINGS`` among ``settings`` (run.json's ``settings``).

    Two runs with the same plan fingerprint ran the same trials of the same cases the same way; the
    skills' content is checked beside it (run.json's ``skill_hash``).
    """
    doc = {
        "items": [[i.id.key, i.id.fingerprint, i.workspace] for i in plan.items],
        "model": plan.model,
        "settings": {name: settings.get(name) for name in RESULT_SETTINGS},
    }
    encoded = msgspec.json.encode(doc, order="sorted")
    return blake3.blake3(encoded, derive_key_context=_PLAN_CONTEXT).hexdigest()


def group_key(item: WorkItem) -> str:
    """``lane/case/condition/provider``: what one cost figure is kept for."""
    return item.id.key.rsplit("/", 1)[0]


def unit_of(item: WorkItem, by: ShardBy) -> str:
    """The placement unit a trial belongs to: its own key, or its case's id."""
    return item.id.key if by == "trial" else item.id.case_id


def expected_costs(plan: Plan, snapshot_dir: str) -> dict[str, float]:
    """Each planned (lane/case/condition/provider)'s median total tokens per trial, from the snapshots.

    Every snapshot file of a provider counts (the plan's own model first): a figure for another model
    still ranks one case against another. A file that cannot be read gives no figures; the run's own
    snapshot step reports it.
    """
    from .snapshots.store import SnapshotError, provider_files, read_snapshot, snapshot_path

    wanted = {group_key(i) for i in plan.items}
    costs: dict[str, float] = {}
    for provider in plan.providers:
        files = provider_files(snapshot_dir, provider)
        if plan.model is not None:
            own = snapshot_path(snapshot_dir, provider, plan.model)
            files = [own, *(f for f in files if f != own)] if own in files else files
        for path in files:
            try:
                snapshot = read_snapshot(path)
            except SnapshotError:
                continue
            for entry in snapshot.entries if snapshot else ():
                key = item_key(entry.lane, entry.case, entry.condition, provider, 0).rsplit("/", 1)[0]
                if key in wanted and key not in costs:
                    costs[key] = float(entry.median.total)
    return dict(sorted(costs.items()))


def unit_costs(plan: Plan, by: ShardBy, costs: Mapping[str, float]) -> dict[str, float]:
    """Each placement unit's expected cost, in plan order: the sum over its trials."""
    known = [c for c in costs.values() if c > 0]
    fallback = statistics.median(known) if known else 1.0
    units: dict[str, float] = {}
    for item in plan.items:
        unit = unit_of(item, by)
        cost = costs.get(group_key(item), fallback)
        units[unit] = units.get(unit, 0.0) + (cost if cost > 0 else fallback)
    return units


def _ranking(unit: str, count: int) -> list[int]:
    # One extendable-output hash per unit: 8 bytes of score for each shard.
    digest = blake3.blake3(unit.encode(), derive_key_context=_PLACE_CONTEXT).digest(length=8 * count)
    scores = [digest[8 * s : 8 * s + 8] for s in range(count)]
    return sorted(range(count), key=lambda s: scores[s], reverse=True)


def place(units: Mapping[str, float], count: int, *, slack: float = SLACK) -> dict[str, int]:
    """Each unit's shard (0-based): its highest-ranked shard with room, costliest units first.

    Deterministic in the units and their costs alone (never in their order), so every shard computes
    the same placement.
    """
    if count == 1:
        return dict.fromkeys(units, 0)
    rankings = {unit: _ranking(unit, count) for unit in units}
    cap = (1 + slack) * sum(units.values()) / count
    loads = [0.0] * count
    placed: dict[str, int] = {}
    for unit in sorted(units, key=lambda u: (-units[u], u)):
        cost, ranking = units[unit], rankings[unit]
        shard = next((s for s in ranking if loads[s] + cost <= cap), None)
        if shard is None:  # larger than the room anywhere: the least loaded, by the unit's own ranking
            shard = min(ranking, key=lambda s: loads[s])
        loads[shard] += cost
        placed[unit] = shard
    return placed


def select(plan: Plan, spec: ShardSpec) -> Plan:
    """The part of ``plan`` (the whole plan) that shard ``spec`` runs, in plan order.

    ``lanes`` stays the whole plan's, so every shard's run.start says the same.
    """
    placed = place(unit_costs(plan, spec.by, spec.costs), spec.count)
    mine = tuple(i for i in plan.items if placed[unit_of(i, spec.by)] == spec.index - 1)
    return msgspec.structs.replace(plan, items=mine)


def shard_part(plan: Plan, spec: ShardSpec, settings: Mapping[str, Any], run_dir: Path) -> Plan:
    """A resumed shard's part of the whole ``plan``, placed again from its recorded spec.

    The whole plan must still be the one the shard started from: its sibling shards ran that plan, and
    a shard of another would not merge with them.
    """
    now = plan_fingerprint(plan, settings)
    if now != spec.plan_fingerprint:
        raise UsageError(
            f"{run_dir} is shard {spec.label} of plan {spec.plan_fingerprint[:12]}, but the suite now "
            f"makes plan {now[:12]} (a case, condition or setting changed since the shard started); "
            "put the suite back as it was to resume, or run every shard again"
        )
    return select(plan, spec)


def make_spec(
    plan: Plan, text: str, *, by: ShardBy, settings: Mapping[str, Any], snapshot_dir: str
) -> ShardSpec:
    """The spec of `run --shard TEXT --shard-by BY` over the whole ``plan``."""
    index, count = parse_shard(text)
    return ShardSpec(
        index=index,
        count=count,
        by=by,
        plan_fingerprint=plan_fingerprint(plan, settings),
        plan_trials=len(plan.items),
        costs=expected_costs(plan, snapshot_dir),
    )


def choose_by(given: str | None, *, adaptive: bool) -> ShardBy:
    """``--shard-by``: trial by default; case when trials are adaptive, whose rounds must stay together."""
    if given is None:
        return "case" if adaptive else "trial"
    if given not in SHARD_BY:
        raise UsageError(f"--shard-by {given!r}: choose one of {', '.join(SHARD_BY)}")
    if adaptive and given == "trial":
        raise UsageError(
            "--shard-by trial cannot split adaptive trials (--trials auto): each case's rounds decide "
            "together when to stop; use --shard-by case (the default with --trials auto)"
        )
    return "case" if given == "case" else "trial"


def loads(plan: Plan, spec_costs: Mapping[str, float], count: int, by: ShardBy) -> list[float]:
    """Each shard's expected cost under the placement: what the balance measurements read."""
    units = unit_costs(plan, by, spec_costs)
    totals = [0.0] * count
    for unit, shard in place(units, count).items():
        totals[shard] += units[unit]
    return totals


def add_shard_flags(run: Any) -> None:
    """`run --shard I/N` and `--shard-by`, in their own group of `run`'s flags."""
    group = run.add_argument_group("shards (one part of the plan, for a CI matrix)")
    group.add_argument(
        "--shard",
        metavar="I/N",
        default=None,
        help="run only shard I of N (a stable, cost-balanced part of the plan); "
        "join the shards' run folders with `skillgym merge`",
    )
    group.add_argument(
        "--shard-by",
        choices=SHARD_BY,
        default=None,
        help="what stays together in one shard: a trial (default) or a case with all its trials "
        "(the default with adaptive trials)",
    )
