"""The always-on run notes: what the providers said at run start (what replay re-enacts), on stderr."""

from __future__ import annotations

from rich.console import Console

from ..events import Event, RunStart


class RunNotes:
    """Prints each note of ``run.start`` as one ``skillgym: note:`` line, before any trial's line."""

    name = "notes"

    def __init__(self, console: Console) -> None:
        self.console = console

    async def on_event(self, event: Event) -> None:
        if isinstance(event, RunStart):
            for note in event.notes:
                self.console.print(f"skillgym: note: {note}", markup=False, highlight=False)

    async def finish(self) -> None:
        return None
