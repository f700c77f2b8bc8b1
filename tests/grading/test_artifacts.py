"""Tests for skillgym.grading.artifacts: containment, discovery by kind and glob, requirements."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from skillgym.grading.artifacts import evaluate_artifacts, find_artifacts
from skillgym.model import ArtifactRequirement
from skillgym.workspaces.paths import UnsafePathError, resolve_inside


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")


def test_find_by_kind_and_glob(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "shots/a.png",
        "shots/b.SVG",
        "page.html",
        "x.cast",
        "notes.md",
        "manifest.json",
        "data.json",
    )
    touch(tmp_path, "run.sh", "app.log", "events.jsonl", ".hidden/c.png", ".d.png")
    assert find_artifacts(tmp_path, "screenshot") == ["page.html", "shots/a.png", "shots/b.SVG"]
    assert find_artifacts(tmp_path, "screenshot", ("shots/*.png",)) == ["shots/a.png"]
    assert find_artifacts(tmp_path, "recording") == ["x.cast"]
    assert find_artifacts(tmp_path, "manifest") == ["manifest.json"]
    assert find_artifacts(tmp_path, "json") == ["data.json", "manifest.json"]
    assert find_artifacts(tmp_path, "log") == ["app.log", "events.jsonl"]
    assert find_artifacts(tmp_path, "script") == ["run.sh"]
    assert len(find_artifacts(tmp_path, "other")) == 10


def test_glob_may_be_relative_to_the_workspace(tmp_path: Path) -> None:
    touch(tmp_path, "bundle/shots/a.png")
    bundle = tmp_path / "bundle"
    assert find_artifacts(bundle, "screenshot", ("bundle/shots/*",), workspace=tmp_path) == ["shots/a.png"]
    assert find_artifacts(bundle, "screenshot", ("shots/*",), workspace=tmp_path) == ["shots/a.png"]


def test_files_older_than_the_agent_do_not_count(tmp_path: Path) -> None:
    touch(tmp_path, "NOTES.md", "new.md")
    old = time.time() - 3600
    os.utime(tmp_path / "NOTES.md", (old, old))
    assert find_artifacts(tmp_path, "notes", not_before=time.time() - 60) == ["new.md"]


def test_symlinked_files_out_of_the_root_are_not_artifacts(tmp_path: Path) -> None:
    touch(tmp_path, "outside/a.png")
    (tmp_path / "ws").mkdir()
    os.symlink(tmp_path / "outside" / "a.png", tmp_path / "ws" / "a.png")
    assert find_artifacts(tmp_path / "ws", "screenshot") == []


def test_evaluate_requirements(tmp_path: Path) -> None:
    touch(tmp_path, "a.png")
    requirements = (
        ArtifactRequirement(artifact="screenshot", description="the pane"),
        ArtifactRequirement(artifact="screenshot", min_count=2, required=False),
        ArtifactRequirement(artifact="recording"),
    )
    outcomes = evaluate_artifacts(requirements, tmp_path, workspace=tmp_path)
    assert [(o.id, o.passed, o.required) for o in outcomes] == [
        ("artifact-screenshot", True, True),
        ("artifact-screenshot-2", False, False),
        ("artifact-recording", False, True),
    ]
    assert (
        outcomes[0].message
        == "the pane: found 1 screenshot (png, svg, jpg, jpeg, html) file(s), need 1: a.png"
    )
    assert "found 0 recording" in outcomes[2].message


def test_a_symlink_loop_in_the_workspace_is_skipped_not_a_crash(tmp_path: Path) -> None:
    # What the agent left behind, loops included, is judged; it never breaks the search.
    touch(tmp_path, "a.png")
    os.symlink("loop-b", tmp_path / "loop-a")
    os.symlink("loop-a", tmp_path / "loop-b")
    (tmp_path / "dir").mkdir()
    os.symlink("../dir/self", tmp_path / "dir" / "self")
    [outcome] = evaluate_artifacts(
        (ArtifactRequirement(artifact="screenshot"),), tmp_path, workspace=tmp_path
    )
    assert outcome.passed, outcome.message
    with pytest.raises(UnsafePathError, match="loop-a cannot be resolved in the workspace"):
        resolve_inside(tmp_path, "loop-a", within="the workspace")


def test_missing_root_fails_every_requirement(tmp_path: Path) -> None:
    [outcome] = evaluate_artifacts(
        (ArtifactRequirement(artifact="notes"),), tmp_path / "nope", workspace=tmp_path
    )
    assert not outcome.passed
    assert "does not exist" in outcome.message
