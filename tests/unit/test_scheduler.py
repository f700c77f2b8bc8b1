"""The adaptive schedule: cells stop once settled, advance without waiting for rounds, and resume."""

from __future__ import annotations

import random
from pathlib import Path

import anyio
import pytest

from skillgym.loader import load_suite
from skillgym.model import TrialPolicy
from skillgym.plan import Plan, WorkItem, build_plan
from skillgym.results import TrialResult
from skillgym.scheduler import AdaptiveSchedule, FixedSchedule, lift_pairs, questions
from tests.conftest import write_suite
from tests.results import result_for

SUITE = {
    "suite.py": "from skillgym import skill\nskill('waiting', 'skills/waiting')\n",
    "skills/waiting/SKILL.md": "---\nname: waiting\ndescription: wait\n---\nPoll.\n",
    "cases.py": """
        from skillgym import prompt_case

        for name in ("a", "b"):
            with prompt_case(name) as c:
                c.category("trigger")
                c.prompt("wait for the server")
                c.expect_skill(None)
    """,
}
RATES = {"none": 0.0, "preloaded": 1.0, "self-load": 0.5}


def _plan(tmp_path: Path, conditions: tuple[str, ...] = ("none", "preloaded"), most: int = 12) -> Plan:
    suite = load_suite(write_suite(tmp_path / "evals", SUITE))
    policy = TrialPolicy(auto=True, min_trials=3, max_trials=most)
    return build_plan(suite, conditions=conditions, providers=("stub",), trials=policy)


def _result(item: WorkItem, rng: random.Random) -> TrialResult:
    passed = rng.random() < RATES[item.id.condition]
    return result_for(item.id.key, "passed" if passed else "failed")


async def _drive(schedule: AdaptiveSchedule, slots: int, seed: int) -> list[WorkItem]:
    """Run the schedule with ``slots`` concurrent workers whose trials finish in a random order."""
    rng, started = random.Random(seed), []

    async def worker() -> None:
        while (item := await schedule.next()) is not None:
            started.append(item)
            await anyio.sleep(rng.random() / 1000)
            schedule.finished(_result(item, rng))

    async with anyio.create_task_group() as tg:
        for _ in range(slots):
            tg.start_soon(worker)
    return started


@pytest.mark.anyio
async def test_a_decided_lift_stops_both_cells_early_with_stable_indices(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    started = await _drive(AdaptiveSchedule(plan, plan.items, (), slots=4), slots=4, seed=1)
    per_cell: dict[tuple[str, ...], list[int]] = {}
    for item in started:
        per_cell.setdefault(item.id.group, []).append(item.id.trial)
    assert len(per_cell) == 4
    for trials in per_cell.values():
        # Always pass against never pass: decided after 7 pairs, plus the few trials already started.
        assert 7 <= len(trials) < 12
        assert sorted(trials) == list(range(1, len(trials) + 1))  # the plan's keys, no gap


@pytest.mark.anyio
async def test_cells_do_not_wait_for_a_round_to_finish(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    schedule = AdaptiveSchedule(plan, plan.items, (), slots=1)
    first = await schedule.next()
    assert first is not None
    # With one trial of cell 1 still running, the other cells still get theirs.
    others = [await schedule.next() for _ in range(3)]
    assert {i.id.group for i in others if i is not None} | {first.id.group} == {
        i.id.group for i in plan.items
    }


@pytest.mark.anyio
async def test_resumed_results_feed_the_sequences_and_settle_cells(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    done = [
        result_for(i.id.key, "passed" if i.id.condition == "preloaded" else "failed")
        for i in plan.items
        if i.id.trial <= 9
    ]
    todo = [i for i in plan.items if i.id.trial > 9]
    schedule = AdaptiveSchedule(plan, todo, done, slots=2)
    assert len(schedule.settled_unstarted()) == len(todo)  # decided by the kept trials alone
    assert await schedule.next() is None


def test_questions_pair_the_report_lifts_and_a_lone_condition_asks_its_rate(tmp_path: Path) -> None:
    every = ("none", "self-load", "preloaded", "stale", "x", "x~aa")
    assert lift_pairs(every) == [
        ("self-load", "none"),
        ("preloaded", "none"),
        ("none", "stale"),
        ("x~aa", "x"),
    ]
    plan = _plan(tmp_path, conditions=("none", "preloaded", "self-load"))
    cells = {i.id.group for i in plan.items}
    names = {q.name for q in questions(cells, plan.conditions, 0.5)}
    assert names == {"self-load vs none", "preloaded vs none"}
    lone = questions({("prompt", "a", "none", "stub")}, ("none",), 0.7)
    assert [q.name for q in lone] == ["pass rate vs 0.7"]


@pytest.mark.anyio
async def test_the_fixed_schedule_runs_every_item_in_order(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    schedule = FixedSchedule(plan.items)
    got = [await schedule.next() for _ in plan.items]
    assert got == list(plan.items) and await schedule.next() is None
