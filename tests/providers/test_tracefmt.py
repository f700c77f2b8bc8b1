"""Tests for skillgym.providers.tracefmt: skillgym's own trace stream."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillgym.plugins import STREAM_FORMATS
from skillgym.providers.tracefmt import (
    TRACE_FORMAT,
    StreamParseError,
    encode_trace_stream,
    parse_trace_stream,
)
from skillgym.trace import Message, SkillEvidence, TokenUsage, ToolCall, Trace

STREAM = b"""\
{"type":"message","role":"user","text":"send hello"}
{"type":"message","role":"assistant","text":"I'll use tmux."}
{"type":"skill","skill":"tmux-tui","source":"skill-tool","confidence":"high"}
{"type":"tool_call","name":"Bash","command":"tmux new -d -s a","input":"{}","output":"","exit_code":0}

{"type":"usage","input":100,"output":20,"cache_read":5}
{"type":"usage","input":50,"output":10,"reasoning":3}
{"type":"result","text":"done","session_id":"s-1","model":"sonnet","num_turns":3,"is_error":false}
"""


def parse(data: bytes) -> Trace:
    return parse_trace_stream(data.splitlines())


def test_a_stream_becomes_a_trace() -> None:
    trace = parse(STREAM)
    assert trace.final_text == "done"
    assert trace.messages == (
        Message(role="user", text="send hello"),
        Message(role="assistant", text="I'll use tmux."),
    )
    assert trace.skills == (SkillEvidence(skill="tmux-tui", source="skill-tool", confidence="high"),)
    assert trace.tool_calls == (
        ToolCall(
            name="Bash", command="tmux new -d -s a", input="{}", output="", exit_code=0, after_messages=2
        ),
    )
    assert (trace.session_id, trace.model, trace.num_turns) == ("s-1", "sonnet", 3)


def test_a_tool_call_s_place_among_the_messages_is_where_its_line_stands() -> None:
    stream = b"""\
{"type":"tool_call","name":"Skill","input":"{\\"skill\\":\\"tmux-tui\\"}"}
{"type":"message","text":"Starting the REPL."}
{"type":"tool_call","name":"Bash","command":"tmux new -d -s a","exit_code":0}
{"type":"skill","skill":"tmux-tui","source":"skill-tool","confidence":"high"}
{"type":"tool_call","name":"Bash","command":"tmux ls","exit_code":0}
{"type":"message","text":"Done."}
"""
    trace = parse(stream)
    assert [c.after_messages for c in trace.tool_calls] == [0, 1, 1]
    assert [(c.name, c.command) for c in trace.tool_calls][1:] == [
        ("Bash", "tmux new -d -s a"),
        ("Bash", "tmux ls"),
    ]
    # Written back in that order: messages and calls interleaved, then the skills, then the result.
    assert [line.split(b'"', 4)[3] for line in encode_trace_stream(trace).splitlines()] == [
        b"tool_call",
        b"message",
        b"tool_call",
        b"tool_call",
        b"message",
        b"skill",
        b"result",
    ]


def test_usage_records_add_up_and_missing_counts_stay_none() -> None:
    usage = parse(STREAM).usage
    assert usage == TokenUsage(input=150, output=30, cache_read=5, reasoning=3)
    assert usage is not None
    assert usage.cache_write is None
    assert usage.total is None


def test_no_usage_record_means_no_usage() -> None:
    assert parse(b'{"type":"result","text":"x"}').usage is None


def test_without_a_result_the_last_assistant_message_is_the_final_text() -> None:
    trace = parse(b'{"type":"message","text":"first"}\n{"type":"message","text":"last"}\n')
    assert trace.final_text == "last"
    assert trace.session_id is None


@pytest.mark.parametrize(
    ("line", "detail"),
    [
        (b"{not json", "malformed"),
        (b'{"type":"thinking","text":"x"}', "Invalid value 'thinking' - at `$.type`"),
        (b'{"text":"x"}', "missing required field `type`"),
        (b'{"type":"tool_call","name":"Bash","exit_code":"zero"}', "at `$.exit_code`"),
        (b'{"type":"message","text":"x","colour":"red"}', "unknown field `colour`"),
        (b'{"type":"skill","skill":"x","source":"guess","confidence":"high"}', "at `$.source`"),
        (b"[1, 2]", "Expected `object`"),
    ],
)
def test_a_bad_line_is_named_with_what_was_expected(line: bytes, detail: str) -> None:
    stream = [b'{"type":"message","text":"ok"}', line]
    with pytest.raises(StreamParseError) as caught:
        parse_trace_stream(stream)
    error = caught.value
    assert error.line == 2
    assert str(error).startswith('line 2: expected one JSON object per line with "type" one of')
    assert detail.lower() in str(error).lower()
    assert isinstance(error, ValueError)


def test_a_second_result_is_an_error() -> None:
    with pytest.raises(StreamParseError, match="line 3: expected at most one result event, but line 1"):
        parse(b'{"type":"result"}\n{"type":"message","text":"x"}\n{"type":"result"}\n')


def test_parsing_is_incremental_and_stops_at_the_first_bad_line() -> None:
    pulled: list[int] = []

    def lines() -> Iterator[bytes]:
        for number, line in enumerate([b'{"type":"message","text":"a"}', b"oops", b"never read"], 1):
            pulled.append(number)
            yield line

    with pytest.raises(StreamParseError):
        parse_trace_stream(lines())
    assert pulled == [1, 2]


def test_encoding_is_one_compact_event_per_line_ending_with_the_result() -> None:
    trace = Trace(final_text="bye", tool_calls=(ToolCall(name="Bash", command="ls", exit_code=0),))
    assert encode_trace_stream(trace) == (
        b'{"type":"tool_call","name":"Bash","command":"ls","exit_code":0}\n{"type":"result","text":"bye"}\n'
    )


def test_the_registry_knows_this_format() -> None:
    assert STREAM_FORMATS.get(TRACE_FORMAT) is parse_trace_stream
    assert TRACE_FORMAT == "skillgym-trace"


counts = st.none() | st.integers(min_value=0, max_value=2**53)
texts = st.text(max_size=40)
messages = st.lists(
    st.builds(Message, role=st.sampled_from(["user", "assistant", "system"]), text=texts), max_size=4
).map(tuple)
calls = st.builds(
    ToolCall,
    name=texts,
    command=st.none() | texts,
    input=texts,
    output=texts,
    exit_code=st.none() | st.integers(min_value=-255, max_value=255),
    is_error=st.booleans(),
)
skills = st.lists(
    st.builds(
        SkillEvidence,
        skill=texts,
        source=st.sampled_from(["skill-tool", "read-skill-md", "init-listed", "mention"]),
        confidence=st.sampled_from(["high", "medium", "low"]),
        detail=texts,
    ),
    max_size=3,
).map(tuple)
usages = st.none() | st.builds(
    TokenUsage,
    input=counts,
    output=counts,
    cache_read=counts,
    cache_write=counts,
    reasoning=counts,
    total=counts,
)


@st.composite
def traces(draw: st.DrawFn) -> Trace:
    """A trace whose tool calls each stand after some of its messages, never going back, as in a stream."""
    said = draw(messages)
    places = sorted(draw(st.lists(st.integers(0, len(said)), max_size=4)))
    return Trace(
        final_text=draw(texts),
        messages=said,
        tool_calls=tuple(msgspec.structs.replace(draw(calls), after_messages=place) for place in places),
        skills=draw(skills),
        usage=draw(usages),
        session_id=draw(st.none() | texts),
        model=draw(st.none() | texts),
        num_turns=draw(st.none() | st.integers(min_value=0, max_value=1000)),
        cost_usd=draw(st.none() | st.floats(min_value=0, max_value=1e6, allow_nan=False)),
    )


@given(traces())
def test_encode_then_parse_gives_back_the_same_trace(trace: Trace) -> None:
    encoded = encode_trace_stream(trace)
    assert parse_trace_stream(encoded.splitlines(keepends=True)) == trace
    assert encoded.count(b"\n") == len(encoded.splitlines())


def test_a_trace_that_does_not_know_its_order_is_written_messages_first() -> None:
    old = Trace(
        messages=(Message(role="assistant", text="a"), Message(role="assistant", text="b")),
        tool_calls=(ToolCall(name="Bash", command="ls"),),
    )
    back = parse_trace_stream(encode_trace_stream(old).splitlines())
    assert [c.after_messages for c in back.tool_calls] == [2]
    assert back.messages == old.messages
