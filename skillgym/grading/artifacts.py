"""Files the agent left: paths kept inside the workspace, artifacts found by kind, requirements judged."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Final

from ..model import ArtifactKind, ArtifactRequirement
from ..results import CheckOutcome

__all__ = (
    "ARTIFACT_EXTENSIONS",
    "evaluate_artifacts",
    "find_artifacts",
    "has_kind",
    "walk_files",
)

# Extensions (lowercase, without the dot) of each kind; "manifest" is the file name manifest.json and
# "other" is any file.
ARTIFACT_EXTENSIONS: Final[Mapping[ArtifactKind, tuple[str, ...]]] = MappingProxyType(
    {
        "screenshot": ("png", "svg", "jpg", "jpeg", "html"),
        "recording": ("cast", "webm", "mp4", "gif"),
        "notes": ("md", "txt"),
        "manifest": (),
        "json": ("json",),
        "script": ("sh", "py"),
        "log": ("log", "jsonl"),
        "other": (),
    }
)


def _resolved(path: Path) -> Path | None:
    """``path`` resolved, or None when it cannot be (a symlink loop, an unreadable folder)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop, before Python 3.13
        return None


def has_kind(path: Path, kind: ArtifactKind) -> bool:
    if kind == "other":
        return True
    if kind == "manifest":
        return path.name.lower() == "manifest.json"
    return path.suffix.lower().lstrip(".") in ARTIFACT_EXTENSIONS[kind]


def walk_files(root: Path, *, skip: Sequence[Path] = ()) -> Iterator[Path]:
    """Regular files under ``root``, sorted, staying inside it.

    Hidden directories and files (``.git``, ``.claude``, ``.skillgym``: installed skills, fixture logs,
    tool state) are not the agent's evidence; symlinks that leave ``root`` are not followed.
    """
    base = root.resolve()
    skipped = {p.resolve() for p in skip}
    for folder, dirs, files in os.walk(base):
        here = Path(folder)
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and _resolved(here / d) not in (None, *skipped)
        )
        for name in sorted(files):
            path = here / name
            if name.startswith("."):
                continue
            target = _resolved(path)
            if target is None or not target.is_relative_to(base) or not path.is_file():
                continue
            yield path


def find_artifacts(
    root: Path,
    kind: ArtifactKind,
    path_patterns: Sequence[str] = (),
    *,
    workspace: Path | None = None,
    not_before: float | None = None,
    skip: Sequence[Path] = (),
) -> list[str]:
    """Files of ``kind`` under ``root`` (paths relative to ``root``), optionally filtered by glob patterns.

    A pattern may be relative to ``root`` or to ``workspace``; ``*`` also crosses directories. Files last
    written before ``not_before`` were there before the agent started, so they do not count.
    """
    found: list[str] = []
    for path in walk_files(root, skip=skip):
        if not has_kind(path, kind):
            continue
        if not_before is not None and path.stat().st_mtime < not_before:
            continue
        relative = path.relative_to(root.resolve()).as_posix()
        names = [relative]
        if workspace is not None and path.is_relative_to(workspace.resolve()):
            names.append(path.relative_to(workspace.resolve()).as_posix())
        if path_patterns and not any(fnmatch.fnmatchcase(n, p) for n in names for p in path_patterns):
            continue
        found.append(relative)
    return found


def describe_kind(kind: ArtifactKind) -> str:
    if kind == "manifest":
        return "manifest (manifest.json)"
    if kind == "other":
        return "other (any file)"
    return f"{kind} ({', '.join(ARTIFACT_EXTENSIONS[kind])})"


def judge_artifacts(
    found: Sequence[str], kind: ArtifactKind, min_count: int, path_patterns: Sequence[str]
) -> tuple[bool, str]:
    """Whether enough were found, and a line saying what was looked for and seen."""
    matching = f" matching {', '.join(repr(p) for p in path_patterns)}" if path_patterns else ""
    listed = f": {', '.join(found[:5])}{', ...' if len(found) > 5 else ''}" if found else ""
    ok = len(found) >= min_count
    return ok, f"found {len(found)} {describe_kind(kind)} file(s){matching}, need {min_count}{listed}"


def evaluate_artifacts(
    requirements: Sequence[ArtifactRequirement],
    root: Path,
    *,
    workspace: Path,
    not_before: float | None = None,
    skip: Sequence[Path] = (),
) -> tuple[CheckOutcome, ...]:
    """One outcome per artifact requirement; ids are ``artifact-<kind>`` (``-2``, ``-3`` when repeated)."""
    outcomes: list[CheckOutcome] = []
    seen: dict[str, int] = {}
    for requirement in requirements:
        seen[requirement.artifact] = seen.get(requirement.artifact, 0) + 1
        count = seen[requirement.artifact]
        check_id = f"artifact-{requirement.artifact}" + (f"-{count}" if count > 1 else "")
        if root.is_dir():
            found = find_artifacts(
                root,
                requirement.artifact,
                requirement.path_patterns,
                workspace=workspace,
                not_before=not_before,
                skip=skip,
            )
            ok, message = judge_artifacts(
                found, requirement.artifact, requirement.min_count, requirement.path_patterns
            )
        else:
            ok, message = (
                False,
                f"{root} does not exist, so no {describe_kind(requirement.artifact)} file is there",
            )
        if requirement.description:
            message = f"{requirement.description}: {message}"
        outcomes.append(
            CheckOutcome(
                id=check_id, kind="artifact", required=requirement.required, passed=ok, message=message
            )
        )
    return tuple(outcomes)
