"""Tests for skillgym.providers.stub: canned answers, honest failure, cached reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillgym.providers.stub import StubProvider

from .support import request

pytestmark = pytest.mark.anyio


def canned(suite_root: Path, relative: str, text: str) -> None:
    path = suite_root / "stubs" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


async def test_detect_is_always_available(suite_root: Path) -> None:
    detection = await StubProvider(suite_root).detect()
    assert detection.available
    assert detection.provider == "stub"


async def test_the_case_file_is_the_final_text(suite_root: Path, tmp_path: Path) -> None:
    canned(suite_root, "hello-prompt.md", "I would use tmux-tui.\n")
    req = request(tmp_path)
    result = await StubProvider(suite_root).invoke(req)
    assert result.ok
    assert result.trace.final_text == "I would use tmux-tui.\n"
    assert result.trace.tool_calls == ()
    assert result.trace.usage is None
    assert not Path(req.stdout_path).exists()  # no process ran: the answer lives in the trace
    assert not Path(req.stderr_path).exists()


async def test_a_condition_file_wins_over_the_case_file(suite_root: Path, tmp_path: Path) -> None:
    canned(suite_root, "hello-prompt.md", "generic")
    canned(suite_root, "hello-prompt/stale.md", "misled by stale guidance")
    provider = StubProvider(suite_root)
    stale = await provider.invoke(request(tmp_path, condition="stale"))
    other = await provider.invoke(request(tmp_path, condition="none"))
    assert stale.trace.final_text == "misled by stale guidance"
    assert other.trace.final_text == "generic"


async def test_without_canned_output_it_fails_honestly(suite_root: Path, tmp_path: Path) -> None:
    result = await StubProvider(suite_root).invoke(request(tmp_path, case_id="wait-for-output"))
    assert not result.ok
    assert result.error_class == "environment-error"  # the suite's configuration, not the agent's failure
    assert result.error_message is not None
    assert result.error_message.startswith(
        "stub provider has no canned output for case wait-for-output: add stubs/wait-for-output.md"
    )


async def test_each_file_is_read_once(suite_root: Path, tmp_path: Path) -> None:
    canned(suite_root, "hello-prompt.md", "cached")
    provider = StubProvider(suite_root)
    assert (await provider.invoke(request(tmp_path))).trace.final_text == "cached"
    (suite_root / "stubs" / "hello-prompt.md").unlink()
    assert (await provider.invoke(request(tmp_path))).trace.final_text == "cached"


async def test_an_unsafe_case_id_is_a_provider_error(suite_root: Path, tmp_path: Path) -> None:
    result = await StubProvider(suite_root).invoke(request(tmp_path, case_id="../secrets"))
    assert not result.ok
    assert result.error_message is not None
    assert "cannot be used as a file name" in result.error_message


async def test_the_case_file_is_read_once_for_every_condition(suite_root: Path, tmp_path: Path) -> None:
    canned(suite_root, "hello-prompt.md", "shared")
    provider = StubProvider(suite_root)
    assert (await provider.invoke(request(tmp_path, condition="none"))).trace.final_text == "shared"
    (suite_root / "stubs" / "hello-prompt.md").unlink()
    for condition in ("self-load", "preloaded", "stale"):
        assert (await provider.invoke(request(tmp_path, condition=condition))).trace.final_text == "shared"


async def test_an_unsafe_condition_id_is_refused_even_for_a_cached_case(
    suite_root: Path, tmp_path: Path
) -> None:
    canned(suite_root, "hello-prompt.md", "shared")
    canned(suite_root, "hello-prompt/none.md", "own")
    provider = StubProvider(suite_root)
    assert (await provider.invoke(request(tmp_path, condition="none"))).trace.final_text == "own"
    result = await provider.invoke(request(tmp_path, condition="../../x"))
    assert not result.ok
    assert result.error_message is not None
    assert "cannot be used as a file name" in result.error_message


def _trace_lines(*events: dict[str, object]) -> str:
    return "".join(json.dumps(event) + "\n" for event in events)


async def test_an_execution_trace_stub_is_reenacted_in_the_workspace(
    suite_root: Path, tmp_path: Path
) -> None:
    write = {"file_path": "result.md", "content": "written by the stub\n"}
    canned(
        suite_root,
        "hello-prompt.jsonl",
        _trace_lines(
            {"type": "tool_call", "name": "Write", "input": json.dumps(write)},
            {
                "type": "tool_call",
                "name": "Bash",
                "command": "echo $SKILLGYM_TRIAL_ID > id.txt",
                "exit_code": 0,
            },
            {"type": "result", "text": "done"},
        ),
    )
    canned(suite_root, "hello-prompt.md", "the text answer loses to the trace in this lane")
    req = request(tmp_path)
    result = await StubProvider(suite_root).invoke(req)
    assert result.ok, result.error_message
    workspace = Path(req.workspace)
    assert (workspace / "result.md").read_text() == "written by the stub\n"
    assert (workspace / "id.txt").read_text() == "t-1\n"  # really run, in the trial's env
    assert result.trace.final_text == "done"
    assert [c.exit_code for c in result.trace.tool_calls] == [None, 0]


async def test_a_condition_trace_stub_wins_and_prompt_trials_ignore_traces(
    suite_root: Path, tmp_path: Path
) -> None:
    canned(suite_root, "hello-prompt.jsonl", _trace_lines({"type": "result", "text": "any condition"}))
    canned(suite_root, "hello-prompt/stale.jsonl", _trace_lines({"type": "result", "text": "stale only"}))
    canned(suite_root, "hello-prompt.md", "a text answer")
    provider = StubProvider(suite_root)
    stale = await provider.invoke(request(tmp_path, condition="stale"))
    other = await provider.invoke(request(tmp_path, condition="none"))
    prompt = await provider.invoke(request(tmp_path, lane="prompt"))
    assert (stale.trace.final_text, other.trace.final_text) == ("stale only", "any condition")
    assert prompt.trace.final_text == "a text answer"


async def test_a_trace_stub_that_does_not_parse_fails_naming_the_line(
    suite_root: Path, tmp_path: Path
) -> None:
    canned(suite_root, "hello-prompt.jsonl", _trace_lines({"type": "tool_call", "command": "ls"}))
    result = await StubProvider(suite_root).invoke(request(tmp_path))
    assert not result.ok
    assert result.error_class == "environment-error"  # the suite's stub, not the agent
    assert result.error_message is not None
    assert "stubs/hello-prompt.jsonl is not a skillgym-trace: line 1" in result.error_message
    assert "`name`" in result.error_message
