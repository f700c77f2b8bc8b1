"""The budget's admission rule: estimates from the cell, the snapshots, any trial; unknown runs alone."""

from __future__ import annotations

import anyio
import pytest

from skillgym.cost.budget import BudgetGate, replace_budget
from skillgym.cost.model import RunBudget
from skillgym.cost.prices import Cost
from skillgym.errors import UsageError
from skillgym.plan import WorkItem
from skillgym.results import TrialResult
from skillgym.trace import TokenUsage
from tests.results import result_for


def _item(case: str, n: int) -> WorkItem:
    return WorkItem(id=_result(case, n, 0).id, model=None, workspace=None)


def _result(case: str, n: int, tokens: int | None, usd: float | None = None, **fields: object) -> TrialResult:
    return result_for(
        f"prompt/{case}/none/command/trial-{n}",
        usage=None if tokens is None else TokenUsage(input=tokens, output=0, total=tokens),
        cost=None if usd is None else Cost(usd=usd, source="cli"),
        **fields,
    )


@pytest.mark.anyio
async def test_the_next_trial_starts_only_while_its_estimate_fits() -> None:
    gate = BudgetGate(RunBudget(tokens=1000), [_result("a", 1, 300)], {})
    assert await gate.admit(_item("a", 2))  # 300 spent + 300 (this cell's most so far) fits
    assert await gate.admit(_item("a", 3))  # 300 spent + 300 running + 300 = 900 fits
    assert not await gate.admit(_item("a", 4))  # 300 + 600 running + 300 = 1200 does not
    assert gate.stop is not None and "900 tokens of the 1,000 tokens budget" in gate.stop


@pytest.mark.anyio
async def test_a_trial_that_could_exceed_the_budget_ends_the_run() -> None:
    gate = BudgetGate(RunBudget(tokens=1000), [_result("a", 1, 300), _result("a", 2, 400)], {})
    assert not await gate.admit(_item("a", 3))  # 700 spent + 400 (this cell's most) > 1000
    assert gate.stop is not None and "prompt/a/none/command/trial-3" in gate.stop
    assert not await gate.admit(_item("b", 1))  # once refused, nothing new starts
    stop = gate.outcome([_item("a", n) for n in (1, 2, 3)], [_result("a", 1, 300), _result("a", 2, 400)])
    assert stop is not None
    assert stop.spent_tokens == 700
    assert [(c.case_id, c.finished, c.planned) for c in stop.short] == [("a", 2, 3)]


@pytest.mark.anyio
async def test_estimates_come_from_the_cell_then_the_snapshots_then_any_trial() -> None:
    group_b = ("prompt", "b", "none", "command")
    gate = BudgetGate(RunBudget(tokens=1000), [_result("a", 1, 500)], {(group_b, "tokens"): 600.0})
    assert not await gate.admit(_item("b", 1))  # 500 + the snapshot's 600
    other = BudgetGate(RunBudget(tokens=1000), [_result("a", 1, 500)], {})
    assert await other.admit(_item("c", 1))  # 500 + the most any trial spent, 500: fits exactly


@pytest.mark.anyio
async def test_with_no_estimate_a_trial_waits_until_it_would_run_alone() -> None:
    gate = BudgetGate(RunBudget(tokens=10_000), [], {})
    assert await gate.admit(_item("a", 1))
    admitted: list[str] = []

    async def second() -> None:
        if await gate.admit(_item("b", 1)):
            admitted.append("b")

    async with anyio.create_task_group() as tg:
        tg.start_soon(second)
        await anyio.sleep(0.05)
        assert admitted == []  # the first trial's cost is unknown while it runs
        gate.finished(_result("a", 1, 100))
    assert admitted == ["b"]


@pytest.mark.anyio
async def test_a_trial_that_reports_no_spend_blinds_the_budget_and_stops_new_starts() -> None:
    gate = BudgetGate(RunBudget(usd=5.0), [], {})
    assert await gate.admit(_item("a", 1))
    gate.finished(_result("a", 1, 100))  # tokens, but no dollars
    assert not await gate.admit(_item("a", 2))
    assert gate.stop is not None and "reported no dollar cost" in gate.stop
    setup_failed = BudgetGate(RunBudget(usd=5.0), [], {})
    setup_failed.finished(_result("a", 1, None, status="errored", error_class="environment-error"))
    assert setup_failed.stop is None  # the agent never ran: nothing was spent


def test_a_resume_replaces_only_the_measures_given_again() -> None:
    recorded = {"usd": 1.0, "tokens": 500}
    assert replace_budget(recorded, 5.0, None) == RunBudget(usd=5.0, tokens=500)
    assert replace_budget(None, None, None) is None
    with pytest.raises(UsageError, match="more than 0"):
        RunBudget(usd=0.0)
