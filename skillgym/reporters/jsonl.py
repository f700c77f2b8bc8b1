"""An extra copy of the event stream, to a file or stdout, for tools that follow a run live."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO

from ..errors import UsageError
from ..events import Event, event_encoder
from ..plugins import reporter
from .base import ReporterContext


@reporter
class JsonlReporter:
    """Writes every event as one JSON line to ``path`` (``-`` for stdout), flushed per event."""

    name = "jsonl"
    help = "every event as a JSON line at --reporter-output PATH (- for stdout)"

    @classmethod
    def from_context(cls, context: ReporterContext) -> JsonlReporter:
        if context.output is None:
            raise UsageError("--reporter jsonl needs --reporter-output PATH (or - for stdout)")
        return cls(context.output)

    def __init__(self, path: str) -> None:
        self.path = path
        self._file: BinaryIO | None = None
        self._owned = path != "-"

    async def on_event(self, event: Event) -> None:
        if self._file is None:
            if self._owned:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                self._file = Path(self.path).open("wb")  # noqa: SIM115 - open for the whole run
            else:
                self._file = sys.stdout.buffer
        self._file.write(event_encoder.encode(event) + b"\n")
        self._file.flush()

    async def finish(self) -> None:
        if self._file is not None and self._owned:
            self._file.close()
        self._file = None
