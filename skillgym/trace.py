"""What a provider hands back: the normalized trace of one agent run, whatever the agent CLI was."""

from __future__ import annotations

from typing import Literal, TypeAlias

from .model import Data

Role: TypeAlias = Literal["user", "assistant", "system"]
EvidenceSource: TypeAlias = Literal["skill-tool", "read-skill-md", "init-listed", "mention"]
Confidence: TypeAlias = Literal["high", "medium", "low"]


class TokenUsage(Data, frozen=True, kw_only=True):
    """Token counts as the CLI reported them; a count it did not report stays None, never guessed.

    Each token is counted once, the same way for every provider: ``input`` is the fresh input alone
    (neither read from nor written to the prompt cache), ``cache_read`` and ``cache_write`` are the cached
    parts, ``output`` includes ``reasoning``, and ``total`` = input + cache read + cache write + output.
    """

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    total: int | None = None


def with_total(usage: TokenUsage) -> TokenUsage:
    """``usage`` with ``total`` computed from its parts when the CLI printed none.

    The total is input + cache read + cache write + output (reasoning is part of output); it stays None
    when neither input nor output is known.
    """
    if usage.total is not None or (usage.input is None and usage.output is None):
        return usage
    parts = (usage.input, usage.output, usage.cache_read, usage.cache_write)
    return TokenUsage(
        input=usage.input,
        output=usage.output,
        cache_read=usage.cache_read,
        cache_write=usage.cache_write,
        reasoning=usage.reasoning,
        total=sum(p for p in parts if p is not None),
    )


class Message(Data, frozen=True, kw_only=True):
    """One message of the conversation, text only."""

    role: Role
    text: str


class ToolCall(Data, frozen=True, kw_only=True):
    """A tool the agent used; ``command`` is set for shell calls (what the anti-pattern engine reads).

    ``after_messages`` places the call in the conversation: how many of the trace's messages came before
    it. None when the order is not known (a trace written before skillgym recorded it).
    """

    name: str
    command: str | None = None
    input: str = ""
    output: str = ""
    exit_code: int | None = None
    is_error: bool = False
    after_messages: int | None = None  # how many of the trace's messages came before it; None: unknown


class SkillEvidence(Data, frozen=True, kw_only=True):
    """Why we believe the agent loaded a skill, and how sure we are."""

    skill: str
    source: EvidenceSource
    confidence: Confidence
    detail: str = ""


class Trace(Data, frozen=True, kw_only=True):
    """The normalized output of one provider invocation."""

    final_text: str = ""
    messages: tuple[Message, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    skills: tuple[SkillEvidence, ...] = ()
    usage: TokenUsage | None = None
    session_id: str | None = None
    model: str | None = None
    num_turns: int | None = None
    cost_usd: float | None = None
    is_error: bool = False  # the agent CLI itself reported the run as failed


def conversation(trace: Trace) -> list[Message | tuple[int, ToolCall]]:
    """The messages and tool calls in the order they happened; each call as (its number from 1, call).

    Calls keep their own order and their numbers (``tool_calls[number - 1]``). A call whose place is not
    known (``after_messages`` None) comes after every message, as does one that claims a place past the
    last message; one that claims a place before an earlier call's comes right after that call.
    """
    out: list[Message | tuple[int, ToolCall]] = []
    shown = 0  # messages placed so far
    last = len(trace.messages)
    for number, call in enumerate(trace.tool_calls, start=1):
        place = last if call.after_messages is None else min(max(call.after_messages, shown), last)
        out += trace.messages[shown:place]
        shown = place
        out.append((number, call))
    out += trace.messages[shown:]
    return out


def shell_commands(trace: Trace) -> list[str]:
    """The shell commands the agent actually ran, in order: what execution-lane checks read."""
    return [call.command for call in trace.tool_calls if call.command is not None]
