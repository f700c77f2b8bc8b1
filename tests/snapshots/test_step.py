"""The snapshot step at the end of a run: its part of run.finish for each mode, interrupted or not."""

from __future__ import annotations

import anyio

from skillgym.eventlog import read_run_log
from skillgym.finishers import Finisher, FinishPart
from skillgym.loader import load_suite
from skillgym.model import Suite
from skillgym.results import TrialResult
from skillgym.snapshots.model import (
    NoSnapshotStep,
    SnapshotCheck,
    SnapshotFailure,
    SnapshotOptions,
    SnapshotUpdate,
)
from skillgym.snapshots.step import SnapshotStep, snapshot_part
from tests.snapshots.support import Project, case_source


def _measured(project: Project, **totals: int) -> tuple[Suite, tuple[TrialResult, ...]]:
    """A real run's suite and results (the command agent reports ``totals``)."""
    project.cases(*(case_source(name) for name in totals))
    project.tokens(**totals)
    assert project.run().returncode == 0
    return load_suite(project.root / "evals"), read_run_log(project.latest()).results


def _options(project: Project, mode: str, *, enforce: bool = False) -> SnapshotOptions:
    return SnapshotOptions(mode=mode, directory=str(project.root / "snapshots"), enforce=enforce)  # type: ignore[arg-type]


def test_without_options_the_part_is_the_token_section_only(project: Project) -> None:
    suite, results = _measured(project, calm=100)
    part = snapshot_part(results, suite, None, run_id="r", interrupted=False)
    assert part.tokens is not None and part.tokens.totals.total == 100
    assert (part.snapshots, part.notes, part.gate) == (NoSnapshotStep(), (), "pass")


def test_update_then_a_regression_passes_unless_enforced(project: Project) -> None:
    suite, results = _measured(project, calm=100)
    update = snapshot_part(results, suite, _options(project, "update"), run_id="r1", interrupted=False)
    assert isinstance(update.snapshots, SnapshotUpdate)
    assert (update.snapshots.files[0].new, update.gate) == (1, "pass")
    assert project.snapshot.exists()
    suite, results = _measured(project, calm=200)
    for enforce, gate in ((False, "pass"), (True, "fail")):
        options = _options(project, "check", enforce=enforce)
        part = snapshot_part(results, suite, options, run_id="r2", interrupted=False)
        assert isinstance(part.snapshots, SnapshotCheck)
        assert part.snapshots.counts == {"regressed": 1}
        assert part.gate == gate
        assert part.notes == (
            "token regression: prompt/calm/none (command/default) median total 200 vs 100 per trial "
            "(+100.0%, threshold 20%)",
        )


def test_an_interrupted_run_is_compared_but_never_written(project: Project) -> None:
    suite, results = _measured(project, calm=100)
    part = snapshot_part(results, suite, _options(project, "update"), run_id="r", interrupted=True)
    assert part.snapshots == SnapshotUpdate(
        directory=str(project.root / "snapshots"),
        notes=("not updated: the run was interrupted; resume it, then run `skillgym snapshots update`",),
    )
    assert not project.snapshot.exists()
    part = snapshot_part(results, suite, _options(project, "check"), run_id="r", interrupted=True)
    assert isinstance(part.snapshots, SnapshotCheck)
    assert part.snapshots.notes == ("the run was interrupted: only the trials that finished were compared",)


def test_a_broken_snapshot_file_is_a_failure_part_and_never_raises(project: Project) -> None:
    suite, results = _measured(project, calm=100)
    project.snapshot.parent.mkdir(parents=True)
    project.snapshot.write_text("schema = 1\n[[entry]\n")
    for mode in ("check", "update"):
        part = snapshot_part(results, suite, _options(project, mode), run_id="r", interrupted=False)
        assert isinstance(part.snapshots, SnapshotFailure)
        assert "default.toml:2: not valid TOML" in part.snapshots.message
        assert part.notes == (f"token snapshots: {part.snapshots.message}",)
        assert (part.gate, part.tokens is not None) == ("error", True)
    assert project.snapshot.read_text() == "schema = 1\n[[entry]\n"


def test_the_step_is_a_finisher_on_the_bus(project: Project) -> None:
    suite, results = _measured(project, calm=100)
    step = SnapshotStep(suite, _options(project, "check"))
    assert isinstance(step, Finisher)

    async def ask() -> FinishPart:
        return await step.finish_run(results, run_id="r", interrupted=False)

    part = anyio.run(ask)
    assert part == snapshot_part(results, suite, step.options, run_id="r", interrupted=False)
    assert isinstance(part.snapshots, SnapshotCheck) and part.snapshots.counts == {"new": 1}
