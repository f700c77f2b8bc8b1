"""Tests for skillgym.providers.claude_stream on lines shaped like those Claude Code 2.1 prints."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skillgym.plugins import STREAM_FORMATS
from skillgym.providers import StreamParseError
from skillgym.providers.cassette import iter_cassette_lines
from skillgym.providers.claude_stream import (
    CLAUDE_FORMAT,
    MAX_TEXT_CHARS,
    ClaudeStreamParser,
    parse_claude_stream,
    skill_md_reads,
    skill_read_evidence,
    unwrap_shell,
)
from skillgym.trace import Message, SkillEvidence, TokenUsage, ToolCall, conversation
from tests.conftest import REPO

SESSION = "196d0dd6-9fc5-47ca-9b6c-07f41dfb6ab1"
WORKSPACE = "/tmp/trial/workspace"


def line(**fields: Any) -> bytes:
    return json.dumps({**fields, "session_id": SESSION}).encode()


def init(skills: list[str]) -> bytes:
    return line(
        type="system",
        subtype="init",
        cwd=WORKSPACE,
        tools=["Task", "Bash", "Read", "Skill"],
        mcp_servers=[],
        model="claude-sonnet-4-5",
        permissionMode="bypassPermissions",
        skills=skills,
        apiKeySource="ANTHROPIC_API_KEY",
        claude_code_version="2.1.332",
    )


def assistant(*content: dict[str, Any], output_tokens: int = 1) -> bytes:
    usage = {"input_tokens": 10, "cache_read_input_tokens": 3, "output_tokens": output_tokens}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5"}
    return line(type="assistant", message={**message, "content": list(content), "usage": usage})


def tool_use(tool_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def tool_result(tool_id: str, content: Any, *, is_error: bool = False) -> bytes:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}
    return line(type="user", message={"role": "user", "content": [block]}, tool_use_result={"stdout": ""})


def result(**overrides: Any) -> bytes:
    fields: dict[str, Any] = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 4,
        "result": "Greeted the colleague.",
        "stop_reason": "end_turn",
        "total_cost_usd": 0.0123,
        "api_error_status": None,
        "usage": {
            "input_tokens": 30,
            "cache_creation_input_tokens": 3,
            "cache_read_input_tokens": 7,
            "output_tokens": 12,
            "output_tokens_details": {"thinking_tokens": 4},
            "server_tool_use": {"web_search_requests": 0},
        },
        "modelUsage": {"claude-sonnet-4-5": {"inputTokens": 30}},
        "permission_denials": [],
        "terminal_reason": "completed",
    }
    return line(**{**fields, **overrides})


SKILL_MD = f"{WORKSPACE}/.claude/skills/greeter/SKILL.md"
RUN = [
    init(["greeter", "debug"]),
    assistant(
        {"type": "text", "text": "Let me check the folder."},
        tool_use("t1", "Bash", command="ls", description="List"),
    ),
    tool_result("t1", "README.md"),
    assistant(tool_use("t2", "Skill", skill="greeter")),
    tool_result("t2", "Launching skill: greeter"),
    line(type="user", message={"role": "user", "content": [{"type": "text", "text": "Greet with HELLO."}]}),
    assistant(tool_use("t3", "Read", file_path=SKILL_MD)),
    tool_result("t3", [{"type": "text", "text": "1\t---\n2\tname: greeter"}]),
    assistant({"type": "thinking", "thinking": "greeter wants capitals"}, {"type": "text", "text": "HELLO!"}),
    result(),
]


def test_a_whole_run_becomes_the_trace() -> None:
    trace = parse_claude_stream(RUN)
    assert trace.final_text == "Greeted the colleague."
    assert [m.text for m in trace.messages] == ["Let me check the folder.", "HELLO!"]
    assert trace.tool_calls[0] == ToolCall(
        name="Bash",
        command="ls",
        input='{"command":"ls","description":"List"}',
        output="README.md",
        exit_code=0,
        after_messages=1,
    )
    assert [c.name for c in trace.tool_calls] == ["Bash", "Skill", "Read"]
    assert trace.tool_calls[2].output == "1\t---\n2\tname: greeter"
    assert trace.tool_calls[1].command is None and trace.tool_calls[1].exit_code is None
    assert trace.skills == (
        SkillEvidence(skill="greeter", source="skill-tool", confidence="high", detail="Skill tool call"),
        SkillEvidence(skill="greeter", source="read-skill-md", confidence="high", detail=f"Read {SKILL_MD}"),
        SkillEvidence(
            skill="greeter", source="init-listed", confidence="low", detail="listed by claude at startup"
        ),
        SkillEvidence(
            skill="debug", source="init-listed", confidence="low", detail="listed by claude at startup"
        ),
    )
    assert (trace.model, trace.session_id, trace.num_turns, trace.cost_usd) == (
        "claude-sonnet-4-5",
        SESSION,
        4,
        0.0123,
    )
    assert trace.is_error is False


def test_each_tool_call_knows_how_many_messages_came_before_it() -> None:
    # A text block and a tool_use in one assistant line: the text came first.
    assert [c.after_messages for c in parse_claude_stream(RUN).tool_calls] == [1, 1, 1]
    # A recorded run of the example suite: says why, loads the skill, says what next, runs seven commands.
    cassette = REPO / "evals/cassettes/claude/scripted/execution/hello-prompt/self-load.jsonl"
    lines = list(iter_cassette_lines(cassette))
    trace = parse_claude_stream(lines)
    assert len(trace.messages) == 3
    assert [c.after_messages for c in trace.tool_calls] == [1, 2, 2, 2, 2, 2, 2]
    order = ["message" if isinstance(e, Message) else e[1].name for e in conversation(trace)]
    assert order == ["message", "Skill", "message", *["Bash"] * 6, "message"]
    # A call still running when the stream stopped keeps its place too.
    parser = ClaudeStreamParser()
    for raw in lines[:3]:  # init, the first text, the Skill call: its result never came
        parser.feed(raw)
    (running,) = parser.trace().tool_calls
    assert (running.name, running.output, running.after_messages) == ("Skill", "", 1)


def test_usage_comes_from_the_result_line_only() -> None:
    trace = parse_claude_stream(RUN)
    assert trace.usage == TokenUsage(input=30, output=12, cache_read=7, cache_write=3, reasoning=4)
    # The assistant lines carry a usage snapshot from when each message started: never the answer.
    assert parse_claude_stream(RUN[:-1]).usage is None


def test_a_failed_bash_call_keeps_its_exit_code_and_proves_no_skill_read() -> None:
    trace = parse_claude_stream(
        [
            assistant(tool_use("t1", "Bash", command="cat .claude/skills/greeter/SKILL.md")),
            tool_result(
                "t1", "Exit code 1\ncat: .claude/skills/greeter/SKILL.md: No such file", is_error=True
            ),
        ]
    )
    (call,) = trace.tool_calls
    assert (call.exit_code, call.is_error) == (1, True)
    assert trace.skills == ()
    assert trace.final_text == ""


def test_a_skill_read_through_bash_is_evidence() -> None:
    trace = parse_claude_stream(
        [
            assistant(tool_use("t1", "Bash", command="sed -n 1,40p .claude/skills/greeter/SKILL.md")),
            tool_result("t1", "---\nname: greeter"),
        ]
    )
    (evidence,) = trace.skills
    assert (evidence.skill, evidence.source, evidence.confidence) == ("greeter", "read-skill-md", "high")


def test_a_call_cut_off_before_its_result_is_kept_and_a_skill_attempt_is_medium() -> None:
    trace = parse_claude_stream([init([]), assistant(tool_use("t1", "Skill", skill="greeter"))])
    assert trace.tool_calls == (ToolCall(name="Skill", input='{"skill":"greeter"}', after_messages=0),)
    (evidence,) = trace.skills
    assert (evidence.source, evidence.confidence) == ("skill-tool", "medium")


def test_an_error_result_is_reported_with_its_details() -> None:
    parser = ClaudeStreamParser()
    api_retry = line(
        type="system", subtype="api_retry", attempt=1, max_retries=2, error_status=401, error="x"
    )
    for raw in (init([]), api_retry, result(is_error=True, api_error_status=401, result="Invalid API key")):
        parser.feed(raw)
    run = parser.run()
    assert run.result_seen and run.is_error
    assert (run.api_error_status, run.result_text, run.retries, run.last_retry_status) == (
        401,
        "Invalid API key",
        1,
        401,
    )
    assert parser.trace().is_error is True


def test_max_turns_shows_in_the_subtype_and_errors() -> None:
    parser = ClaudeStreamParser()
    parser.feed(
        result(
            subtype="error_max_turns",
            is_error=True,
            num_turns=2,
            errors=["Reached maximum number of turns (1)"],
            terminal_reason="max_turns",
            result=None,
        )
    )
    run = parser.run()
    assert (run.subtype, run.terminal_reason, run.errors) == (
        "error_max_turns",
        "max_turns",
        ("Reached maximum number of turns (1)",),
    )
    assert parser.trace().final_text == ""


def test_a_line_that_is_not_json_names_its_number() -> None:
    with pytest.raises(StreamParseError) as caught:
        parse_claude_stream([init([]), b"", b"Error: something broke"])
    assert caught.value.line == 3
    assert "stream-json" in caught.value.expected
    assert caught.value.found == "Error: something broke"


def test_unknown_line_types_and_fields_are_skipped() -> None:
    trace = parse_claude_stream(
        [line(type="stream_event", event={"x": 1}), line(type="system", subtype="hook")]
    )
    assert trace.messages == () and trace.skills == ()


def test_long_outputs_are_cut_to_bound_memory() -> None:
    trace = parse_claude_stream(
        [
            assistant(tool_use("t1", "Bash", command="cat big.log")),
            tool_result("t1", "x" * (MAX_TEXT_CHARS + 10)),
        ]
    )
    output = trace.tool_calls[0].output
    assert output.startswith("x" * MAX_TEXT_CHARS)
    assert output.endswith("[... 10 more characters cut by skillgym]")


def test_the_parser_is_registered_for_replay() -> None:
    assert STREAM_FORMATS.get(CLAUDE_FORMAT) is parse_claude_stream


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        ("cat .claude/skills/greeter/SKILL.md", [("greeter", ".claude/skills/greeter/SKILL.md")]),
        (
            "cd /w && sed -n '1,80p' /w/.agents/skills/tmux-tui/SKILL.md",
            [("tmux-tui", "/w/.agents/skills/tmux-tui/SKILL.md")],
        ),
        ("ls .claude/skills/greeter/SKILL.md", []),
        ("grep -l tmux .agents/skills/*/SKILL.md", []),
        ("head -n 5 docs/SKILL.md | tail -1", [("docs", "docs/SKILL.md")]),
        ("echo hi", []),
    ],
)
def test_skill_md_reads_are_reader_programs_on_a_skill_md(command: str, reads: list[tuple[str, str]]) -> None:
    assert skill_md_reads(command) == reads


def test_a_skill_md_outside_a_skills_folder_is_medium_evidence() -> None:
    assert (
        skill_read_evidence("greeter", "/w/.claude/skills/greeter/SKILL.md", via="Read").confidence == "high"
    )
    assert skill_read_evidence("docs", "docs/SKILL.md", via="Read").confidence == "medium"


@pytest.mark.parametrize(
    ("command", "script"),
    [
        ("/bin/bash -lc 'echo hi > made.txt && ls'", "echo hi > made.txt && ls"),
        ("bash -c 'printf \"%s\\n\" a'", 'printf "%s\\n" a'),
        ("ls -la", "ls -la"),
        ("bash -lc 'unterminated", "bash -lc 'unterminated"),
    ],
)
def test_unwrap_shell_returns_the_script_codex_ran(command: str, script: str) -> None:
    assert unwrap_shell(command) == script
