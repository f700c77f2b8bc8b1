"""Gemini CLI's ``--output-format stream-json`` stream, parsed one line at a time into a Trace.

Lines, each one JSON object told apart by ``type``::

    {"type": "init", "session_id": "...", "model": "gemini-2.5-flash", "timestamp": "..."}
    {"type": "message", "role": "user", "content": "the prompt"}
    {"type": "message", "role": "assistant", "content": "Hel", "delta": true}
    {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "...", "parameters": {...}}
    {"type": "tool_result", "tool_id": "...", "status": "success"|"error", "output": "...",
     "error": {"type": "invalid_tool_params", "message": "..."}}
    {"type": "error", "severity": "warning"|"error", "message": "..."}
    {"type": "result", "status": "success"|"error", "error": {"type": "...", "message": "..."},
     "stats": {"total_tokens": 157, "input_tokens": 130, "output_tokens": 20, "cached": 30, "input": 100,
               "duration_ms": 276, "tool_calls": 0, "models": {...}}}

Assistant text comes as deltas; a run of deltas not broken by a tool call is one message. Token usage is
the final ``result`` line's ``stats``, summed by the CLI over every model request: ``input_tokens``
includes the cached part (``cached``), ``input`` is the rest, ``output_tokens`` is the visible output
alone, and ``total_tokens`` also counts the model's thoughts. The trace's ``output`` holds the thoughts,
as Claude's and Codex's do, so input + cache read + output is the total for every provider; the thoughts
themselves (``reasoning``) are what the total holds beyond the prompt and the visible output.

A shell tool result carries the exit code only as text. With ``--debug`` the CLI shows the model's own
view of the result (``Output: ...`` then ``Exit Code: N`` when it is not 0, ``Process Group PGID: N``),
so the code is exact; without it only a command that printed nothing says ``Command exited with code:
N``, and the code of any other command is unknown (None).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

import msgspec

from ..plugins import stream_format
from ..trace import Confidence, EvidenceSource, Message, SkillEvidence, TokenUsage, ToolCall, Trace
from .claude_stream import cap_text, decode_line, skill_md_reads, skill_read_evidence

GEMINI_FORMAT: Final = "gemini-stream-json"
SHELL_TOOL: Final = "run_shell_command"
SKILL_TOOL: Final = "activate_skill"
READ_TOOLS: Final = frozenset({"read_file", "read_many_files"})


class GeminiRun(msgspec.Struct, frozen=True, kw_only=True):
    """How the stream says the run ended; the provider turns it into an error class and message."""

    result_seen: bool = False
    status: str | None = None  # the result line's: "success" or "error"
    error_type: str | None = None  # the result's error type (FatalTurnLimitedError, ...); often "unknown"
    error_message: str = ""
    errors: tuple[str, ...] = ()  # error lines of severity "error", in order
    warnings: tuple[str, ...] = ()  # error lines of severity "warning": the run went on
    tools_started: int = 0


# Wire shapes: only the fields skillgym reads; unknown fields are skipped, and fields whose type may
# change between CLI versions are typed Any and checked where they are read.
class _Stats(msgspec.Struct, frozen=True, kw_only=True):
    total_tokens: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached: int | None = None
    input: int | None = None


class _Line(msgspec.Struct, frozen=True, kw_only=True):
    type: str = ""
    session_id: str | None = None
    model: str | None = None
    role: str | None = None
    content: Any = None
    delta: bool | None = None
    tool_name: str | None = None
    tool_id: str | None = None
    parameters: Any = None
    status: str | None = None
    output: Any = None
    error: Any = None
    severity: str | None = None
    message: Any = None
    stats: _Stats | None = None


_decoder: Final = msgspec.json.Decoder(_Line)
_encoder: Final = msgspec.json.Encoder()
_EXPECTED: Final = "one JSON object per line, as `gemini -p ... --output-format stream-json` prints"


class GeminiStreamParser:
    """Builds a Trace from stream-json lines fed one at a time; holds the trace so far, not the stream."""

    def __init__(self) -> None:
        self.lines = 0
        self._messages: list[Message] = []
        self._text: list[str] = []  # assistant deltas not yet closed into a message
        self._calls: list[ToolCall | None] = []  # None: a slot kept in order for a call still running
        # tool_id -> slot, name, parameters, and how many messages came before the call
        self._pending: dict[str, tuple[int, str, dict[str, Any], int]] = {}
        self._skills: list[SkillEvidence] = []
        self._model: str | None = None
        self._session: str | None = None
        self._result: _Line | None = None
        self._errors: list[str] = []
        self._warnings: list[str] = []

    def feed(self, raw: bytes) -> None:
        """Take one line (without its newline); raises ``StreamParseError`` for a line that is not JSON."""
        self.lines += 1
        event = decode_line(_decoder, raw, self.lines, _EXPECTED)
        if event is None:
            return
        kind = event.type
        if kind == "message":
            self._message(event)
            return
        self._close_text()
        if kind == "init":
            self._session = event.session_id or self._session
            self._model = event.model or self._model
        elif kind == "tool_use" and event.tool_name:
            parameters = event.parameters if isinstance(event.parameters, dict) else {}
            key = event.tool_id or f"anonymous-{len(self._calls)}"
            self._pending[key] = (len(self._calls), event.tool_name, parameters, len(self._messages))
            self._calls.append(None)
        elif kind == "tool_result" and event.tool_id in self._pending:
            self._tool_result(event)
        elif kind == "error":
            text = _str(event.message) or "error"
            (self._errors if event.severity == "error" else self._warnings).append(text)
        elif kind == "result":
            self._result = event

    @property
    def tools_started(self) -> int:
        """Tool calls seen so far, answered or not."""
        return len(self._calls)

    def trace(self) -> Trace:
        """The trace of everything fed so far; calls still running keep their input and no output."""
        messages = [*self._messages, *self._open_text()]
        calls = list(self._calls)
        skills = list(self._skills)
        for slot, name, parameters, before in self._pending.values():
            calls[slot] = _tool_call(name, parameters, before)
            if name == SKILL_TOOL and (skill := _str(parameters.get("name"))):
                # Started but never answered (the run was cut): it was attempted, not seen to load.
                skills.append(_evidence(skill, "medium", "activate_skill call without a result"))
        result = self._result
        stats = result.stats if result is not None else None
        return Trace(
            final_text=next((m.text for m in reversed(messages) if m.role == "assistant"), ""),
            messages=tuple(messages),
            tool_calls=tuple(c for c in calls if c is not None),
            skills=tuple(skills),
            usage=_usage(stats) if stats is not None else None,
            session_id=self._session,
            model=self._model,
            is_error=result is not None and result.status == "error",
        )

    def run(self) -> GeminiRun:
        """How the run ended, as far as the stream so far tells."""
        result = self._result
        error = result.error if result is not None and isinstance(result.error, dict) else {}
        return GeminiRun(
            result_seen=result is not None,
            status=result.status if result is not None else None,
            error_type=_str(error.get("type")),
            error_message=_str(error.get("message")) or "",
            errors=tuple(self._errors),
            warnings=tuple(self._warnings),
            tools_started=self.tools_started,
        )

    def _message(self, event: _Line) -> None:
        if event.role != "assistant":
            self._close_text()  # the prompt: not the agent's words
            return
        text = _str(event.content)
        if not text:
            return
        self._text.append(text)
        if not event.delta:
            self._close_text()

    def _open_text(self) -> list[Message]:
        return [Message(role="assistant", text=cap_text("".join(self._text)))] if self._text else []

    def _close_text(self) -> None:
        self._messages += self._open_text()
        self._text = []

    def _tool_result(self, event: _Line) -> None:
        assert event.tool_id is not None
        slot, name, parameters, before = self._pending.pop(event.tool_id)
        failed = event.status == "error"
        output = _str(event.output) or ""
        if failed and not output and isinstance(event.error, dict):
            output = _str(event.error.get("message")) or ""
        call = _tool_call(name, parameters, before, (output, failed))
        self._calls[slot] = call
        if not call.is_error:
            self._skills += _tool_evidence(name, parameters)


@stream_format(GEMINI_FORMAT)
def parse_gemini_stream(lines: Iterable[bytes]) -> Trace:
    """The Trace a recorded stream-json stream describes, read one line at a time (the replay parser)."""
    parser = GeminiStreamParser()
    for line in lines:
        parser.feed(line)
    return parser.trace()


def _tool_call(
    name: str, parameters: dict[str, Any], before: int, answer: tuple[str, bool] | None = None
) -> ToolCall:
    """A tool call after ``before`` messages; ``answer`` is its (output, failed) once the result came
    back, None while it runs."""
    command = _str(parameters.get("command")) if name == SHELL_TOOL else None
    output, failed = answer if answer is not None else ("", False)
    exit_code = None
    if command is not None and answer is not None and not failed:
        output, exit_code = shell_result(output)
    return ToolCall(
        name=name,
        command=command,
        input=cap_text(_encoder.encode(parameters).decode()),
        output=cap_text(output),
        exit_code=exit_code,
        is_error=failed or (exit_code is not None and exit_code != 0),
        after_messages=before,
    )


# The lines the CLI adds after a shell command's output in the model's view of it (``--debug``).
_TRAILER = re.compile(r"^(Error|Exit Code|Signal|Background PIDs|Process Group PGID): (.*)$")
_EXITED = re.compile(r"^Command exited with code: (-?\d+)$")


def shell_result(shown: str) -> tuple[str, int | None]:
    """(output, exit code) of a shell tool result as the CLI shows it; the code is None when not shown.

    ``Output: hello\\nExit Code: 1\\nProcess Group PGID: 7`` (``--debug``) is ``("hello", 1)``, and
    without an ``Exit Code`` line (nor an ``Error`` or ``Signal`` one) the code is 0. Without ``--debug``
    only ``Command exited with code: N`` (a command that printed nothing) tells the code.
    """
    if shown.startswith("Output: "):
        lines = shown[len("Output: ") :].split("\n")
        trailer: dict[str, str] = {}
        while len(lines) > 1 and (match := _TRAILER.match(lines[-1])):
            trailer[match[1]] = match[2]
            lines.pop()
        output = "\n".join(lines)
        output = "" if output == "(empty)" else output
        code = trailer.get("Exit Code")
        if code is not None and code.lstrip("-").isdigit():
            return output, int(code)
        return output, None if "Error" in trailer or "Signal" in trailer else 0
    exited = _EXITED.match(shown)
    if exited:
        return "", int(exited[1])
    return shown, None


def _tool_evidence(name: str, parameters: dict[str, Any]) -> list[SkillEvidence]:
    if name == SKILL_TOOL and (skill := _str(parameters.get("name"))):
        return [_evidence(skill, "high", "activate_skill tool call")]
    if name in READ_TOOLS:
        paths = [_str(parameters.get("file_path"))]
        include = parameters.get("include")
        if isinstance(include, list):
            paths += [_str(p) for p in include]
        found = []
        for path in paths:
            match = _SKILL_MD.fullmatch(path or "")
            if match and path:
                found.append(skill_read_evidence(match["name"], path, via=name))
        return found
    if name == SHELL_TOOL and (command := _str(parameters.get("command"))):
        return [skill_read_evidence(s, p, via="run_shell_command") for s, p in skill_md_reads(command)]
    return []


_SKILL_MD = re.compile(r"(?:.*/)?(?P<name>[^/]+)/SKILL\.md")


def _evidence(skill: str, confidence: Confidence, detail: str) -> SkillEvidence:
    source: EvidenceSource = "skill-tool"
    return SkillEvidence(skill=skill, source=source, confidence=confidence, detail=detail)


def _usage(stats: _Stats) -> TokenUsage:
    given = stats.input_tokens
    uncached = stats.input
    if uncached is None and given is not None:
        uncached = given - (stats.cached or 0)
    visible, total = stats.output_tokens, stats.total_tokens
    thoughts = None
    if given is not None and visible is not None and total is not None and total >= given + visible:
        thoughts = total - given - visible
    return TokenUsage(
        input=uncached,
        output=visible + thoughts if visible is not None and thoughts is not None else visible,
        cache_read=stats.cached,
        reasoning=thoughts,
        total=total,
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
