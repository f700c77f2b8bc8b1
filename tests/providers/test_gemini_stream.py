"""Tests for skillgym.providers.gemini_stream, on streams recorded from Gemini CLI 0.61.0 itself.

The files under ``data/gemini`` are what ``gemini -p ... --output-format stream-json`` printed against
the tests' scripted model server, with the trial's temporary path written as ``/trial``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillgym.plugins import STREAM_FORMATS
from skillgym.providers.gemini_stream import (
    GEMINI_FORMAT,
    GeminiStreamParser,
    parse_gemini_stream,
    shell_result,
)
from skillgym.providers.tracefmt import StreamParseError
from skillgym.trace import Message, SkillEvidence, TokenUsage, conversation

DATA = Path(__file__).parent / "data" / "gemini"


def recorded(name: str) -> list[bytes]:
    """The lines of a stream recorded from the real CLI."""
    return (DATA / f"{name}.jsonl").read_bytes().splitlines()


def line(**fields: object) -> bytes:
    return json.dumps(fields).encode()


def fed(lines: list[bytes]) -> GeminiStreamParser:
    parser = GeminiStreamParser()
    for raw in lines:
        parser.feed(raw)
    return parser


def test_the_parser_is_the_registered_stream_format() -> None:
    assert STREAM_FORMATS.get(GEMINI_FORMAT) is parse_gemini_stream


def test_an_answer_is_its_deltas_joined_with_the_cli_s_exact_token_counts() -> None:
    trace = parse_gemini_stream(recorded("answer"))
    assert trace.final_text == "Hello, team!"
    assert [(m.role, m.text) for m in trace.messages] == [("assistant", "Hello, team!")]
    assert trace.model == "gemini-2.5-flash"
    assert trace.session_id == "97d20950-83b9-46e7-b01f-880f6d691f0b"
    # input_tokens 1500 holds the 300 cached; total_tokens 1605 also holds 20 thoughts beside the 85 shown,
    # and output holds them too, as it does for the other providers.
    assert trace.usage == TokenUsage(input=1200, output=105, cache_read=300, reasoning=20, total=1605)
    assert trace.tool_calls == () and trace.skills == ()
    assert trace.is_error is False
    run = fed(recorded("answer")).run()
    assert (run.result_seen, run.status, run.errors, run.warnings) == (True, "success", (), ())


def test_tool_calls_carry_their_commands_outputs_and_exit_codes() -> None:
    trace = parse_gemini_stream(recorded("tools"))
    calls = [(c.name, c.command, c.output, c.exit_code, c.is_error) for c in trace.tool_calls]
    assert calls[1:4] == [
        ("run_shell_command", "echo hello > out.txt && cat out.txt", "hello", 0, False),
        (
            "run_shell_command",
            "echo checking; cat missing.txt",
            "checking\ncat: missing.txt: No such file or directory",
            1,
            True,
        ),
        ("run_shell_command", "exit 3", "", 3, True),
    ]
    assert [c.name for c in trace.tool_calls] == [
        "activate_skill",
        "run_shell_command",
        "run_shell_command",
        "run_shell_command",
        "read_file",
    ]
    assert json.loads(trace.tool_calls[0].input) == {"name": "greeter"}
    assert trace.final_text == "HELLO, new colleague!"
    # Summed by the CLI over the six model requests.
    assert trace.usage == TokenUsage(input=134, output=24, cache_read=50, reasoning=0, total=208)


def test_each_tool_call_knows_how_many_messages_came_before_it() -> None:
    # The recorded run calls five tools and only then answers: the answer comes after every call.
    trace = parse_gemini_stream(recorded("tools"))
    assert [c.after_messages for c in trace.tool_calls] == [0] * 5
    assert isinstance(conversation(trace)[-1], Message)
    assert [isinstance(e, Message) for e in conversation(trace)] == [False] * 5 + [True]
    # Text broken by a call: the call comes after the text so far, even while it still runs.
    parser = fed(
        [
            line(type="message", role="user", content="do it"),
            line(type="message", role="assistant", content="Let me ", delta=True),
            line(type="message", role="assistant", content="look.", delta=True),
            line(type="tool_use", tool_name="list_directory", tool_id="t1", parameters={"dir_path": "."}),
        ]
    )
    assert [c.after_messages for c in parser.trace().tool_calls] == [1]
    parser.feed(line(type="tool_result", tool_id="t1", status="success", output="Listed 0 item(s)."))
    parser.feed(line(type="message", role="assistant", content="Nothing here."))
    assert [c.after_messages for c in parser.trace().tool_calls] == [1]
    assert [m.text for m in parser.trace().messages] == ["Let me look.", "Nothing here."]


def test_activate_skill_is_high_confidence_evidence_like_claude_s_skill_tool() -> None:
    skills = parse_gemini_stream(recorded("tools")).skills
    assert skills == (
        SkillEvidence(
            skill="greeter", source="skill-tool", confidence="high", detail="activate_skill tool call"
        ),
        SkillEvidence(
            skill="greeter",
            source="read-skill-md",
            confidence="high",
            detail="read_file .gemini/skills/greeter/SKILL.md",
        ),
    )


def test_a_skill_the_cli_refused_to_activate_is_no_evidence() -> None:
    trace = parse_gemini_stream(recorded("no-skill"))
    (call,) = trace.tool_calls
    assert call.name == "activate_skill" and call.is_error is True
    assert call.output == "params/name must be equal to one of the allowed values"
    assert trace.skills == ()
    assert trace.final_text == "HELLO"


def test_a_skill_activation_cut_off_before_its_result_is_medium_evidence() -> None:
    lines = recorded("tools")
    assert b'"tool_use"' in lines[2] and b'"activate_skill"' in lines[2]
    trace = fed(lines[:3]).trace()
    assert trace.skills == (
        SkillEvidence(
            skill="greeter",
            source="skill-tool",
            confidence="medium",
            detail="activate_skill call without a result",
        ),
    )
    (call,) = trace.tool_calls
    assert (call.name, call.output, call.exit_code) == ("activate_skill", "", None)
    assert trace.usage is None and trace.is_error is False
    assert fed(lines[:3]).run().result_seen is False


def test_without_debug_only_a_silent_command_tells_its_exit_code() -> None:
    trace = parse_gemini_stream(recorded("no-debug"))
    assert [(c.command, c.output, c.exit_code) for c in trace.tool_calls] == [
        ("echo hello", "hello", None),
        ("exit 3", "", 3),
    ]


def test_an_api_error_ends_in_an_error_result_with_the_api_s_own_body() -> None:
    parser = fed(recorded("auth-401"))
    run = parser.run()
    assert (run.result_seen, run.status, run.error_type) == (True, "error", "unknown")
    assert '"code":401' in run.error_message and "API key not valid" in run.error_message
    trace = parser.trace()
    assert trace.is_error is True
    assert trace.usage == TokenUsage(input=0, output=0, cache_read=0, reasoning=0, total=0)


def test_the_cli_s_own_turn_limit_is_a_named_error() -> None:
    parser = fed(recorded("turn-limit"))
    run = parser.run()
    assert run.error_type == "FatalTurnLimitedError"
    assert "max session turns" in run.error_message
    assert [c.command for c in parser.trace().tool_calls] == ["echo hello > out.txt"]


def test_error_lines_are_kept_apart_by_severity() -> None:
    parser = fed(
        [
            line(type="error", severity="warning", message="Agent execution blocked: no"),
            line(type="error", severity="error", message="Maximum session turns exceeded"),
        ]
    )
    run = parser.run()
    assert run.warnings == ("Agent execution blocked: no",)
    assert run.errors == ("Maximum session turns exceeded",)


def test_text_broken_by_a_tool_call_is_two_messages_and_the_last_is_the_answer() -> None:
    trace = fed(
        [
            line(type="message", role="user", content="do it"),
            line(type="message", role="assistant", content="Let me ", delta=True),
            line(type="message", role="assistant", content="look.", delta=True),
            line(type="tool_use", tool_name="list_directory", tool_id="t1", parameters={"dir_path": "."}),
            line(type="tool_result", tool_id="t1", status="success", output="Listed 0 item(s)."),
            line(type="message", role="assistant", content="Nothing here."),
        ]
    ).trace()
    assert [m.text for m in trace.messages] == ["Let me look.", "Nothing here."]
    assert trace.final_text == "Nothing here."
    (call,) = trace.tool_calls
    assert (call.name, call.command, call.output, call.exit_code) == (
        "list_directory",
        None,
        "Listed 0 item(s).",
        None,
    )


def test_results_answer_their_own_call_whatever_the_order() -> None:
    trace = fed(
        [
            line(
                type="tool_use", tool_name="run_shell_command", tool_id="a", parameters={"command": "echo 1"}
            ),
            line(
                type="tool_use", tool_name="run_shell_command", tool_id="b", parameters={"command": "echo 2"}
            ),
            line(
                type="tool_result", tool_id="b", status="success", output="Output: 2\nProcess Group PGID: 9"
            ),
            line(
                type="tool_result", tool_id="a", status="success", output="Output: 1\nProcess Group PGID: 8"
            ),
        ]
    ).trace()
    assert [(c.command, c.output) for c in trace.tool_calls] == [("echo 1", "1"), ("echo 2", "2")]


def test_a_line_that_is_not_json_is_a_parse_error_naming_it() -> None:
    parser = GeminiStreamParser()
    parser.feed(recorded("answer")[0])
    with pytest.raises(StreamParseError) as caught:
        parser.feed(b"Segmentation fault")
    assert caught.value.line == 2
    assert "gemini -p" in str(caught.value) and "Segmentation fault" in str(caught.value)


@pytest.mark.parametrize(
    ("shown", "expected"),
    [
        ("Output: hello\nProcess Group PGID: 7", ("hello", 0)),
        ("Output: (empty)\nExit Code: 3\nProcess Group PGID: 7", ("", 3)),
        ("Output: a\nb\nExit Code: 2\nProcess Group PGID: 7", ("a\nb", 2)),
        ("Output: (empty)\nSignal: 9\nProcess Group PGID: 7", ("", None)),
        ("Output: (empty)\nError: spawn bash ENOENT\nExit Code: 127", ("", 127)),
        ("Output: (empty)\nError: spawn bash ENOENT", ("", None)),
        ("Command exited with code: 4", ("", 4)),
        ("Command was automatically cancelled because it exceeded the timeout", (None, None)),
        ("hello", ("hello", None)),
    ],
)
def test_shell_result_reads_the_exit_code_the_cli_shows(
    shown: str, expected: tuple[str | None, int | None]
) -> None:
    output, code = shell_result(shown)
    assert (output if expected[0] is not None else None, code) == expected
    if expected[0] is None:
        assert output == shown
