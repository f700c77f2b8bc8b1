"""Builders shared by the provider tests: cassette headers, recorded cassettes and trial requests."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from skillgym.identity import trial_id
from skillgym.providers.base import ProviderRequest
from skillgym.providers.cassette import CassetteMeta, cassettes_root, write_cassette


def meta(**overrides: object) -> CassetteMeta:
    fields: dict[str, object] = {
        "cassette": 1,
        "provider": "claude",
        "model": "sonnet",
        "format": "skillgym-trace",
        "lane": "execution",
        "case": "hello-prompt",
        "condition": "none",
        "trial": None,
        "fingerprint": "fp-1",
        "recorded_at": "2026-01-01T00:00:00Z",
    }
    fields.update(overrides)
    return CassetteMeta(**fields)  # type: ignore[arg-type]


def record(suite_root: Path, lines: Sequence[str], *, trial: int | None = None, **overrides: object) -> Path:
    """Write a cassette where the replay provider looks for it and return its path."""
    header = meta(trial=trial, **overrides)
    folder = cassettes_root(suite_root) / header.provider / header.model / header.lane / header.case
    path = (
        folder / header.condition / f"trial-{trial}.jsonl" if trial else folder / f"{header.condition}.jsonl"
    )
    write_cassette(path, header, [line.encode() for line in lines])
    return path


def request(tmp_path: Path, **overrides: object) -> ProviderRequest:
    """A request for execution case hello-prompt, trial 1; identity fields in ``overrides`` go in its id."""
    identity: dict[str, object] = {
        "lane": "execution",
        "case_id": "hello-prompt",
        "condition": "none",
        "provider": "replay",
        "trial": 1,
        "fingerprint": "fp-1",
    }
    identity.update({k: overrides.pop(k) for k in list(overrides) if k in identity})
    trial_dir = tmp_path / "trial"
    workspace = trial_dir / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    fields: dict[str, object] = {
        "id": trial_id(**identity),  # type: ignore[arg-type]
        "model": None,
        "prompt": "do it",
        "workspace": str(workspace),
        "trial_dir": str(trial_dir),
        "env": {"PATH": os.environ.get("PATH", os.defpath), "SKILLGYM_TRIAL_ID": "t-1"},
        "timeout_s": 30.0,
        "stdout_path": str(trial_dir / "stdout.txt"),
        "stderr_path": str(trial_dir / "stderr.txt"),
    }
    fields.update(overrides)
    return ProviderRequest(**fields)  # type: ignore[arg-type]
