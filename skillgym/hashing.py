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


_SUITE_CONTEXT = "skillgym 2026-12 suite files v1"
_NOT_SUITE = frozenset({"__pycache__", ".git", ".pytest_cache"})


def suite_files_hash(root: str) -> str:
    """BLAKE3 over every file below the suite folder (by sorted relative path), leaving out caches and
    run folders (a folder holding ``run.json``): two machines with the same figure run the same suite."""
    top = Path(root)
    hasher = blake3.blake3(derive_key_context=_SUITE_CONTEXT)
    for path in sorted(_walk(top)):
        hasher.update(path.relative_to(top).as_posix().encode() + b"\0")
        hasher.update(path.read_bytes() + b"\0")
    return hasher.hexdigest()


def _walk(folder: Path) -> list[Path]:
    if (folder / "run.json").is_file():
        return []
    found: list[Path] = []
    for entry in folder.iterdir():
        if entry.is_dir() and entry.name not in _NOT_SUITE:
            found += _walk(entry)
        elif entry.is_file():
            found.append(entry)
    return found
