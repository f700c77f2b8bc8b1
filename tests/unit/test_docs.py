"""The API reference and the README: every public name documented, every example true as written."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

import skillgym
from skillgym.providers.tracefmt import TraceEvent, parse_trace_stream
from tests.conftest import REPO

DOCS = sorted((REPO / "docs").glob("*.md"))
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def _blocks(path: Path, language: str) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 2, m.group(2))
        for m in _FENCE.finditer(text)
        if m.group(1) == language
    ]


def _own_doc(obj: object) -> str | None:
    return obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)


PUBLIC = [name for name in skillgym.__all__ if name != "__version__"]


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_and_method_has_a_docstring(name: str) -> None:
    obj = getattr(skillgym, name)
    assert _own_doc(obj), f"skillgym.{name} has no docstring"
    if not inspect.isclass(obj):
        return
    for klass in obj.__mro__:
        if not klass.__module__.startswith("skillgym"):
            continue
        for attr, value in vars(klass).items():
            if attr.startswith("_"):
                continue
            function = getattr(value, "__func__", value)
            if inspect.isfunction(function):
                assert function.__doc__, (
                    f"{klass.__name__}.{attr} (public on skillgym.{name}) has no docstring"
                )


def test_every_public_name_is_in_the_api_reference() -> None:
    directives = {m for page in DOCS for m in re.findall(r"^::: skillgym\.(\w+)$", page.read_text(), re.M)}
    missing = sorted(set(PUBLIC) - directives)
    assert not missing, f"not in any docs/*.md '::: skillgym.NAME' directive: {missing}"


PYTHON_BLOCKS = [
    pytest.param(path, line, code, id=f"{path.name}:{line}")
    for path in [REPO / "README.md", *DOCS]
    for line, code in _blocks(path, "python")
]


@pytest.mark.parametrize(("path", "line", "code"), PYTHON_BLOCKS)
def test_every_python_block_compiles(path: Path, line: int, code: str) -> None:
    compile(code, f"{path.name}:{line}", "exec")


def test_every_python_block_is_found() -> None:
    # A fence the pattern misses (indented, or never closed) would go unchecked.
    opened = sum(p.read_text(encoding="utf-8").count("```python") for p in [REPO / "README.md", *DOCS])
    assert len(PYTHON_BLOCKS) == opened >= 12


def _agents() -> list[tuple[str, str]]:
    page = REPO / "docs/protocol.md"
    shell = next(code for _, code in _blocks(page, "sh") if code.startswith("#!/bin/sh"))
    python = next(code for _, code in _blocks(page, "python") if code.startswith("#!/usr/bin/env python3"))
    return [("agent.sh", shell), ("agent.py", python)]


@pytest.mark.parametrize(("name", "source"), _agents(), ids=["shell", "python"])
def test_the_protocol_pages_example_agents_run_and_print_a_valid_trace(
    tmp_path: Path, name: str, source: str
) -> None:
    agent = tmp_path / name
    agent.write_text(source, encoding="utf-8")
    interpreter = "sh" if name.endswith(".sh") else sys.executable
    ran = subprocess.run(
        [interpreter, str(agent)], input=b"do it", cwd=tmp_path, capture_output=True, timeout=30, check=True
    )
    trace = parse_trace_stream(ran.stdout.splitlines())
    assert (tmp_path / "out.txt").read_text() == "hello world\n"
    assert [c.name for c in trace.tool_calls] == ["Bash"]
    assert trace.tool_calls[0].command == "echo hello world > out.txt"
    assert trace.final_text == "Wrote out.txt."


def _table_rows() -> dict[str, tuple[set[str], set[str]]]:
    text = (REPO / "docs/protocol.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- trace-lines:.*?-->\n(.*?)<!-- /trace-lines -->", text, re.S)
    assert block is not None, "docs/protocol.md lost its trace-lines table"
    rows: dict[str, tuple[set[str], set[str]]] = {}
    for line in block.group(1).splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        kind = cells[0].strip("`")
        rows[kind] = (set(_names(cells[1])), set(_names(cells[2])))
    return rows


def _names(cell: str) -> list[str]:
    # Field names are the backticked words outside parentheses (the parentheses list allowed values).
    return re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", cell))


def test_the_protocol_table_states_every_line_type_and_its_required_fields() -> None:
    expected: dict[str, tuple[set[str], set[str]]] = {}
    for cls in TraceEvent.__args__:  # type: ignore[attr-defined]
        info = msgspec.inspect.type_info(cls)
        assert isinstance(info, msgspec.inspect.StructType)
        required = {f.name for f in info.fields if f.required}
        optional = {f.name for f in info.fields if not f.required}
        expected[str(info.tag)] = (required, optional)
    assert _table_rows() == expected


def test_the_readme_names_every_field_a_tool_call_line_requires() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    example = re.search(r'`\{"type": "tool_call"[^`]*\}`', readme)
    assert example is not None
    assert '"name": "Bash"' in example.group(0)
