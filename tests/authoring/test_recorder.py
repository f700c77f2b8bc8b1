"""Tests for origins: the user's frame, shown relative to the working directory when under it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillgym.authoring import prompt_case
from skillgym.authoring.recorder import caller_origin, display_path
from skillgym.errors import DefinitionError
from skillgym.registry import Registry, use_registry

from .support import at


def test_caller_origin_is_the_calling_user_line() -> None:
    origin = caller_origin()  # @here
    assert origin == at("here")
    assert (
        origin.startswith("tests/authoring/test_recorder.py:") or Path(origin.rsplit(":", 1)[0]).is_absolute()
    )


def test_origins_skip_frames_inside_the_package() -> None:
    # finalize -> _compile -> ... all run inside skillgym; the error still names this file.
    with use_registry(Registry()), pytest.raises(DefinitionError) as info, prompt_case("p"):  # @case
        pass
    assert info.value.origin == at("case")


def test_display_path_is_relative_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = tmp_path / "evals" / "prompt.py"
    monkeypatch.chdir(tmp_path)
    assert display_path(str(inside)) == "evals/prompt.py"
    elsewhere = tmp_path / "sub"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert display_path(str(inside)) == inside.as_posix()
    assert display_path("<string>") == "<string>"


def test_origin_is_absolute_when_the_file_is_outside_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with use_registry(Registry()) as reg:
        with prompt_case("p") as c:  # @case
            c.category("trigger")
            c.prompt("x")
            c.expect_skill(None)
        (case,) = reg.cases
    line = at("case").rsplit(":", 1)[1]
    assert case.origin == f"{Path(os.path.abspath(__file__)).as_posix()}:{line}"
