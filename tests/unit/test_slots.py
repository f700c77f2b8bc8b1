"""AgentSlots: --concurrency for the agent phase of trials."""

from __future__ import annotations

import anyio
import pytest

from skillgym.slots import AgentSlots


def test_at_least_one_slot() -> None:
    with pytest.raises(ValueError, match="concurrency must be at least 1, got 0"):
        AgentSlots(0)


@pytest.mark.anyio
async def test_filled_is_set_once_every_slot_is_taken() -> None:
    slots = AgentSlots(2)
    seen: list[bool] = []
    release = anyio.Event()

    async def agent() -> None:
        await slots.take()
        seen.append(slots.filled.is_set())
        await release.wait()
        slots.give()

    async with anyio.create_task_group() as tg:
        tg.start_soon(agent)
        tg.start_soon(agent)
        await slots.filled.wait()
        release.set()
    assert seen == [False, True]


@pytest.mark.anyio
async def test_a_free_slot_does_not_let_other_tasks_run_first() -> None:
    slots = AgentSlots(1)
    ran: list[str] = []

    async def other() -> None:
        ran.append("other")

    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        await slots.take()
        ran.append("taken")
    slots.give()
    assert ran == ["taken", "other"]


@pytest.mark.anyio
async def test_taking_waits_for_a_slot_to_be_given_back_and_says_how_long() -> None:
    slots = AgentSlots(1)
    order: list[str] = []
    waits: list[float] = []

    async def second() -> None:
        waits.append(await slots.take())
        order.append("second takes")
        slots.give()

    waits.append(await slots.take())
    async with anyio.create_task_group() as tg:
        tg.start_soon(second)
        await anyio.sleep(0.2)
        order.append("first gives")
        slots.give()
    assert order == ["first gives", "second takes"]
    assert waits[0] == 0.0  # a free slot: exactly nothing, not a few microseconds
    assert 0.15 < waits[1] < 5.0
