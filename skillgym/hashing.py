"""Content hashes of the material a run depends on (the skills under test), recorded in run.json."""

from __future__ import annotations

from pathlib import Path

import blake3

from .model import Suite

_CONTEXT = "skillgym 2026-11 skill content v1"


def skill_hash(suite: Suite) -> str:
    """BLAKE3 over every file of every skill and condition material, by sorted relative path."""
    root = Path(suite.root)
    hasher = blake3.blake3(derive_key_context=_CONTEXT)
    paths: set[Path] = set()
    for skill in suite.skills:
        folder = root / skill.path
        paths.update(p for p in folder.rglob("*") if p.is_file())
        paths.update(root / extra for extra in (skill.stub, skill.stale) if extra)
    for condition in suite.conditions:
        paths.update(root / item for item in condition.inject)
    for path in sorted(paths):
        if not path.is_file():
            continue
        hasher.update(path.relative_to(root).as_posix().encode() + b"\0")
        hasher.update(path.read_bytes() + b"\0")
    return hasher.hexdigest()
