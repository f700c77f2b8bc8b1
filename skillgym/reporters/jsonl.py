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
        if context.output != "-":
            _check_writable_file(Path(context.output))
        return cls(context.output)

    def __init__(self, path: str) -> None:
        self.path = path
        self._file: BinaryIO | None = None
        self._owned = path != "-"

    async def on_event(self, event: Event) -> None:
        if self._file is None:
            if self._owned:
                self._file = Path(self.path).open("wb")  # noqa: SIM115 - open for the whole run
            else:
                self._file = sys.stdout.buffer
        self._file.write(event_encoder.encode(event) + b"\n")
        self._file.flush()

    async def finish(self) -> None:
        if self._file is not None and self._owned:
            self._file.close()
        self._file = None


def _check_writable_file(path: Path) -> None:
    """Refuse, before the run, an output the first event could not be written to."""
    if path.is_dir():
        raise UsageError(
            f"--reporter-output {path} is a directory; the jsonl reporter writes one file: "
            f"name a file, for example {path / 'events.jsonl'}"
        )
    if not path.parent.is_dir():
        raise UsageError(
            f"--reporter-output {path}: the folder {path.parent} does not exist; "
            "create it first or fix the path"
        )
