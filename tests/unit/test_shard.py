"""Shard placement: a partition of the plan, stable under change, balanced by cost; the plan fingerprint."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillgym.errors import UsageError
from skillgym.loader import load_suite
from skillgym.plan import Plan, build_plan
from skillgym.shard import (
    SLACK,
    ShardSpec,
    choose_by,
    expected_costs,
    loads,
    parse_shard,
    place,
    plan_fingerprint,
    select,
    shard_part,
    unit_costs,
)
from tests.conftest import REPO

SETTINGS = {"replay_source": None, "agent_command": None, "sandbox": "bwrap", "network": None}


@pytest.fixture(scope="module")
def example_plan() -> Plan:
    return build_plan(load_suite(REPO / "evals"))


def _spec(
    plan: Plan, index: int, count: int, *, by: str = "trial", costs: dict[str, float] | None = None
) -> ShardSpec:
    return ShardSpec(
        index=index,
        count=count,
        by=by,  # type: ignore[arg-type]
        plan_fingerprint=plan_fingerprint(plan, SETTINGS),
        plan_trials=len(plan.items),
        costs=costs or {},
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [("2", "is not I/N"), ("0/3", "between 1 and 3"), ("4/3", "between 1 and 3"), ("1/0", "between 1 and")],
)
def test_a_malformed_shard_is_a_usage_error_saying_what(text: str, problem: str) -> None:
    with pytest.raises(UsageError, match=problem):
        parse_shard(text)


def test_parse_shard_reads_i_of_n() -> None:
    assert parse_shard("2/5") == (2, 5)
    assert parse_shard(" 1 / 1 ") == (1, 1)


@pytest.mark.parametrize("count", [1, 2, 3, 7, 200])
@pytest.mark.parametrize("by", ["trial", "case"])
def test_every_trial_lands_in_exactly_one_shard(example_plan: Plan, count: int, by: str) -> None:
    costs = expected_costs(example_plan, str(REPO / "snapshots"))
    parts = [
        select(example_plan, _spec(example_plan, i, count, by=by, costs=costs)) for i in range(1, count + 1)
    ]
    keys = [item.id.key for part in parts for item in part.items]
    assert sorted(keys) == sorted(i.id.key for i in example_plan.items)
    assert len(keys) == len(set(keys))
    for part in parts:  # each part keeps plan order, and the whole plan's lanes
        order = [example_plan.items.index(i) for i in part.items]
        assert order == sorted(order)
        assert part.lanes == example_plan.lanes


def test_shard_by_case_keeps_each_case_in_one_shard(example_plan: Plan) -> None:
    for index in range(1, 4):
        part = select(example_plan, _spec(example_plan, index, 3, by="case"))
        mine = {i.id.case_id for i in part.items}
        whole = [i for i in example_plan.items if i.id.case_id in mine]
        assert list(part.items) == whole  # all of a case's trials (every condition) or none


@settings(max_examples=60, deadline=None)
@given(
    units=st.dictionaries(st.text(min_size=1, max_size=8), st.floats(0.5, 100), min_size=1, max_size=40),
    count=st.integers(1, 6),
)
def test_placement_does_not_depend_on_the_order_units_come_in(units: dict[str, float], count: int) -> None:
    backwards = dict(reversed(list(units.items())))
    assert place(units, count) == place(backwards, count)


@settings(max_examples=60, deadline=None)
@given(
    units=st.dictionaries(st.text(min_size=1, max_size=8), st.floats(0.5, 100), min_size=1, max_size=40),
    new=st.text(min_size=9, max_size=12),
    cost=st.floats(0.5, 100),
    count=st.integers(2, 6),
)
def test_without_balancing_adding_a_unit_moves_no_other(
    units: dict[str, float], new: str, cost: float, count: int
) -> None:
    # The hash alone (no cap: slack without bound) places each unit by its own key and the count.
    before = place(units, count, slack=float("inf"))
    after = place({**units, new: cost}, count, slack=float("inf"))
    assert {u: s for u, s in after.items() if u != new} == before


def test_balancing_keeps_every_shard_near_the_mean_cost(example_plan: Plan) -> None:
    costs = expected_costs(example_plan, str(REPO / "snapshots"))
    assert costs, "the example suite's committed snapshots give costs"
    for count in (2, 3, 4):
        totals = loads(example_plan, costs, count, "trial")
        mean = sum(totals) / count
        assert max(totals) <= (1 + SLACK) * mean + max(unit_costs(example_plan, "trial", costs).values())
        assert max(totals) / mean < 1 + SLACK + 0.02, totals


def test_balancing_is_better_than_the_hash_alone_on_the_example_suite(example_plan: Plan) -> None:
    costs = expected_costs(example_plan, str(REPO / "snapshots"))
    units = unit_costs(example_plan, "trial", costs)

    def spread(placed: dict[str, int]) -> float:
        totals = [0.0] * 3
        for unit, shard in placed.items():
            totals[shard] += units[unit]
        return max(totals) / (sum(totals) / 3)

    assert spread(place(units, 3)) < spread(place(units, 3, slack=float("inf")))


def test_adding_a_case_moves_few_other_trials(example_plan: Plan) -> None:
    # Drop one case and add it back: its trials come and go; the rest should mostly stay where they are.
    costs = expected_costs(example_plan, str(REPO / "snapshots"))
    dropped = example_plan.items[0].id.case_id
    smaller = msgspec.structs.replace(
        example_plan, items=tuple(i for i in example_plan.items if i.id.case_id != dropped)
    )
    before = place(unit_costs(smaller, "trial", costs), 3)
    after = place(unit_costs(example_plan, "trial", costs), 3)
    moved = [u for u in before if before[u] != after[u]]
    assert len(moved) <= len(before) // 4, (len(moved), len(before))


def test_expected_costs_come_from_the_snapshots_median_totals(example_plan: Plan, tmp_path: Path) -> None:
    costs = expected_costs(example_plan, str(REPO / "snapshots"))
    assert costs["prompt/adhoc-screenshot-bait/none/replay"] == 14038.0
    assert expected_costs(example_plan, str(tmp_path)) == {}  # no snapshots: every trial costs the same
    assert set(unit_costs(example_plan, "trial", {}).values()) == {1.0}


def test_a_trial_without_a_snapshot_costs_the_median_of_those_with_one(example_plan: Plan) -> None:
    first, second = example_plan.items[0], example_plan.items[-1]
    key = first.id.key.rsplit("/", 1)[0]
    units = unit_costs(example_plan, "trial", {key: 10.0, "other/x/y/z": 30.0})
    assert units[first.id.key] == 10.0
    assert units[second.id.key] == 20.0


def test_the_plan_fingerprint_covers_what_changes_results_only(example_plan: Plan) -> None:
    base = plan_fingerprint(example_plan, SETTINGS)
    assert base == plan_fingerprint(example_plan, {**SETTINGS, "keep_workspaces": True, "record": True})
    assert base != plan_fingerprint(example_plan, {**SETTINGS, "sandbox": "none"})
    assert base != plan_fingerprint(example_plan, {**SETTINGS, "replay_source": "codex/x"})
    assert base != plan_fingerprint(msgspec.structs.replace(example_plan, model="other"), SETTINGS)
    fewer = msgspec.structs.replace(example_plan, items=example_plan.items[1:])
    assert base != plan_fingerprint(fewer, SETTINGS)
    item = example_plan.items[0]
    changed = msgspec.structs.replace(item, id=msgspec.structs.replace(item.id, fingerprint="0" * 64))
    edited = msgspec.structs.replace(example_plan, items=(changed, *example_plan.items[1:]))
    assert base != plan_fingerprint(edited, SETTINGS)


def test_a_resumed_shard_refuses_a_plan_that_changed(example_plan: Plan, tmp_path: Path) -> None:
    spec = _spec(example_plan, 1, 2)
    assert shard_part(example_plan, spec, SETTINGS, tmp_path) == select(example_plan, spec)
    fewer = msgspec.structs.replace(example_plan, items=example_plan.items[1:])
    with pytest.raises(UsageError, match=r"shard 1/2 of plan .* but the suite now makes plan"):
        shard_part(fewer, spec, SETTINGS, tmp_path)


def test_adaptive_trials_shard_by_case() -> None:
    assert choose_by(None, adaptive=False) == "trial"
    assert choose_by(None, adaptive=True) == "case"
    assert choose_by("case", adaptive=True) == "case"
    with pytest.raises(UsageError, match="cannot split adaptive trials"):
        choose_by("trial", adaptive=True)
