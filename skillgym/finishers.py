"""The finisher seam: what the runner asks, once the trials are over, for its part of ``run.finish``.

A finisher is a bus subscriber with one more method, ``finish_run``. After the last trial the runner hands
every finisher among its subscribers the run's results and waits for its typed ``FinishPart`` (the token
section, the snapshot step's outcome, notes, and a gate), then posts ``run.finish`` carrying those parts,
with an exit code that already counts the gates. So the outcome lives in the event log (``skillgym report``
rebuilds the report from it alone), and the runner knows this protocol and never the finishers behind it
(the token snapshot step, ``skillgym.snapshots.step``, is one).

A subscriber that merely reacted to ``run.finish`` could not do this: by then the exit code is written, and
an event it posted afterwards would not be the log's last line. Nor does a finisher gather the results from
``trial.finish`` events: the bus delivers them in the subscriber's own time, while the runner holds them all
when it asks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, Protocol, TypeAlias, runtime_checkable

from .gates.model import GateResult
from .model import Data
from .results import TrialResult
from .snapshots.model import NoSnapshotStep, SnapshotOutcome
from .usage import TokenReport

# "fail": a run whose trials all passed fails (exit 1); "error": a configuration problem (exit 2).
Gate: TypeAlias = Literal["pass", "fail", "error"]
GATES: tuple[Gate, ...] = ("pass", "fail", "error")  # from mild to severe: the most severe one counts


class FinishPart(Data, frozen=True, kw_only=True):
    """A finisher's part of ``run.finish``: the fields it fills, and its gate on the run's exit code."""

    tokens: TokenReport | None = None
    snapshots: SnapshotOutcome = NoSnapshotStep()
    notes: tuple[str, ...] = ()  # what every reporter shows beside the counts (junit: a property each)
    gate: Gate = "pass"
    gates: tuple[GateResult, ...] = ()  # the run's CI gates, judged (see skillgym.gates)


@runtime_checkable
class Finisher(Protocol):
    """A subscriber the runner asks for its part of ``run.finish``; it never raises for a problem of its own
    (that is a ``gate="error"`` part saying what went wrong), since the trials' results stand."""

    async def finish_run(
        self, results: Sequence[TrialResult], *, run_id: str, interrupted: bool
    ) -> FinishPart: ...


def merge_parts(parts: Iterable[FinishPart]) -> FinishPart:
    """One part from several: the first token section and snapshot outcome, every note, the worst gate."""
    parts = list(parts)
    return FinishPart(
        tokens=next((p.tokens for p in parts if p.tokens is not None), None),
        snapshots=next(
            (p.snapshots for p in parts if not isinstance(p.snapshots, NoSnapshotStep)), NoSnapshotStep()
        ),
        notes=tuple(note for p in parts for note in p.notes),
        gate=max((p.gate for p in parts), key=GATES.index, default="pass"),
        gates=tuple(g for p in parts for g in p.gates),
    )


async def finish_parts(
    subscribers: Iterable[object], results: Sequence[TrialResult], *, run_id: str, interrupted: bool
) -> FinishPart:
    """Ask each finisher among ``subscribers``, in their order, for its part; merged into one."""
    return merge_parts(
        [
            await s.finish_run(results, run_id=run_id, interrupted=interrupted)
            for s in subscribers
            if isinstance(s, Finisher)
        ]
    )
