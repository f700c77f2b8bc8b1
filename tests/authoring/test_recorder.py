"""Tests for origins: the user's frame, shown relative to the working directory when under it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillgym.authoring import prompt_case
from skillgym.authoring.recorder import caller_origin, display_path
from skillgym.errors import CollectionError, DefinitionError, RecorderClosedError
from skillgym.loader import load_suite
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


def test_each_call_site_has_its_own_line_in_loops_and_helpers() -> None:
    def define(case_id: str) -> None:
        with prompt_case(case_id) as c:  # @helper
            c.category("trigger")
            c.prompt("x")
            c.expect_skill(None)

    with use_registry(Registry()) as reg:
        for n in range(3):
            define(f"a-{n}")
            with prompt_case(f"b-{n}") as c:  # @loop
                c.category("trigger")
                c.prompt("x")
                c.expect_skill(None)
            with pytest.raises(RecorderClosedError) as twice:
                c.category("again")  # @closed
            if n == 0:
                define("c-0")
    helper, loop = at("helper"), at("loop")
    assert [case.origin for case in reg.cases] == [helper, loop, helper, helper, loop, helper, loop]
    assert twice.value.args[0].startswith(f"{at('closed')}: ")


def test_origins_of_one_registry_stay_relative_to_where_it_began(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = Path(__file__).resolve().parent
    monkeypatch.chdir(here)
    with use_registry(Registry()) as reg:
        monkeypatch.chdir(tmp_path)  # a case file that changes directory while loading
        with prompt_case("p") as c:  # @case
            c.category("trigger")
            c.prompt("x")
            c.expect_skill(None)
    line = at("case").rsplit(":", 1)[1]
    assert reg.cases[0].origin == f"{Path(__file__).name}:{line}"


def test_origins_far_down_a_long_suite_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    filler = "".join(f"X{n} = {n}\n" for n in range(3000))
    (tmp_path / "long.py").write_text(
        "from skillgym import prompt_case\n"
        + filler
        + "with prompt_case('far') as c:\n"
        + "    c.category('trigger')\n"
        + "    c.prompt('x')\n"
        + "    c.expect_skill(None)\n"
        + "    c.prompt('again')\n"
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CollectionError) as error:
        load_suite(tmp_path)
    assert "long.py:3006: case 'far': c.prompt() was already called at long.py:3004" in str(error.value)


def test_one_call_site_is_shown_relative_to_the_directory_of_each_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def define(case_id: str) -> None:
        with prompt_case(case_id) as c:  # @case
            c.category("trigger")
            c.prompt("x")
            c.expect_skill(None)
            with c.step("look") as s:  # @step
                s.must_mention("x")

    monkeypatch.chdir(Path(__file__).resolve().parent)
    with use_registry(Registry()) as near:
        define("near")
    monkeypatch.chdir(tmp_path)
    with use_registry(Registry()) as far:
        define("far")
    case_line, step_line = at("case").rsplit(":", 1)[1], at("step").rsplit(":", 1)[1]
    name, absolute = Path(__file__).name, Path(os.path.abspath(__file__)).as_posix()
    assert [(c.origin, c.workflow[0].origin) for c in near.cases] == [
        (f"{name}:{case_line}", f"{name}:{step_line}")
    ]
    assert [(c.origin, c.workflow[0].origin) for c in far.cases] == [
        (f"{absolute}:{case_line}", f"{absolute}:{step_line}")
    ]
