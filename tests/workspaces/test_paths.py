"""Tests for skillgym.workspaces.paths: the one containment check for paths relative to a root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillgym.workspaces.paths import UnsafePathError, resolve_inside


def test_resolve_inside_accepts_paths_that_stay(tmp_path: Path) -> None:
    assert resolve_inside(tmp_path, "a/../b.txt", within="the workspace") == (tmp_path / "b.txt").resolve()


def test_resolve_inside_refuses_dot_dot(tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError, match=r"\.\./x escapes the workspace through '\.\.'"):
        resolve_inside(tmp_path / "ws", "../x", within="the workspace")


def test_resolve_inside_refuses_a_symlink_out(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "secret.txt").write_text("s", encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", tmp_path / "ws" / "link.txt")
    with pytest.raises(UnsafePathError, match="through a symlink"):
        resolve_inside(tmp_path / "ws", "link.txt", within="the workspace")


def test_resolve_inside_refuses_absolute(tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError, match="absolute"):
        resolve_inside(tmp_path, "/etc/passwd", within="the workspace")


def test_resolve_inside_names_what_the_path_is_and_refuses_an_empty_one(tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError, match=r"preset 't' template '' is an absolute or empty path"):
        resolve_inside(tmp_path, "", what="preset 't' template")
    os.symlink("loop-b", tmp_path / "loop-a")
    os.symlink("loop-a", tmp_path / "loop-b")
    with pytest.raises(UnsafePathError, match=rf"loop-a cannot be resolved in {tmp_path.resolve()}"):
        resolve_inside(tmp_path, "loop-a")
