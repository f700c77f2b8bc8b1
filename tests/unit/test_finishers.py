"""The finisher seam: parts merge, a gate reaches run.finish and the exit code, the runner stays blind."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from skillgym.eventlog import read_run_log
from skillgym.events import Event
from skillgym.finishers import FinishPart, Gate, merge_parts
from skillgym.loader import load_suite
from skillgym.plan import build_plan
from skillgym.reporters.events_log import EventLogWriter
from skillgym.results import TrialResult
from skillgym.runner import RunOptions, execute
from skillgym.snapshots.model import NoSnapshotStep, SnapshotFailure, SnapshotUpdate
from skillgym.usage import TokenReport, TokenTotals
from tests.conftest import REPO, write_suite

CASES = """
from skillgym import prompt_case

for name in ("one", "two"):
    with prompt_case(name) as c:
        c.category("trigger")
        c.prompt("answer")
        c.expect_skill(None)
"""


def _tokens(total: int) -> TokenReport:
    return TokenReport(totals=TokenTotals(trials=1, missing=0, total=total), lanes=(), rows=())


def test_parts_merge_to_the_first_section_and_outcome_every_note_and_the_worst_gate() -> None:
    update = SnapshotUpdate(directory="snapshots")
    merged = merge_parts(
        [
            FinishPart(notes=("a",)),
            FinishPart(tokens=_tokens(5), snapshots=update, notes=("b",), gate="fail"),
            FinishPart(tokens=_tokens(9), snapshots=SnapshotFailure(message="x"), gate="pass"),
        ]
    )
    assert merged == FinishPart(tokens=_tokens(5), snapshots=update, notes=("a", "b"), gate="fail")
    assert merge_parts([FinishPart(gate="fail"), FinishPart(gate="error")]).gate == "error"
    assert merge_parts([]) == FinishPart(tokens=None, snapshots=NoSnapshotStep(), notes=(), gate="pass")


class Gatekeeper:
    """A finisher on the bus: counts the results it is handed and answers with a fixed gate."""

    name = "gatekeeper"

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self.asked: list[tuple[int, str, bool]] = []

    async def on_event(self, event: Event) -> None:
        return None

    async def finish(self) -> None:
        return None

    async def finish_run(
        self, results: Sequence[TrialResult], *, run_id: str, interrupted: bool
    ) -> FinishPart:
        self.asked.append((len(results), run_id, interrupted))
        return FinishPart(notes=(f"gate {self.gate}",), gate=self.gate)


@pytest.mark.parametrize(("gate", "code"), [("pass", 0), ("fail", 1), ("error", 2)])
def test_a_finishers_gate_is_the_exit_code_run_finish_carries(tmp_path: Path, gate: Gate, code: int) -> None:
    write_suite(tmp_path / "evals", {"cases.py": CASES, "stubs/one.md": "fine", "stubs/two.md": "fine"})
    suite = load_suite(tmp_path / "evals")
    plan = build_plan(suite, providers=("stub",), conditions=("none",))
    options = RunOptions(output=str(tmp_path / "runs"), run_id="r1")
    run_dir = tmp_path / "runs" / "r1"
    keeper = Gatekeeper(gate)
    subscribers = [EventLogWriter(run_dir / "events.jsonl"), keeper]
    outcome = anyio.run(lambda: execute(plan, suite, options, subscribers, run_dir=run_dir))
    assert outcome.counts.passed == 2
    assert keeper.asked == [(2, "r1", False)]
    assert outcome.exit_code == outcome.finish.exit_code == code
    finish = read_run_log(run_dir).finish
    assert finish is not None
    assert (finish.exit_code, finish.notes) == (code, (f"gate {gate}",))


def _imported(module: Path) -> set[str]:
    """Every module that ``module`` (a file of the skillgym package) imports, relative imports resolved."""
    package = module.parent.relative_to(REPO).parts
    names: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            names.add(".".join([*base, *([node.module] if node.module else [])]))
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_runner_does_not_import_snapshots() -> None:
    imported = _imported(REPO / "skillgym" / "runner.py")
    assert "skillgym.finishers" in imported
    assert not [name for name in imported if name.startswith("skillgym.snapshots")]


def test_the_snapshot_command_does_not_import_the_command_line() -> None:
    assert "skillgym.cli" not in _imported(REPO / "skillgym" / "snapshots" / "commands.py")
    code = "import sys, skillgym.snapshots.commands; print('skillgym.cli' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"
