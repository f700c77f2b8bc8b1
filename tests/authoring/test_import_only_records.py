"""Importing a case file only records: no process, no network, no file written; and the public surface."""

from __future__ import annotations

import importlib.util
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import skillgym.authoring
from skillgym.model import Fixture
from skillgym.registry import Registry, use_registry

_CASE_FILE = """
    import re
    from skillgym.authoring import anti_pattern, condition, dogfood_case, execution_case, prompt_case, skill
    from skillgym.authoring import workspace_preset

    skill("tmux-tui", "skills/tmux-tui", stub="conditions/stub.md")
    condition("none")
    workspace_preset("tui-smoke", template="templates/tui", bootstrap=[["git", "init", "-q"]])
    anti_pattern("blind-sleep", r"\\bsleep\\s+\\d", severity="error")

    with prompt_case("wait-for-output") as c:
        c.category("trigger")
        c.prompt("wait for my server")
        c.expect_skill("tmux-tui")
        with c.step("observe") as s:
            s.must_mention("wait", re.compile("capture-pane", re.I))

    with execution_case("hello-prompt") as c:
        c.category("session")
        c.fixture("hello-prompt")
        c.task("say hello")
        c.setup(["python", "fixtures/hello-prompt.py"])
        with c.workflow() as w:
            w.create_session().input("hello").wait_for("READY>").destroy()
        with c.assertions() as a:
            a.file_exists("snapshot.txt")
            a.command(["pytest", "-q"])
            a.custom("evals.checks:clean")

    @dogfood_case
    def exploratory_qa(c):
        c.category("qa")
        c.task("explore")
        with c.report() as r:
            r.title()
"""

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_watching: list[str] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _watching:
        return
    if (
        event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork", "socket.connect")
        or event == "socket.getaddrinfo"
    ):
        _watching.append(f"{event} {args[:2]!r}")
    elif event == "open":
        path, mode, flags = args
        writes = (isinstance(mode, str) and any(m in mode for m in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        if writes:
            _watching.append(f"open {path!r} {mode!r}")


sys.addaudithook(_audit)  # audit hooks cannot be removed: this one only records while _watching is set


def test_importing_a_case_file_starts_no_process_opens_no_socket_and_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cases.py"
    path.write_text(textwrap.dedent(_CASE_FILE), encoding="utf-8")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # the import system's cache is not the case file's
    spec = importlib.util.spec_from_file_location("_authoring_side_effect_probe", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with use_registry(Registry()) as reg:
        _watching.append("<watching>")
        try:
            spec.loader.exec_module(module)
        finally:
            seen = _watching[1:]
            _watching.clear()
        suite = reg.build(str(tmp_path), (Fixture(name="hello-prompt", path="fixtures/hello-prompt.py"),))
    assert seen == []
    assert [c.id for c in suite.cases] == ["wait-for-output", "hello-prompt", "exploratory-qa"]
    assert [p.id for p in suite.presets] == ["tui-smoke"]


def test_the_probe_does_see_side_effects(tmp_path: Path) -> None:
    _watching.append("<watching>")
    try:
        (tmp_path / "written.txt").write_text("x", encoding="utf-8")
    finally:
        seen = _watching[1:]
        _watching.clear()
    assert len(seen) == 1
    assert seen[0].startswith("open ")


def test_the_public_surface_is_exactly_the_documented_names() -> None:
    assert skillgym.authoring.__all__ == (
        "AssertionsBuilder",
        "DogfoodBuilder",
        "ExecutionBuilder",
        "PromptBuilder",
        "ProofBundleBuilder",
        "ReportBuilder",
        "StepBuilder",
        "WorkflowBuilder",
        "anti_pattern",
        "condition",
        "dogfood_case",
        "execution_case",
        "gate",
        "judged_by",
        "prompt_case",
        "replace_default_conditions",
        "secret",
        "skill",
        "trials",
        "workspace_preset",
    )
    for name in skillgym.authoring.__all__:
        assert getattr(skillgym.authoring, name) is not None
