"""Codex's ``codex exec --json`` event stream, parsed one line at a time into a Trace.

Lines, each one JSON object told apart by ``type``::

    {"type": "thread.started", "thread_id": "..."}
    {"type": "turn.started"}
    {"type": "item.started"|"item.updated"|"item.completed", "item": {"id": "item_1", "type": ..., ...}}
    {"type": "turn.completed", "usage": {"input_tokens": 37, "cached_input_tokens": 7,
     "cache_write_input_tokens": 0, "output_tokens": 12, "reasoning_output_tokens": 2}}
    {"type": "turn.failed", "error": {"message": "..."}}
    {"type": "error", "message": "..."}

Item types: ``command_execution`` (command, aggregated_output, exit_code, status), ``agent_message``
(text), ``reasoning`` (text), ``file_change``, ``mcp_tool_call``, ``web_search``, ``todo_list`` and
``error`` — an error *item* is a warning the run survives (an unknown model's missing metadata, say), and
so is a top-level ``error`` event that announces a retry (``Reconnecting... 1/2 (...)``); any other
``error`` event and ``turn.failed`` end the run.

Codex's ``input_tokens`` is the whole prompt, as the Responses API counts it: cache reads
(``cached_input_tokens``) and cache writes (``cache_write_input_tokens``) are parts of it. The trace
stores ``input`` as the fresh part alone, so each token is counted once and input + cache read + cache
write + output is the total (``output_tokens`` holds ``reasoning_output_tokens``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

import msgspec

from ..plugins import stream_format
from ..trace import Message, SkillEvidence, TokenUsage, ToolCall, Trace
from .claude_stream import (
    cap_text,
    decode_line,
    skill_md_reads,
    skill_read_evidence,
    unwrap_shell,
)

CODEX_FORMAT: Final = "codex-json"
# Items that are the agent acting on the world: what a turn budget counts.
TOOL_ITEMS: Final = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search"})
# How codex announces that it retries the model request; the run may still succeed after one.
_RETRY: Final = re.compile(r"Reconnecting\.\.\.")
_USAGE_KEYS: Final = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)


class CodexRun(msgspec.Struct, frozen=True, kw_only=True):
    """How the stream says the run ended; the provider turns it into an error class and message."""

    thread_id: str | None = None
    turns_completed: int = 0
    turns_failed: int = 0
    errors: tuple[str, ...] = ()  # fatal: turn.failed and top-level error events, in order
    warnings: tuple[str, ...] = ()  # error items and retries the run went on after
    retries: int = 0  # the model request retried by codex itself (its "Reconnecting..." events)
    tools_started: int = 0
    tools_finished: int = 0


class _Item(msgspec.Struct, frozen=True, kw_only=True):
    id: str | None = None
    type: str = ""
    text: Any = None
    message: Any = None
    command: Any = None
    aggregated_output: Any = None
    exit_code: int | None = None
    status: str | None = None
    changes: Any = None
    server: Any = None
    tool: Any = None
    arguments: Any = None
    result: Any = None
    error: Any = None
    query: Any = None


class _Line(msgspec.Struct, frozen=True, kw_only=True):
    type: str = ""
    thread_id: str | None = None
    item: _Item | None = None
    usage: dict[str, Any] | None = None
    error: Any = None
    message: Any = None


_decoder: Final = msgspec.json.Decoder(_Line)
_encoder: Final = msgspec.json.Encoder()
_EXPECTED: Final = "one JSON object per line, as `codex exec --json` prints"


class CodexStreamParser:
    """Builds a Trace from ``codex exec --json`` lines fed one at a time; holds the trace, not the stream."""

    def __init__(self) -> None:
        self.lines = 0
        self._messages: list[Message] = []
        self._calls: list[ToolCall] = []
        self._slots: dict[str, int] = {}  # item id -> index in _calls, for a tool item seen starting
        self._skills: list[SkillEvidence] = []
        self._usage: dict[str, int] | None = None
        self._thread: str | None = None
        self._completed = 0
        self._failed = 0
        self._errors: list[str] = []
        self._warnings: list[str] = []
        self._finished = 0
        self._retries = 0

    def feed(self, raw: bytes) -> None:
        """Take one line (without its newline); raises ``StreamParseError`` for a line that is not JSON."""
        self.lines += 1
        event = decode_line(_decoder, raw, self.lines, _EXPECTED)
        if event is None:
            return
        kind = event.type
        if kind == "thread.started":
            self._thread = event.thread_id or self._thread
        elif kind in ("item.started", "item.updated", "item.completed") and event.item is not None:
            self._item(event.item, done=kind == "item.completed")
        elif kind == "turn.completed":
            self._completed += 1
            self._add_usage(event.usage or {})
        elif kind == "turn.failed":
            self._failed += 1
            self._fatal(_message(event.error) or "turn failed")
        elif kind == "error":
            self._error(_message(event.message) or _message(event.error) or "error")

    @property
    def tools_started(self) -> int:
        """Tool items (commands, file changes, MCP calls, web searches) seen so far."""
        return len(self._calls)

    @property
    def tools_finished(self) -> int:
        """Tool items seen completing (their ``item.completed`` line)."""
        return self._finished

    def trace(self) -> Trace:
        """The trace of everything fed so far."""
        usage = self._usage
        return Trace(
            final_text=next((m.text for m in reversed(self._messages)), ""),
            messages=tuple(self._messages),
            tool_calls=tuple(self._calls),
            skills=tuple(self._skills),
            usage=_usage(usage) if usage is not None else None,
            session_id=self._thread,
            num_turns=self._completed + self._failed if self._completed + self._failed else None,
            is_error=bool(self._errors),
        )

    def run(self) -> CodexRun:
        """How the run ended, as far as the stream so far tells."""
        return CodexRun(
            thread_id=self._thread,
            turns_completed=self._completed,
            turns_failed=self._failed,
            errors=tuple(self._errors),
            warnings=tuple(self._warnings),
            tools_started=self.tools_started,
            tools_finished=self._finished,
            retries=self._retries,
        )

    def _item(self, item: _Item, *, done: bool) -> None:
        if item.type in TOOL_ITEMS:
            slot = self._slots.get(item.id) if item.id is not None else None
            if slot is None:
                call = _tool_call(item, len(self._messages))
                slot = len(self._calls)
                self._calls.append(call)
                if item.id is not None:
                    self._slots[item.id] = slot
            else:
                # The call keeps the place in the conversation it had when it started.
                call = _tool_call(item, self._calls[slot].after_messages)
                self._calls[slot] = call
            if done:
                self._finished += 1
                self._slots.pop(item.id or "", None)
                if call.command is not None and call.exit_code == 0:
                    self._skills += [
                        skill_read_evidence(s, p, via="shell") for s, p in skill_md_reads(call.command)
                    ]
        elif not done:
            return  # messages and warnings are read once, whole
        elif item.type == "agent_message" and isinstance(item.text, str):
            self._messages.append(Message(role="assistant", text=cap_text(item.text)))
        elif item.type == "error":
            self._warnings.append(_message(item.message) or "error item")
        # reasoning and todo_list items are the agent's working notes, not its answer: not in the trace.

    def _error(self, message: str) -> None:
        if _RETRY.match(message):
            self._retries += 1
            self._warnings.append(message)
        else:
            self._fatal(message)

    def _fatal(self, message: str) -> None:
        # Codex prints one failure as an error event and then again as turn.failed: keep it once.
        if not self._errors or self._errors[-1] != message:
            self._errors.append(message)

    def _add_usage(self, usage: dict[str, Any]) -> None:
        counts = {k: v for k in _USAGE_KEYS if isinstance(v := usage.get(k), int)}
        if not counts:
            return
        summed = dict(self._usage or {})
        for key, value in counts.items():
            summed[key] = summed.get(key, 0) + value
        self._usage = summed


@stream_format(CODEX_FORMAT)
def parse_codex_stream(lines: Iterable[bytes]) -> Trace:
    """The Trace a recorded ``codex exec --json`` stream describes (the replay parser)."""
    parser = CodexStreamParser()
    for line in lines:
        parser.feed(line)
    return parser.trace()


def _tool_call(item: _Item, before: int | None) -> ToolCall:
    """The tool call an item describes, placed after ``before`` messages."""
    failed = item.status in ("failed", "declined")
    if item.type == "command_execution":
        raw = item.command if isinstance(item.command, str) else ""
        output = item.aggregated_output if isinstance(item.aggregated_output, str) else ""
        code = item.exit_code
        return ToolCall(
            name="shell",
            command=unwrap_shell(raw),
            input=raw,
            output=cap_text(output),
            exit_code=code,
            is_error=failed or (code is not None and code != 0),
            after_messages=before,
        )
    if item.type == "file_change":
        return ToolCall(name="apply_patch", input=_json(item.changes), is_error=failed, after_messages=before)
    if item.type == "mcp_tool_call":
        name = f"mcp:{item.server}/{item.tool}"
        output = _json(item.result) if item.result is not None else _json(item.error)
        return ToolCall(
            name=name,
            input=_json(item.arguments),
            output=output,
            is_error=failed or item.error is not None,
            after_messages=before,
        )
    return ToolCall(name=item.type, input=_json(item.query), is_error=failed, after_messages=before)


def _usage(counts: dict[str, int]) -> TokenUsage:
    given = counts.get("input_tokens")
    cached = counts.get("cached_input_tokens")
    written = counts.get("cache_write_input_tokens")
    return TokenUsage(
        input=given - (cached or 0) - (written or 0) if given is not None else None,
        output=counts.get("output_tokens"),
        cache_read=cached,
        cache_write=written,
        reasoning=counts.get("reasoning_output_tokens"),
    )


def _message(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        inner = value.get("message")
        return inner if isinstance(inner, str) else None
    return None


def _json(value: Any) -> str:
    if value is None:
        return ""
    return cap_text(value if isinstance(value, str) else _encoder.encode(value).decode())
