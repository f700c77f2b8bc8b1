"""A TrialResult for a trial key, for tests of what reads results (console, reasons, runner)."""

from __future__ import annotations

from typing import Any

from skillgym.identity import trial_id
from skillgym.results import TrialPaths, TrialResult


def result_for(key: str, status: str = "passed", **fields: Any) -> TrialResult:
    """The result of trial ``key`` ("lane/case/condition/provider/trial-N") with ``status``; ``fields``
    set or override anything else (a 1 s trial in category "c" by default)."""
    lane, case, condition, provider, trial = key.split("/")
    values: dict[str, Any] = {
        "id": trial_id(
            lane=lane,  # type: ignore[arg-type]
            case_id=case,
            condition=condition,
            provider=provider,
            trial=int(trial.removeprefix("trial-")),
            fingerprint="f" * 64,
        ),
        "category": "c",
        "model": None,
        "status": status,
        "started_at": 0.0,
        "finished_at": 1.0,
        "duration_s": 1.0,
        "paths": TrialPaths(dir=key, result=f"{key}/result.json"),
    }
    return TrialResult(**{**values, **fields})
