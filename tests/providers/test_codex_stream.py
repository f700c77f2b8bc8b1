"""Tests for skillgym.providers.codex_stream on lines shaped like those ``codex exec --json`` 0.171 prints."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skillgym.plugins import STREAM_FORMATS
from skillgym.providers import StreamParseError
from skillgym.providers.codex_stream import CODEX_FORMAT, CodexStreamParser, parse_codex_stream
from skillgym.trace import Message, SkillEvidence, TokenUsage, ToolCall, conversation, with_total

THREAD = "01a2290f-e666-7822-b69e-23bc3019911b"


def line(kind: str, **fields: Any) -> bytes:
    return json.dumps({"type": kind, **fields}).encode()


def item(kind: str, item_id: str, event: str = "item.completed", **fields: Any) -> bytes:
    return line(event, item={"id": item_id, "type": kind, **fields})


def command(
    item_id: str, script: str, *, output: str = "", exit_code: int | None = 0, done: bool = True
) -> bytes:
    return item(
        "command_execution",
        item_id,
        "item.completed" if done else "item.started",
        command=f"/bin/bash -lc '{script}'",
        aggregated_output=output,
        exit_code=exit_code if done else None,
        status=("completed" if exit_code == 0 else "failed") if done else "in_progress",
    )


def turn_completed(inp: int, cached: int, out: int, reasoning: int = 0, cache_write: int = 0) -> bytes:
    usage = {
        "input_tokens": inp,
        "cached_input_tokens": cached,
        "cache_write_input_tokens": cache_write,
        "output_tokens": out,
        "reasoning_output_tokens": reasoning,
    }
    return line("turn.completed", usage=usage)


METADATA = "Model metadata for `gpt-scripted` not found. Defaulting to fallback metadata."
RUN = [
    line("thread.started", thread_id=THREAD),
    item("error", "item_0", message=METADATA),
    line("turn.started"),
    item("reasoning", "item_1", text="**Planning** read the skill first"),
    command("item_2", "cat .agents/skills/greeter/SKILL.md", done=False),
    command("item_2", "cat .agents/skills/greeter/SKILL.md", output="---\nname: greeter\n"),
    command("item_3", "echo hi > made.txt && ls", done=False),
    command("item_3", "echo hi > made.txt && ls", output="made.txt\n"),
    item("agent_message", "item_4", text="HELLO, done."),
    turn_completed(37, 7, 12, reasoning=2),
]


def test_a_whole_run_becomes_the_trace() -> None:
    trace = parse_codex_stream(RUN)
    assert trace.final_text == "HELLO, done."
    assert [m.text for m in trace.messages] == ["HELLO, done."]  # reasoning is working notes, not an answer
    assert trace.tool_calls[1] == ToolCall(
        name="shell",
        command="echo hi > made.txt && ls",
        input="/bin/bash -lc 'echo hi > made.txt && ls'",
        output="made.txt\n",
        exit_code=0,
        after_messages=0,
    )
    assert trace.skills == (
        SkillEvidence(
            skill="greeter",
            source="read-skill-md",
            confidence="high",
            detail="shell .agents/skills/greeter/SKILL.md",
        ),
    )
    assert (trace.session_id, trace.num_turns, trace.is_error, trace.model) == (THREAD, 1, False, None)


def test_each_tool_call_knows_how_many_messages_came_before_it() -> None:
    # Both commands ran before the one message, though a trace lists messages apart from calls.
    assert [c.after_messages for c in parse_codex_stream(RUN).tool_calls] == [0, 0]
    talk = [
        line("thread.started", thread_id=THREAD),
        line("turn.started"),
        item("agent_message", "item_0", text="Reading the skill first."),
        command("item_1", "cat .agents/skills/greeter/SKILL.md", done=False),
        item("agent_message", "item_2", text="Still reading."),  # said while item_1 ran
        command("item_1", "cat .agents/skills/greeter/SKILL.md", output="---\nname: greeter\n"),
        item("file_change", "item_3", changes=[{"path": "/w/a.txt", "kind": "add"}], status="completed"),
        item("agent_message", "item_4", text="HELLO, done."),
        turn_completed(37, 7, 12),
    ]
    trace = parse_codex_stream(talk)
    # A command is placed where it started, not where it finished.
    assert [(c.name, c.after_messages) for c in trace.tool_calls] == [("shell", 1), ("apply_patch", 2)]
    assert trace.tool_calls[0].output == "---\nname: greeter\n"
    order = ["message" if isinstance(e, Message) else e[1].name for e in conversation(trace)]
    assert order == ["message", "shell", "message", "apply_patch", "message"]


def test_usage_splits_cached_input_out_of_input() -> None:
    trace = parse_codex_stream(RUN)
    assert trace.usage == TokenUsage(input=30, output=12, cache_read=7, cache_write=0, reasoning=2)


def test_cache_writes_are_split_out_of_input_too_so_each_token_counts_once() -> None:
    # input_tokens 1540 is the whole prompt: 1200 fresh, 300 read from the cache, 40 written to it.
    trace = parse_codex_stream([turn_completed(1540, 300, 85, reasoning=20, cache_write=40)])
    assert trace.usage == TokenUsage(input=1200, output=85, cache_read=300, cache_write=40, reasoning=20)
    assert with_total(trace.usage).total == 1540 + 85


def test_usage_is_summed_over_turns_and_missing_stays_missing() -> None:
    trace = parse_codex_stream(
        [turn_completed(100, 40, 20, reasoning=5, cache_write=3), turn_completed(10, 0, 2)]
    )
    assert trace.usage == TokenUsage(input=67, output=22, cache_read=40, cache_write=3, reasoning=5)
    assert parse_codex_stream([line("turn.completed")]).usage is None
    assert parse_codex_stream([line("turn.completed", usage={"input_tokens": 9})]).usage == TokenUsage(
        input=9
    )


def test_error_items_are_warnings_and_the_run_goes_on() -> None:
    parser = CodexStreamParser()
    for raw in RUN:
        parser.feed(raw)
    run = parser.run()
    assert run.warnings == (METADATA,)
    assert run.errors == ()
    assert (run.thread_id, run.turns_completed, run.tools_started) == (THREAD, 1, 2)


def test_a_failed_turn_is_an_error_said_once() -> None:
    message = (
        "unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:9/v1/responses"
    )
    parser = CodexStreamParser()
    for raw in (
        line("thread.started", thread_id=THREAD),
        line("turn.started"),
        line("error", message=message),
        line("turn.failed", error={"message": message}),
    ):
        parser.feed(raw)
    run = parser.run()
    assert run.errors == (message,)
    assert (run.turns_completed, run.turns_failed) == (0, 1)
    trace = parser.trace()
    assert trace.is_error is True and trace.usage is None


def test_a_failed_command_is_an_error_call_and_no_skill_read() -> None:
    trace = parse_codex_stream(
        [command("item_1", "cat .agents/skills/greeter/SKILL.md", output="No such file", exit_code=1)]
    )
    (call,) = trace.tool_calls
    assert (call.exit_code, call.is_error) == (1, True)
    assert trace.skills == ()


def test_a_command_still_running_keeps_its_place() -> None:
    trace = parse_codex_stream([command("item_1", "sleep 100", done=False)])
    (call,) = trace.tool_calls
    assert (call.command, call.exit_code, call.output) == ("sleep 100", None, "")


def test_other_tool_items_are_calls_too() -> None:
    trace = parse_codex_stream(
        [
            item("file_change", "item_1", changes=[{"path": "/w/a.txt", "kind": "add"}], status="completed"),
            item(
                "mcp_tool_call",
                "item_2",
                server="docs",
                tool="search",
                arguments={"q": "x"},
                result={"ok": 1},
            ),
            item("web_search", "item_3", query="tmux wait-for"),
            item("todo_list", "item_4", items=[{"text": "a", "completed": False}]),
        ]
    )
    assert [(c.name, c.input) for c in trace.tool_calls] == [
        ("apply_patch", '[{"path":"/w/a.txt","kind":"add"}]'),
        ("mcp:docs/search", '{"q":"x"}'),
        ("web_search", "tmux wait-for"),
    ]
    assert trace.tool_calls[1].output == '{"ok":1}'


def test_a_line_that_is_not_json_names_its_number() -> None:
    with pytest.raises(StreamParseError) as caught:
        parse_codex_stream([line("thread.started", thread_id=THREAD), b"WARNING: something"])
    assert caught.value.line == 2
    assert "codex exec --json" in caught.value.expected


def test_the_parser_is_registered_for_replay() -> None:
    assert STREAM_FORMATS.get(CODEX_FORMAT) is parse_codex_stream
