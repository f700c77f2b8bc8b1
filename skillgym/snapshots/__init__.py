"""Token snapshots: per-case token baselines in ``snapshots/<provider>/<model>.toml``, checked and updated.

The package itself stays light (schema and files), so the command line can import it cheaply; checking
and updating from results live in ``skillgym.snapshots.apply``, statuses in ``skillgym.snapshots.compare``,
the step at the end of a run in ``skillgym.snapshots.step``.
"""

from __future__ import annotations

from .model import SNAPSHOT_SCHEMA as SNAPSHOT_SCHEMA
from .model import EntryCheck as EntryCheck
from .model import Figures as Figures
from .model import FileUpdate as FileUpdate
from .model import NoSnapshotStep as NoSnapshotStep
from .model import SnapshotCheck as SnapshotCheck
from .model import SnapshotEntry as SnapshotEntry
from .model import SnapshotFailure as SnapshotFailure
from .model import SnapshotFile as SnapshotFile
from .model import SnapshotOptions as SnapshotOptions
from .model import SnapshotOutcome as SnapshotOutcome
from .model import SnapshotStatus as SnapshotStatus
from .model import SnapshotUpdate as SnapshotUpdate
from .store import SnapshotError as SnapshotError
from .store import locked as locked
from .store import parse_snapshot as parse_snapshot
from .store import read_snapshot as read_snapshot
from .store import render_snapshot as render_snapshot
from .store import snapshot_path as snapshot_path
from .store import write_snapshot as write_snapshot

__all__ = (
    "SNAPSHOT_SCHEMA",
    "EntryCheck",
    "Figures",
    "FileUpdate",
    "NoSnapshotStep",
    "SnapshotCheck",
    "SnapshotEntry",
    "SnapshotError",
    "SnapshotFailure",
    "SnapshotFile",
    "SnapshotOptions",
    "SnapshotOutcome",
    "SnapshotStatus",
    "SnapshotUpdate",
    "locked",
    "parse_snapshot",
    "read_snapshot",
    "render_snapshot",
    "snapshot_path",
    "write_snapshot",
)
