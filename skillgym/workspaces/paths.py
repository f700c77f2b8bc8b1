"""Path containment: suite-relative and id-derived paths that must not escape their root."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import SkillgymError


class UnsafePathError(SkillgymError, ValueError):
    """A relative path or an id would lead outside the directory it must stay in."""


def check_segment(value: str, *, what: str) -> str:
    """``value`` if it is usable as one path component; otherwise an ``UnsafePathError`` saying why.

    A segment must be non-empty, must not be ``.`` or ``..`` and must not contain ``/``, ``\\`` or NUL,
    so that an id such as ``../../etc`` can never choose where a file is read or written.
    """
    if value in ("", ".", "..") or any(ch in value for ch in ("/", "\\", "\0")):
        raise UnsafePathError(
            f"{what} {value!r} cannot be used as a file name: it must be non-empty, not '.' or '..', "
            "and contain no '/', '\\' or NUL; rename it"
        )
    return value


def resolve_inside(root: Path, relative: str, *, what: str = "", within: str | None = None) -> Path:
    """The absolute path of ``relative`` under ``root``, refusing anything that leaves ``root``.

    Empty and absolute paths, ``..`` components, symlinks whose target lies outside ``root`` and paths
    that cannot be resolved (a symlink loop) are all refused with an ``UnsafePathError``. The message
    names ``what`` (for example ``"workspace preset 'tui' template"``), the path, and ``within`` (what
    ``root`` is to the user, ``"the workspace"`` say; its path by default).
    """
    subject = f"{what} {relative!r}" if what else relative
    base = root.resolve()
    where = within or str(base)
    if not relative or os.path.isabs(relative):
        raise UnsafePathError(
            f"{subject} is an absolute or empty path; it must be a path relative to {where} "
            "(drop the leading '/')"
        )
    try:
        candidate = (base / relative).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop, before Python 3.13
        raise UnsafePathError(f"{subject} cannot be resolved in {where} (a symlink loop?)") from exc
    if candidate.is_relative_to(base):
        return candidate
    if not Path(os.path.normpath(base / relative)).is_relative_to(base):
        raise UnsafePathError(f"{subject} escapes {where} through '..'; keep it inside {where}")
    raise UnsafePathError(
        f"{subject} escapes {where} through a symlink (it resolves to {candidate}); keep it inside {where}"
    )


def check_tree_links(tree: Path, root: Path, *, what: str) -> None:
    """Refuse a directory tree holding a symlink whose target lies outside ``root``.

    Copies follow symlinks, so one link to ``~/.claude`` inside a template would copy the user's own
    settings into a hermetic trial.
    """
    base = root.resolve()
    for folder, dirs, files in os.walk(tree):
        for name in (*dirs, *files):
            entry = Path(folder, name)
            if entry.is_symlink():
                target = entry.resolve()
                if not target.is_relative_to(base):
                    raise UnsafePathError(
                        f"{what} contains the symlink {entry} pointing to {target}, outside {base}; "
                        "replace it with a real file or a link inside the suite"
                    )
