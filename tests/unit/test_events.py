"""run.finish: its typed outcome round-trips, and a schema-1 summary upgrades to it entry by entry."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from skillgym.events import Counts, RunFinish, RunFinishV1, decode_event, event_encoder, upgrade_finish
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
    assert decode_event(line) == event


def test_a_finish_without_finishers_says_no_step_and_no_tokens() -> None:
    doc = msgspec.json.decode(event_encoder.encode(_finish()))
    assert (doc["tokens"], doc["snapshots"], doc["notes"]) == (None, {"step": "none"}, [])


def _old(summary: dict[str, object]) -> RunFinishV1:
    return RunFinishV1(
        run_id="r", at=1.0, counts=Counts(total=1, passed=1), exit_code=0, duration_s=1.0, summary=summary
    )


def test_a_schema_1_summary_upgrades_entry_by_entry() -> None:
    builtins = msgspec.to_builtins
    check = _old({"tokens": builtins(TOKENS), "snapshot_check": builtins(CHECK), "notes": ["regressed"]})
    assert upgrade_finish(check) == _finish(tokens=TOKENS, snapshots=CHECK, notes=("regressed",))
    assert upgrade_finish(_old({"snapshot_update": builtins(UPDATE)})) == _finish(snapshots=UPDATE)
    failed = _old({"snapshot_error": "f.toml:3: not valid TOML", "notes": ["token snapshots: f.toml:3: ..."]})
    assert upgrade_finish(failed) == _finish(
        snapshots=SnapshotFailure(message="f.toml:3: not valid TOML"),
        notes=("token snapshots: f.toml:3: ...",),
    )
    assert upgrade_finish(_old({})) == _finish()


def test_a_schema_1_line_decodes_only_under_schema_1() -> None:
    line = msgspec.json.encode(_old({"snapshot_update": msgspec.to_builtins(UPDATE)}))
    assert decode_event(line, 1) == _finish(snapshots=UPDATE)
    with pytest.raises(msgspec.ValidationError, match="summary"):
        decode_event(line)
