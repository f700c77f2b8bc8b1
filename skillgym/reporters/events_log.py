"""The always-on event log: events.jsonl, one event per line, flushed per event; the source of truth."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from ..events import Event, event_encoder


class EventLogWriter:
    """Appends every event to ``<run-dir>/events.jsonl`` (append: a resumed run continues the log)."""

    name = "events"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: BinaryIO | None = None

    async def on_event(self, event: Event) -> None:
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("ab")
        self._file.write(event_encoder.encode(event) + b"\n")
        self._file.flush()

    async def finish(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
