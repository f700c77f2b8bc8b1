"""The always-on final report: report.json, report.md and report.html, written atomically at the end."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from ..events import Event, RunFinish, RunStart, TrialFinish
from ..files import write_atomic
from ..judge.calibration import is_judge_note
from ..judge.pairwise import read_pairwise
from ..judge.report import with_pairwise
from ..report import Report, build_report, compare_to_baseline, render_markdown
from ..report.html import write_html
from ..results import TrialResult
from ..snapshots.model import SnapshotCheck
from .base import ReporterContext, ReportListener


def write_report(
    run_dir: Path, report: Report, results: Sequence[TrialResult] = (), *, suite_dir: str | None = None
) -> None:
    """Write report.json (sorted keys, stable bytes), report.md and report.html with its trial pages,
    with the run's pairwise.json, if any."""
    pairwise = read_pairwise(run_dir)
    if pairwise is not None:
        report = msgspec.structs.replace(report, judge=with_pairwise(report.judge, pairwise))
    doc = msgspec.json.encode(report, order="deterministic")
    # Bytes throughout: a large run's report.json is tens of megabytes, not worth decoding to re-encode.
    write_atomic(run_dir / "report.json", msgspec.json.format(doc, indent=2) + b"\n")
    write_atomic(run_dir / "report.md", render_markdown(report))
    write_html(run_dir, report, results, suite_dir=suite_dir)


class FinalReporter:
    """Collects trial results and writes the report on ``run.finish``; then hands it to the listeners.

    Always on, so not a reporter one names: ``--reporter final`` is refused (``build_reporters``).
    """

    name = "final"
    help = "report.json, report.md and report.html in the run directory (always on)"

    def __init__(
        self,
        run_dir: Path,
        *,
        baseline: Report | None = None,
        listeners: Sequence[ReportListener] = (),
    ) -> None:
        self.run_dir = run_dir
        self.baseline = baseline
        self.listeners = tuple(listeners)
        self.report: Report | None = None
        self._start: RunStart | None = None
        self._results: dict[str, TrialResult] = {}

    async def on_event(self, event: Event) -> None:
        if isinstance(event, RunStart):
            self._start = event
        elif isinstance(event, TrialFinish):
            self._results[event.result.id.key] = event.result
        elif isinstance(event, RunFinish) and self._start is not None:
            results = list(self._results.values())
            self.report = report_from(self._start, results, event, self.baseline)
            write_report(self.run_dir, self.report, results, suite_dir=self._start.suite_dir)
            for listener in self.listeners:
                await listener.on_report(self.report)

    async def finish(self) -> None:
        return None

    @classmethod
    def from_context(cls, context: ReporterContext) -> FinalReporter:
        return cls(context.run_dir, baseline=context.baseline)


def report_from(
    start: RunStart, results: list[TrialResult], finish: RunFinish | None, baseline: Report | None
) -> Report:
    """The one way a report is built, live or from the event log."""
    report = build_report(start, results, interrupted=finish is None or finish.interrupted)
    if baseline is not None:
        report = msgspec.structs.replace(report, baseline=compare_to_baseline(report, baseline))
    if finish is not None and isinstance(finish.snapshots, SnapshotCheck):
        report = msgspec.structs.replace(report, snapshots=finish.snapshots)
    if report.judge is not None and (notes := tuple(n for n in start.notes if is_judge_note(n))):
        report = msgspec.structs.replace(report, judge=msgspec.structs.replace(report.judge, notes=notes))
    if finish is not None and (finish.gates or finish.budget is not None):
        report = msgspec.structs.replace(report, gates=finish.gates, budget=finish.budget)
    return report
