"""Console progress: a live view in a terminal, one plain line per meaningful event elsewhere."""

from __future__ import annotations

import os
import time
from collections import Counter

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from ..events import Counts, Event, LaneFinish, LaneStart, RunFinish, RunStart, TrialFinish, TrialStart
from ..plugins import reporter
from ..results import TrialResult
from .base import ReporterContext

# Plain mode says "still running" this often when nothing else happened, so CI logs show a pulse.
HEARTBEAT_S = 30.0
_STYLE = {"passed": "green", "failed": "red", "errored": "yellow"}
_LABEL = {"passed": "PASS", "failed": "FAIL", "errored": "ERROR"}


def _outcome_line(result: TrialResult) -> Text:
    label = _LABEL[result.status]
    text = Text()
    text.append(f"{label:<5}", style=_STYLE[result.status])
    text.append(f" {result.id.key}  {result.duration_s:.1f}s")
    if result.grade is not None:
        text.append(f"  score {result.grade.score:.2f}")
    if result.status == "errored":
        text.append(f"  {result.error_class}: {result.error_message or ''}")
    elif result.status == "failed" and result.grade is not None and result.grade.reasons:
        more = len(result.grade.reasons) - 1
        text.append(f"  {result.grade.reasons[0]}" + (f" (+{more} more)" if more else ""))
    for warning in result.warnings:  # not a failure, but nothing the user should have to dig for
        text.append("\n      warning: ", style="yellow")
        text.append(warning)
    return text


def summary_table(lanes: dict[str, Counts], total: Counts) -> Table:
    """The closing table, identical in live and plain mode."""
    table = Table(title="skillgym summary", title_justify="left", expand=False)
    for column in ("lane", "trials", "passed", "failed", "errored", "pass rate"):
        table.add_column(column, justify="left" if column == "lane" else "right")

    def row(name: str, c: Counts) -> list[str]:
        rate = f"{100 * c.passed / c.total:.0f}%" if c.total else "-"
        return [name, str(c.total), str(c.passed), str(c.failed), str(c.errored), rate]

    for lane, counts in lanes.items():
        table.add_row(*row(lane, counts))
    table.add_row(*row("all", total), style="bold")
    return table


class _Running:
    """The trials in flight with their elapsed time; rendered fresh on every refresh (the heartbeat)."""

    def __init__(self) -> None:
        self.started: dict[str, float] = {}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        now = time.monotonic()
        table = Table.grid(padding=(0, 2))
        for key, since in sorted(self.started.items(), key=lambda kv: kv[1])[:12]:
            table.add_row(Text("running", style="cyan"), Text(key), Text(f"{now - since:5.0f}s"))
        hidden = len(self.started) - 12
        if hidden > 0:
            table.add_row(Text(""), Text(f"... and {hidden} more"), Text(""))
        yield table


@reporter
class ConsoleReporter:
    """Progress on ``console``: rich decides whether that is a terminal (live) or a pipe (plain)."""

    name = "console"
    help = "live progress in a terminal, plain lines in a pipe (= --progress)"

    @classmethod
    def from_context(cls, context: ReporterContext) -> ConsoleReporter:
        return cls(context.console, report_path=str(context.run_dir / "report.md"))

    def __init__(
        self, console: Console, *, report_path: str | None = None, heartbeat_s: float = HEARTBEAT_S
    ) -> None:
        self.console = console
        self.heartbeat_s = heartbeat_s
        self.live_mode = console.is_terminal and not console.is_dumb_terminal
        self.report_path = report_path
        self._running = _Running()
        self._progress = Progress(
            TextColumn("{task.description:<10}"),
            BarColumn(),
            MofNCompleteColumn(),
            # The lane's tally so far: what a long run has found, before its summary.
            TextColumn(
                "[green]{task.fields[passed]} passed[/] [red]{task.fields[failed]} failed[/] "
                "[yellow]{task.fields[errored]} errored[/]"
            ),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
        )
        self._tasks: dict[str, TaskID] = {}
        self._live: Live | None = None
        self._lanes: dict[str, Counter[str]] = {}
        self._last_line = time.monotonic()
        self._done = 0
        self._total = 0
        self._started: float | None = None
        self._warned = 0  # trials that finished with warnings

    async def on_event(self, event: Event) -> None:
        if isinstance(event, RunStart):
            self._total = event.total_trials
            self._started = time.monotonic()
            self._say(
                f"skillgym run {event.run_id}: "
                + ("at most " if event.settings.get("auto") else "")  # adaptive: cells stop once settled
                + f"{event.total_trials} trials; lanes {', '.join(event.lanes)}; "
                f"conditions {', '.join(event.conditions)}; providers {', '.join(event.providers)}"
                + (" (resumed)" if event.resumed else "")
            )
            if self.live_mode:
                self._live = Live(
                    Group(self._progress, self._running),
                    console=self.console,
                    refresh_per_second=4,
                    transient=True,
                )
                self._live.start()
        elif isinstance(event, LaneStart):
            self._lanes.setdefault(event.lane, Counter())
            self._tasks[event.lane] = self._progress.add_task(
                event.lane, total=event.total_trials, passed=0, failed=0, errored=0
            )
        elif isinstance(event, TrialStart):
            self._running.started[event.id.key] = time.monotonic()
        elif isinstance(event, TrialFinish):
            result = event.result
            self._running.started.pop(result.id.key, None)
            self._lanes.setdefault(result.id.lane, Counter())[result.status] += 1
            self._done += 1
            self._warned += bool(result.warnings)
            if result.id.lane in self._tasks:
                tally = self._lanes[result.id.lane]
                self._progress.update(
                    self._tasks[result.id.lane],
                    advance=1,
                    passed=tally["passed"],
                    failed=tally["failed"],
                    errored=tally["errored"],
                )
            self._emit(_outcome_line(result))
        elif isinstance(event, LaneFinish):
            c = event.counts
            self._say(
                f"lane {event.lane}: {c.passed} passed, {c.failed} failed, {c.errored} errored of {c.total}"
            )
        elif isinstance(event, RunFinish):
            self._stop_live()
            lanes = {
                lane: Counts(
                    total=sum(t.values()), passed=t["passed"], failed=t["failed"], errored=t["errored"]
                )
                for lane, t in self._lanes.items()
            }
            self.console.print(summary_table(lanes, event.counts))
            if self._warned:
                self._say(
                    f"{self._warned} trial(s) finished with warnings "
                    "(shown above, and under Warnings in report.md)"
                )
            if event.interrupted:
                run_dir = os.path.dirname(self.report_path) if self.report_path else "RUN_DIR"
                self._say(
                    f"interrupted: finished trials are kept; continue with skillgym run --resume {run_dir}"
                )
            if self.report_path:
                self._say(f"report: {self.report_path}")

    async def finish(self) -> None:
        self._stop_live()

    async def tick(self) -> None:
        """Called by the bus when no event came for a while: plain mode prints a heartbeat line."""
        if self.live_mode or not self._running.started:
            return
        if time.monotonic() - self._last_line >= self.heartbeat_s:
            oldest = max(time.monotonic() - t for t in self._running.started.values())
            tally = sum(self._lanes.values(), Counter())
            counts = f"{tally['passed']} passed, {tally['failed']} failed, {tally['errored']} errored"
            self._say(
                f"... {len(self._running.started)} running, {self._done}/{self._total} done ({counts})"
                f"{self._eta()}, longest running {oldest:.0f}s"
            )

    def _eta(self) -> str:
        """``, about Ns left`` from the pace of the trials done so far; empty before there is a pace."""
        if not self._done or self._started is None or self._done >= self._total:
            return ""
        per_trial = (time.monotonic() - self._started) / self._done
        return f", about {per_trial * (self._total - self._done):.0f}s left"

    def _emit(self, text: Text) -> None:
        self._last_line = time.monotonic()
        self.console.print(text, soft_wrap=True, highlight=False)

    def _say(self, line: str) -> None:
        self._emit(Text(line))

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
