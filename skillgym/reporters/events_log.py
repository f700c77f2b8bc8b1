"""The always-on event log: events.jsonl, one event per line; the source of truth.

Events are written and flushed in batches: whatever the bus delivered before its queue ran empty goes
out in one write, before the reporter waits for more, so nothing it has seen sits in memory while the
run goes on.
"""

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
        self._pending = bytearray()  # whole lines not yet written

    async def on_event(self, event: Event) -> None:
        try:
            line = event_encoder.encode(event)
        except Exception:
            self._write()  # the events before this one still reach the log
            raise
        self._pending += line
        self._pending += b"\n"

    async def flush(self) -> None:
        """Write and flush the lines gathered since the last flush (the bus calls this per batch)."""
        self._write()

    async def finish(self) -> None:
        self._write()
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self) -> None:
        if not self._pending:
            return
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("ab")
        self._file.write(self._pending)
        self._file.flush()
        self._pending.clear()
