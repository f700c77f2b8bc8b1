"""skillgym's own trace stream (JSONL, one event per line) and the registry of stream parsers.

Events, each one JSON object on its own line, told apart by ``type``::

    {"type": "message", "role": "assistant", "text": "..."}
    {"type": "tool_call", "name": "Bash", "command": "ls", "input": "", "output": "a.txt", "exit_code": 0}
    {"type": "skill", "skill": "tmux-tui", "source": "skill-tool", "confidence": "high"}
    {"type": "usage", "input": 9, "output": 5, "cache_read": 0, "cache_write": 1, "total": 15}
    {"type": "result", "text": "final answer", "session_id": "...", "model": "...", "num_turns": 3}

Messages, tool calls and skill evidence keep their order, and a tool call's place among the messages is
where its line stands (``ToolCall.after_messages``: the messages on the lines before it). Each usage
record is one turn's usage (keys input, output, cache_read, cache_write, reasoning, total) and the
trace's usage is their field-wise sum; a count no record gave stays None, never guessed. At most one
result; without one, the final text is the last assistant message's text. ``is_error`` on the result
becomes ``Trace.is_error``. Blank lines are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final, TypeAlias

import msgspec

from ..errors import SkillgymError
from ..model import Data
from ..plugins import stream_format
from ..trace import (
    Confidence,
    EvidenceSource,
    Message,
    Role,
    SkillEvidence,
    TokenUsage,
    ToolCall,
    Trace,
    conversation,
)

TRACE_FORMAT: Final = "skillgym-trace"


class StreamParseError(SkillgymError, ValueError):
    """A provider stream line is not what its format allows; ``line`` is 1-based within the stream.

    ``expected`` says what the line should have been, ``problem`` what is wrong with it (for example
    ``Object missing required field `name` - at `$```) and ``found`` quotes its start.
    """

    def __init__(self, message: str, *, line: int, expected: str, problem: str, found: str) -> None:
        super().__init__(message)
        self.line = line
        self.expected = expected
        self.problem = problem
        self.found = found


class _Event(Data, frozen=True, kw_only=True, tag_field="type", omit_defaults=True):
    pass


class MessageEvent(_Event, frozen=True, kw_only=True, tag="message"):
    """A message of the conversation."""

    role: Role = "assistant"
    text: str


class ToolCallEvent(_Event, frozen=True, kw_only=True, tag="tool_call"):
    """A tool the agent used; ``command`` is set for shell calls."""

    name: str
    command: str | None = None
    input: str = ""
    output: str = ""
    exit_code: int | None = None
    is_error: bool = False


class SkillEvent(_Event, frozen=True, kw_only=True, tag="skill"):
    """Evidence that the agent loaded a skill."""

    skill: str
    source: EvidenceSource
    confidence: Confidence
    detail: str = ""


class UsageEvent(_Event, frozen=True, kw_only=True, tag="usage"):
    """Token counts of one turn, as the agent reported them."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    total: int | None = None


class ResultEvent(_Event, frozen=True, kw_only=True, tag="result"):
    """How the run ended: the final answer and the session's identity."""

    text: str = ""
    session_id: str | None = None
    model: str | None = None
    num_turns: int | None = None
    cost_usd: float | None = None
    is_error: bool = False


TraceEvent: TypeAlias = MessageEvent | ToolCallEvent | SkillEvent | UsageEvent | ResultEvent
StreamParser: TypeAlias = Callable[[Iterable[bytes]], Trace]

_EXPECTED: Final = (
    'one JSON object per line with "type" one of "message", "tool_call", "skill", "usage", "result"'
)
_decoder: Final = msgspec.json.Decoder(TraceEvent)
_encoder: Final = msgspec.json.Encoder()
_USAGE_FIELDS: Final = ("input", "output", "cache_read", "cache_write", "reasoning", "total")


def decode_event(line: bytes, number: int) -> TraceEvent:
    """One line of the stream as an event; ``number`` (1-based) is only used in the error."""
    try:
        return _decoder.decode(line)
    except msgspec.DecodeError as exc:
        found = line[:120].decode("utf-8", errors="replace") + ("..." if len(line) > 120 else "")
        raise StreamParseError(
            f"line {number}: expected {_EXPECTED}; {exc} (found {found!r})",
            line=number,
            expected=_EXPECTED,
            problem=str(exc),
            found=found,
        ) from exc


@stream_format(TRACE_FORMAT)
def parse_trace_stream(lines: Iterable[bytes]) -> Trace:
    """The Trace a skillgym-trace stream describes, read one line at a time.

    Only the trace being built is held, never the whole stream. Raises ``StreamParseError`` naming the
    first bad line (1-based) and what was expected there.
    """
    messages: list[Message] = []
    calls: list[ToolCall] = []
    skills: list[SkillEvidence] = []
    usage: dict[str, int] | None = None
    result: ResultEvent | None = None
    result_line = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        event = decode_event(line, number)
        if isinstance(event, MessageEvent):
            messages.append(Message(role=event.role, text=event.text))
        elif isinstance(event, ToolCallEvent):
            calls.append(
                ToolCall(
                    name=event.name,
                    command=event.command,
                    input=event.input,
                    output=event.output,
                    exit_code=event.exit_code,
                    is_error=event.is_error,
                    after_messages=len(messages),
                )
            )
        elif isinstance(event, SkillEvent):
            skills.append(
                SkillEvidence(
                    skill=event.skill, source=event.source, confidence=event.confidence, detail=event.detail
                )
            )
        elif isinstance(event, UsageEvent):
            usage = _add_usage(usage, event)
        else:
            if result is not None:
                raise StreamParseError(
                    f"line {number}: expected at most one result event, but line {result_line} already "
                    "had one; keep only the last",
                    line=number,
                    expected="at most one result event",
                    problem=f"line {result_line} already had one",
                    found="a second result event",
                )
            result, result_line = event, number
    final_text = result.text if result is not None else _last_assistant_text(messages)
    return Trace(
        final_text=final_text,
        messages=tuple(messages),
        tool_calls=tuple(calls),
        skills=tuple(skills),
        usage=TokenUsage(**usage) if usage is not None else None,
        session_id=result.session_id if result else None,
        model=result.model if result else None,
        num_turns=result.num_turns if result else None,
        cost_usd=result.cost_usd if result else None,
        is_error=result.is_error if result else False,
    )


def encode_trace_stream(trace: Trace) -> bytes:
    """``trace`` as a skillgym-trace stream: messages and tool calls in order, skills, usage, the result.

    ``parse_trace_stream(encode_trace_stream(t).splitlines()) == t`` for every trace whose calls know their
    place (``after_messages`` set, never decreasing, at most the number of messages). A call whose place
    is unknown is written after every message, and is read back with that place.
    """
    events: list[TraceEvent] = []
    for entry in conversation(trace):
        if isinstance(entry, Message):
            events.append(MessageEvent(role=entry.role, text=entry.text))
            continue
        _number, c = entry
        events.append(
            ToolCallEvent(
                name=c.name,
                command=c.command,
                input=c.input,
                output=c.output,
                exit_code=c.exit_code,
                is_error=c.is_error,
            )
        )
    events += [
        SkillEvent(skill=s.skill, source=s.source, confidence=s.confidence, detail=s.detail)
        for s in trace.skills
    ]
    if trace.usage is not None:
        events.append(UsageEvent(**{f: getattr(trace.usage, f) for f in _USAGE_FIELDS}))
    events.append(
        ResultEvent(
            text=trace.final_text,
            session_id=trace.session_id,
            model=trace.model,
            num_turns=trace.num_turns,
            cost_usd=trace.cost_usd,
            is_error=trace.is_error,
        )
    )
    return b"".join(_encoder.encode(event) + b"\n" for event in events)


def _add_usage(total: dict[str, int] | None, event: UsageEvent) -> dict[str, int]:
    summed = dict(total or {})
    for field in _USAGE_FIELDS:
        value = getattr(event, field)
        if value is not None:
            summed[field] = summed.get(field, 0) + value
    return summed


def _last_assistant_text(messages: list[Message]) -> str:
    return next((m.text for m in reversed(messages) if m.role == "assistant"), "")
