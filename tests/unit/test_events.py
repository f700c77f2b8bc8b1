"""run.finish: its token section, snapshot outcome (tagged by step) and notes round-trip; old ones upgrade."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from skillgym.eventlog import decode_event
from skillgym.events import Counts, RunFinish, event_decoder, event_encoder
from skillgym.snapshots.model import (
    EntryCheck,
    FileUpdate,
    NoSnapshotStep,
    SnapshotCheck,
    SnapshotFailure,
    SnapshotOutcome,
    SnapshotUpdate,
)
from skillgym.usage import TokenReport, TokenTotals

CHECK = SnapshotCheck(
    directory="snapshots",
    threshold_percent=20.0,
    enforce=True,
    files=("snapshots/command/default.toml",),
    rows=(
        EntryCheck(
            file="snapshots/command/default.toml",
            provider="command",
            model="default",
            lane="prompt",
            case_id="calm",
            condition="none",
            status="regressed",
            threshold_percent=20.0,
            trials=1,
            current_total=130.0,
            snapshot_total=100.0,
            change_percent=30.0,
        ),
    ),
    counts={"regressed": 1},
)
UPDATE = SnapshotUpdate(
    directory="snapshots",
    files=(FileUpdate(file="f.toml", provider="command", model="default", new=1, written=True),),
)
TOKENS = TokenReport(totals=TokenTotals(trials=1, missing=0, total=130), lanes=(), rows=())


BASE = RunFinish(run_id="r", at=1.0, counts=Counts(total=1, passed=1), exit_code=0, duration_s=1.0)


def _finish(**fields: Any) -> RunFinish:
    return msgspec.structs.replace(BASE, **fields)


@pytest.mark.parametrize(
    "outcome", [NoSnapshotStep(), CHECK, UPDATE, SnapshotFailure(message="f.toml:3: not valid TOML")]
)
def test_each_outcome_round_trips_tagged_by_step(outcome: SnapshotOutcome) -> None:
    event = _finish(tokens=TOKENS, snapshots=outcome, notes=("a note",))
    line = event_encoder.encode(event)
    step = outcome.__struct_config__.tag
    assert msgspec.json.decode(line)["snapshots"]["step"] == step
    assert event_decoder.decode(line) == event


def test_a_finish_without_finishers_says_no_step_and_no_tokens() -> None:
    doc = msgspec.json.decode(event_encoder.encode(_finish()))
    assert (doc["tokens"], doc["snapshots"], doc["notes"]) == (None, {"step": "none"}, [])


def _old_finish(summary: dict[str, object]) -> bytes:
    """A run.finish line as schemas 1 and 2 wrote it: everything beyond the counts in ``summary``."""
    fields = msgspec.to_builtins(BASE)
    return msgspec.json.encode(
        {
            **{
                k: fields[k]
                for k in ("type", "run_id", "at", "counts", "exit_code", "duration_s", "interrupted")
            },
            "summary": summary,
        }
    )


@pytest.mark.parametrize("schema", [1, 2])
def test_an_older_summary_upgrades_entry_by_entry(schema: int) -> None:
    builtins = msgspec.to_builtins
    check = _old_finish(
        {"tokens": builtins(TOKENS), "snapshot_check": builtins(CHECK), "notes": ["regressed"]}
    )
    assert decode_event(check, schema=schema) == _finish(tokens=TOKENS, snapshots=CHECK, notes=("regressed",))
    update = _old_finish({"snapshot_update": builtins(UPDATE)})
    assert decode_event(update, schema=schema) == _finish(snapshots=UPDATE)
    failed = _old_finish(
        {"snapshot_error": "f.toml:3: not valid TOML", "notes": ["token snapshots: f.toml:3"]}
    )
    assert decode_event(failed, schema=schema) == _finish(
        snapshots=SnapshotFailure(message="f.toml:3: not valid TOML"), notes=("token snapshots: f.toml:3",)
    )
    assert decode_event(_old_finish({}), schema=schema) == _finish()
    with pytest.raises(msgspec.ValidationError, match="summary"):
        decode_event(update)  # in a log of today's schema, an old run.finish is damage
