"""Which trial runs next: every planned one (fixed trials), or only those an open verdict still needs.

An adaptive case x condition x provider (a cell) takes part in questions: a paired lift with another
condition of the same case and provider (the report's lifts, and an A/A pair), or, when it is in none,
"is its pass rate above or below the decision threshold?". Each question is settled by
``skillgym.sequential.decide`` over the trials that finished, taken in trial order; a cell gets its next
trial while any of its questions is open. Cells advance independently (a round of one trial per cell, and
more per cell when agent slots would otherwise idle), so no cell waits for another's round to end.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

import anyio

from .identity import Group
from .model import Data, TrialPolicy
from .plan import Plan, WorkItem
from .results import NOT_THE_AGENTS, TrialResult
from .sequential import Decision, decide

AA_SUFFIX = "~aa"


class Question(Data, frozen=True, kw_only=True):
    """What an adaptive cell's trials are for: a paired lift of two cells, or one cell's pass rate."""

    cells: tuple[Group, ...]  # (treatment, control) for a lift; (cell,) for a pass rate
    name: str  # how the report names it: "self-load vs none", "pass rate vs 0.5"


def lift_pairs(conditions: Sequence[str]) -> list[tuple[str, str]]:
    """The (treatment, control) condition pairs the report compares, among ``conditions``.

    The report's lifts (self-load vs none, preloaded vs none, none vs stale), then every A/A pair
    (``C~aa`` vs ``C``).
    """
    from .report.aggregate import LIFTS  # the report owns which lifts exist

    pairs = [(lift.treatment, lift.control) for lift in LIFTS]
    pairs += [(c, c.removesuffix(AA_SUFFIX)) for c in conditions if c.endswith(AA_SUFFIX)]
    return [(t, c) for t, c in pairs if t in conditions and c in conditions]


def questions(groups: Iterable[Group], conditions: Sequence[str], threshold: float) -> list[Question]:
    """The questions of the adaptive cells ``groups``: their lifts, and a pass rate for a cell in none."""
    present = set(groups)
    out: list[Question] = []
    paired: set[Group] = set()
    for lane, case_id, _, provider in sorted({(g[0], g[1], "", g[3]) for g in present}):
        for treatment, control in lift_pairs(conditions):
            t, c = (lane, case_id, treatment, provider), (lane, case_id, control, provider)
            if t in present and c in present:
                out.append(Question(cells=(t, c), name=f"{treatment} vs {control}"))
                paired.update((t, c))
    out += [Question(cells=(g,), name=f"pass rate vs {threshold:g}") for g in present - paired]
    return sorted(out, key=lambda q: q.cells)


def outcome(result: TrialResult) -> float | None:
    """A trial's outcome for the verdicts: 1 passed, 0 failed (timeouts and provider errors too); None
    for an error not the agent's (NOT_THE_AGENTS), which says nothing about the case."""
    if result.status == "errored" and result.error_class in NOT_THE_AGENTS:
        return None
    return 1.0 if result.status == "passed" else 0.0


def settle(
    question: Question,
    outcomes: dict[Group, dict[int, float | None]],
    policy: TrialPolicy,
    threshold: float,
    *,
    upto: dict[Group, int] | None = None,
    with_interval: bool = False,
) -> Decision:
    """The question's decision over the cells' outcomes in trial order (up to ``upto[cell]`` when given)."""

    def series(cell: Group) -> dict[int, float | None]:
        got = outcomes.get(cell, {})
        last = upto.get(cell) if upto is not None else None
        return got if last is None else {i: v for i, v in got.items() if i <= last}

    if len(question.cells) == 1:
        xs = [v for _, v in sorted(series(question.cells[0]).items()) if v is not None]
        return decide(
            xs,
            threshold,
            most=policy.max_trials,
            least=policy.min_trials,
            with_interval=with_interval,
            futility=policy.futility,
        )
    treated, control = (series(cell) for cell in question.cells)
    diffs = [
        t - c
        for i in sorted(set(treated) & set(control))
        if (t := treated[i]) is not None and (c := control[i]) is not None
    ]
    return decide(
        diffs,
        0.0,
        most=policy.max_trials,
        least=policy.min_trials,
        paired=True,
        with_interval=with_interval,
        futility=policy.futility,
    )


class FixedSchedule:
    """Every planned trial, in plan order."""

    def __init__(self, todo: Sequence[WorkItem]) -> None:
        self._pending = iter(todo)

    async def next(self) -> WorkItem | None:
        return next(self._pending, None)

    def finished(self, result: TrialResult) -> list[WorkItem]:
        """Note a finished trial; the planned trials that will not run now (never any here)."""
        return []

    def settled_unstarted(self) -> list[WorkItem]:
        """Planned trials that will never run (none here)."""
        return []


class AdaptiveSchedule:
    """Fixed cells' trials first, then the next trial of an adaptive cell with an open question.

    ``done`` (a resumed run's results) feeds the questions before anything runs. A cell's next trial is
    its lowest index not yet started, so trial keys are those of the plan and a resume fills gaps. A cell's
    first min_trials start at once; past them it may run ahead of its finished trials by one trial, or more
    when there are fewer open cells than agent slots: trials already started when its question settles
    still finish and count.
    """

    def __init__(self, plan: Plan, todo: Sequence[WorkItem], done: Sequence[TrialResult], slots: int) -> None:
        self._plan = plan
        self._slots = max(1, slots)
        self._fixed = iter([i for i in todo if i.id.case_id not in plan.auto])
        self._items: dict[Group, dict[int, WorkItem]] = defaultdict(dict)
        for item in todo:
            if item.id.case_id in plan.auto:
                self._items[item.id.group][item.id.trial] = item
        self._outcomes: dict[Group, dict[int, float | None]] = defaultdict(dict)
        self._started: dict[Group, set[int]] = defaultdict(set)
        cells = {i.id.group for i in plan.items if i.id.case_id in plan.auto}
        self._questions = questions(cells, plan.conditions, plan.decision_threshold)
        self._of: dict[Group, list[Question]] = defaultdict(list)
        for q in self._questions:
            for cell in q.cells:
                self._of[cell].append(q)
        self._open = set(self._questions)
        self._changed = anyio.Event()
        self._running = 0
        for prior in done:
            if prior.id.group in cells:
                self._started[prior.id.group].add(prior.id.trial)
                self._outcomes[prior.id.group][prior.id.trial] = outcome(prior)
        for q in list(self._open):
            self._recheck(q)

    async def next(self) -> WorkItem | None:
        """The next trial to run; waits while only running trials can open more; None when all is done."""
        if (item := next(self._fixed, None)) is not None:
            return self._start(item)
        while True:
            item = self._ready()
            if item is not None:
                return self._start(item)
            if self._running == 0:
                return None
            self._changed = event = anyio.Event() if self._changed.is_set() else self._changed
            await event.wait()

    def finished(self, result: TrialResult) -> list[WorkItem]:
        """Feed a finished trial to its questions; the planned trials that will now never run."""
        self._running -= 1
        cell = result.id.group
        dropped: list[WorkItem] = []
        if cell in self._of:
            self._outcomes[cell][result.id.trial] = outcome(result)
            for q in self._of[cell]:
                if q in self._open:
                    self._recheck(q)
            for other in {c for q in self._of[cell] for c in q.cells}:
                if not self._needed(other):
                    dropped += self._drop(other)
        self._changed.set()
        return dropped

    def settled_unstarted(self) -> list[WorkItem]:
        """Trials of cells settled before anything ran (by a resumed run's results): never run."""
        return [item for cell in list(self._items) if not self._needed(cell) for item in self._drop(cell)]

    def _start(self, item: WorkItem) -> WorkItem:
        self._running += 1
        self._started[item.id.group].add(item.id.trial)
        self._items.get(item.id.group, {}).pop(item.id.trial, None)
        return item

    def _ready(self) -> WorkItem | None:
        open_cells = [cell for cell in self._items if self._needed(cell) and self._items[cell]]
        if not open_cells:
            return None
        ahead = max(1, math.ceil(self._slots / len(open_cells)))
        best: tuple[int, Group] | None = None
        for cell in open_cells:
            # The first min_trials run whatever they show: they need not wait for one another.
            reach = max(self._plan.auto[cell[1]].min_trials, self._prefix(cell) + ahead)
            index = min(self._items[cell])
            if index <= reach and (best is None or (index, cell) < best):
                best = (index, cell)
        return None if best is None else self._items[best[1]][best[0]]

    def _prefix(self, cell: Group) -> int:
        """How many of the cell's trials finished without a gap from trial 1."""
        got = self._outcomes.get(cell, {})
        n = 0
        while n + 1 in got:
            n += 1
        return n

    def _needed(self, cell: Group) -> bool:
        return any(q in self._open for q in self._of.get(cell, ()))

    def _recheck(self, q: Question) -> None:
        # Only the gap-free prefix of each cell: the order of a sequence's observations is the trial
        # order, fixed in advance, never the order in which concurrent trials happened to finish.
        upto = {cell: self._prefix(cell) for cell in q.cells}
        policy = self._plan.auto[q.cells[0][1]]
        if settle(q, self._outcomes, policy, self._plan.decision_threshold, upto=upto).settled:
            self._open.discard(q)

    def _drop(self, cell: Group) -> list[WorkItem]:
        left = self._items.pop(cell, {})
        return [left[i] for i in sorted(left)]


Schedule = FixedSchedule | AdaptiveSchedule


def make_schedule(plan: Plan, todo: Sequence[WorkItem], done: Sequence[TrialResult], slots: int) -> Schedule:
    """The adaptive schedule when some case has adaptive trials, else every planned trial."""
    return AdaptiveSchedule(plan, todo, done, slots) if plan.auto else FixedSchedule(todo)
