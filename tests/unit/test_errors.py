"""Tests for skillgym.errors: one error base for the whole library, one table of exit codes."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import skillgym
from skillgym.errors import ExitCode, SkillgymError, UsageError


def _library_exceptions() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for info in pkgutil.walk_packages(skillgym.__path__, prefix="skillgym."):
        if info.name == "skillgym.__main__":
            continue
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == info.name:
                found.append(value)
    return found


def test_every_exception_the_library_defines_inherits_skillgym_error() -> None:
    classes = _library_exceptions()
    assert len(classes) > 15  # the walk really found the library's exceptions
    errors = [c for c in classes if issubclass(c, Exception)]
    assert [c.__qualname__ for c in errors if not issubclass(c, SkillgymError)] == []
    # A BaseException that is no Exception is a private signal (the load timeout, raised past a case
    # file's own `except Exception`), turned into a SkillgymError before it leaves the library.
    assert all(c.__qualname__.startswith("_") for c in classes if c not in errors)


def test_exit_codes_are_one_enum_and_bad_input_is_2() -> None:
    assert [(code.name, int(code)) for code in ExitCode] == [
        ("OK", 0),
        ("FAILED", 1),
        ("USAGE", 2),
        ("INCONCLUSIVE", 3),
        ("INTERRUPTED", 130),
    ]
    assert UsageError("x").exit_code == ExitCode.USAGE == 2
