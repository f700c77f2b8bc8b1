"""The snapshot step at the end of a run: a finisher that adds the token section and the check or update.

It is a subscriber on the bus that the runner asks, after the last trial, for its part of ``run.finish``
(the seam is ``skillgym.finishers``): the token section, then ``--snapshot-check``'s verdict or
``--snapshot-update``'s changes, as typed fields. The event log therefore holds the outcome, and the
report and the command line read it from there. It needs no event on the way: the runner hands it the
results.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import SkillgymError
from ..events import Event
from ..finishers import FinishPart
from ..model import Suite
from ..report.tokens import build_token_report, token_rows
from ..results import TrialResult
from .apply import check_rows, suite_budgets, suite_scope, update_rows
from .model import EntryCheck, SnapshotCheck, SnapshotFailure, SnapshotOptions, SnapshotUpdate


class SnapshotStep:
    """Token section always; with ``options``, the snapshot check or update of the run's results."""

    name = "snapshots"

    def __init__(self, suite: Suite, options: SnapshotOptions | None) -> None:
        self.suite = suite
        self.options = options

    async def on_event(self, event: Event) -> None:
        return None

    async def finish(self) -> None:
        return None

    async def finish_run(
        self, results: Sequence[TrialResult], *, run_id: str, interrupted: bool
    ) -> FinishPart:
        # On the loop: the work takes milliseconds, and a worker thread would hold up the end of the run
        # while the thread pool shuts down.
        return snapshot_part(results, self.suite, self.options, run_id=run_id, interrupted=interrupted)


def snapshot_part(
    results: Sequence[TrialResult],
    suite: Suite,
    options: SnapshotOptions | None,
    *,
    run_id: str,
    interrupted: bool,
) -> FinishPart:
    """The token section, and the snapshot step's outcome with its gate.

    Never raises for a snapshot file: one that cannot be read or written is a ``SnapshotFailure`` and the
    gate "error" (exit 2); the run's results stand. Only a regression under ``enforce`` fails the run.
    """
    tokens = build_token_report(results)
    if options is None:
        return FinishPart(tokens=tokens)
    try:
        outcome = _outcome(results, suite, options, run_id=run_id, interrupted=interrupted)
    except (SkillgymError, OSError) as exc:
        return FinishPart(
            tokens=tokens,
            snapshots=SnapshotFailure(message=str(exc)),
            notes=(f"token snapshots: {exc}",),
            gate="error",
        )
    if isinstance(outcome, SnapshotUpdate) or not outcome.regressions:
        return FinishPart(tokens=tokens, snapshots=outcome)
    return FinishPart(
        tokens=tokens,
        snapshots=outcome,
        # The notes are what every reporter shows (junit: a property each).
        notes=tuple(regression_note(r) for r in outcome.regressions),
        gate="fail" if outcome.enforce else "pass",
    )


def _outcome(
    results: Sequence[TrialResult],
    suite: Suite,
    options: SnapshotOptions,
    *,
    run_id: str,
    interrupted: bool,
) -> SnapshotCheck | SnapshotUpdate:
    rows = token_rows(results)
    if options.mode == "check":
        return check_rows(
            rows,
            directory=options.directory,
            threshold_percent=options.threshold_percent,
            enforce=options.enforce,
            budgets=suite_budgets(suite),
            scope=suite_scope(suite),
            notes=("the run was interrupted: only the trials that finished were compared",)
            if interrupted
            else (),
        )
    if interrupted:
        note = "not updated: the run was interrupted; resume it, then run `skillgym snapshots update`"
        return SnapshotUpdate(directory=options.directory, notes=(note,))
    return update_rows(rows, directory=options.directory, run_id=run_id, scope=suite_scope(suite))


def regression_note(row: EntryCheck) -> str:
    change = "from zero" if row.change_percent is None else f"{row.change_percent:+.1f}%"
    return (
        f"token regression: {row.label} ({row.provider}/{row.model}) median total {row.current_total:g} "
        f"vs {row.snapshot_total:g} per trial ({change}, threshold {row.threshold_percent:g}%)"
    )
