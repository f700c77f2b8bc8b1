"""The reporter plug-in contract: what a reporter is built from, and how it receives the finished report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import msgspec
from rich.console import Console

from ..bus import Subscriber

if TYPE_CHECKING:
    from ..report import Report


class ReporterContext(msgspec.Struct, frozen=True, kw_only=True):
    """What a run offers its reporters: nothing here touches the disk until the run starts."""

    run_dir: Path
    console: Console
    output: str | None = None  # --reporter-output, for the reporter that writes a stream elsewhere
    baseline: Report | None = None  # --compare-baseline, already loaded


class ReporterPlugin(Protocol):
    """What ``@reporter`` registers: a class with a name, a one-line help and a factory.

    ``from_context`` raises ``UsageError`` when the command line lacks something the reporter needs, so
    flag mistakes stop the run before anything is written; it must not write files itself.
    """

    name: str
    help: str

    @classmethod
    def from_context(cls, context: ReporterContext) -> Subscriber: ...


@runtime_checkable
class ReportListener(Protocol):
    """A subscriber that also wants the finished report (an HTML page, a dashboard upload).

    ``on_report`` is awaited once, after report.json, report.md and report.html are written, before the
    run ends.
    """

    async def on_report(self, report: Report) -> None: ...
