"""Claude Code's ``--output-format stream-json`` stream, parsed one line at a time into a Trace.

Lines, each one JSON object told apart by ``type`` (and ``subtype``)::

    {"type": "system", "subtype": "init", "model": "...", "tools": [...], "skills": [...], ...}
    {"type": "system", "subtype": "api_retry", "attempt": 1, "error_status": 529, ...}
    {"type": "assistant", "message": {"content": [{"type": "text"|"tool_use"|"thinking", ...}], ...}}
    {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "...", ...}]}}
    {"type": "result", "subtype": "success"|"error_max_turns"|..., "is_error": false, "num_turns": 2,
     "result": "...", "api_error_status": null, "api_error": "connection_failed", "total_cost_usd": 0.01,
     "usage": {...}}

A failed API request still ends in subtype ``success``, with ``is_error`` true and the failure in
``api_error_status`` (the HTTP status) or ``api_error`` (``connection_failed`` when nothing answered).

Token usage is taken from the final ``result`` line only: the usage on assistant lines is a snapshot taken
when each message started (its output count is 1), not the final count. The helpers that find a SKILL.md
being read in a shell command are shared with the Codex parser.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from typing import Any, Final, TypeVar

import msgspec

from ..plugins import stream_format
from ..trace import Confidence, EvidenceSource, Message, SkillEvidence, TokenUsage, ToolCall, Trace
from .tracefmt import StreamParseError

CLAUDE_FORMAT: Final = "claude-stream-json"
# One message or tool output kept in the trace is cut here, so a tool that prints a whole log file cannot
# grow memory (or trace.json) without bound; the raw stream in stdout.txt still has all of it.
MAX_TEXT_CHARS: Final = 256 * 1024
_SHELL_TOOLS: Final = frozenset({"Bash"})
_READ_TOOLS: Final = frozenset({"Read"})
_SKILL_TOOLS: Final = frozenset({"Skill"})


class ClaudeRun(msgspec.Struct, frozen=True, kw_only=True):
    """How the stream says the run ended; the provider turns it into an error class and message."""

    result_seen: bool = False
    subtype: str | None = None
    is_error: bool = False
    num_turns: int | None = None
    result_text: str = ""
    api_error_status: int | None = None
    api_error_type: str | None = None
    api_error: str | None = None  # what kind of API failure, when there was no HTTP answer to name it
    errors: tuple[str, ...] = ()
    terminal_reason: str | None = None
    retries: int = 0  # api_retry lines: how often the CLI retried a failed API request
    last_retry_status: int | None = None


# Wire shapes: only the fields skillgym reads. Unknown fields are skipped (the CLI adds new ones often),
# and fields whose type has changed between CLI versions are typed Any and checked where they are read.
class _Usage(msgspec.Struct, frozen=True, kw_only=True):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    output_tokens_details: dict[str, Any] | None = None


class _Block(msgspec.Struct, frozen=True, kw_only=True):
    type: str = ""
    text: Any = None
    id: str | None = None
    name: str | None = None
    input: Any = None
    tool_use_id: str | None = None
    content: Any = None
    is_error: bool | None = None


class _Message(msgspec.Struct, frozen=True, kw_only=True):
    model: str | None = None
    content: list[_Block] | str = []


class _Line(msgspec.Struct, frozen=True, kw_only=True):
    type: str = ""
    subtype: str | None = None
    session_id: str | None = None
    model: str | None = None
    skills: list[Any] = []
    message: _Message | None = None
    is_error: bool = False
    num_turns: int | None = None
    result: Any = None
    total_cost_usd: float | None = None
    usage: _Usage | None = None
    api_error_status: int | None = None
    api_error_type: str | None = None
    api_error: Any = None
    errors: list[Any] = []
    terminal_reason: str | None = None
    error_status: int | None = None


T = TypeVar("T")

_decoder: Final = msgspec.json.Decoder(_Line)
_encoder: Final = msgspec.json.Encoder()
_EXPECTED: Final = "one JSON object per line, as `claude -p --output-format stream-json --verbose` prints"


class ClaudeStreamParser:
    """Builds a Trace from stream-json lines fed one at a time; holds the trace so far, not the stream."""

    def __init__(self) -> None:
        self.lines = 0
        self._messages: list[Message] = []
        self._calls: list[ToolCall | None] = []  # None: a slot kept in order for a call still running
        # tool_use id -> slot, name, input, and how many messages came before the call
        self._pending: dict[str, tuple[int, str, dict[str, Any], int]] = {}
        self._skills: list[SkillEvidence] = []
        self._listed: list[SkillEvidence] = []
        self._model: str | None = None
        self._session: str | None = None
        self._result: _Line | None = None
        self._retries = 0
        self._retry_status: int | None = None

    def feed(self, raw: bytes) -> None:
        """Take one line (without its newline); raises ``StreamParseError`` for a line that is not JSON."""
        self.lines += 1
        event = decode_line(_decoder, raw, self.lines, _EXPECTED)
        if event is None:
            return
        self._session = event.session_id or self._session
        if event.type == "system":
            self._system(event)
        elif event.type == "assistant" and event.message is not None:
            self._assistant(event.message)
        elif event.type == "user" and event.message is not None:
            self._user(event.message)
        elif event.type == "result":
            self._result = event

    def trace(self) -> Trace:
        """The trace of everything fed so far; calls still running keep their input and no output."""
        calls = list(self._calls)
        skills = list(self._skills)
        for slot, name, tool_input, before in self._pending.values():
            calls[slot] = _tool_call(name, tool_input, before)
            if name in _SKILL_TOOLS and (skill := _str(tool_input.get("skill"))):
                # Started but never answered (the run was cut): it was attempted, not seen to load.
                skills.append(_evidence(skill, "skill-tool", "medium", "Skill tool call without a result"))
        result = self._result
        usage = _usage(result.usage) if result is not None and result.usage is not None else None
        final = _str(result.result) if result is not None else None
        return Trace(
            final_text=final if final is not None else _last_text(self._messages),
            messages=tuple(self._messages),
            tool_calls=tuple(c for c in calls if c is not None),
            skills=(*skills, *self._listed),
            usage=usage,
            session_id=self._session,
            model=self._model,
            num_turns=result.num_turns if result is not None else None,
            cost_usd=result.total_cost_usd if result is not None else None,
            is_error=result.is_error if result is not None else False,
        )

    def run(self) -> ClaudeRun:
        """How the run ended, as far as the stream so far tells."""
        result = self._result
        if result is None:
            return ClaudeRun(retries=self._retries, last_retry_status=self._retry_status)
        return ClaudeRun(
            result_seen=True,
            subtype=result.subtype,
            is_error=result.is_error,
            num_turns=result.num_turns,
            result_text=_str(result.result) or "",
            api_error_status=result.api_error_status,
            api_error_type=result.api_error_type,
            api_error=_str(result.api_error),
            errors=tuple(str(e) for e in result.errors),
            terminal_reason=result.terminal_reason,
            retries=self._retries,
            last_retry_status=self._retry_status,
        )

    def _system(self, event: _Line) -> None:
        if event.subtype == "init":
            self._model = event.model or self._model
            # Everything the CLI found: the project's skills and its built-in ones alike, so low confidence.
            names = [n for n in (_skill_name(s) for s in event.skills) if n]
            self._listed = [_evidence(n, "init-listed", "low", "listed by claude at startup") for n in names]
        elif event.subtype == "api_retry":
            self._retries += 1
            self._retry_status = event.error_status

    def _assistant(self, message: _Message) -> None:
        if isinstance(message.content, str):
            self._messages.append(Message(role="assistant", text=cap_text(message.content)))
            return
        for block in message.content:
            if block.type == "text" and isinstance(block.text, str) and block.text:
                self._messages.append(Message(role="assistant", text=cap_text(block.text)))
            elif block.type == "tool_use" and block.name:
                tool_input = block.input if isinstance(block.input, dict) else {}
                self._pending[block.id or f"anonymous-{len(self._calls)}"] = (
                    len(self._calls),
                    block.name,
                    tool_input,
                    len(self._messages),
                )
                self._calls.append(None)

    def _user(self, message: _Message) -> None:
        if isinstance(message.content, str):
            return  # the prompt, or text the CLI injected (a loaded skill's body): not the agent's words
        for block in message.content:
            if block.type != "tool_result" or block.tool_use_id not in self._pending:
                continue
            slot, name, tool_input, before = self._pending.pop(block.tool_use_id)
            output = _result_text(block.content)
            failed = bool(block.is_error)
            self._calls[slot] = _tool_call(name, tool_input, before, (output, failed))
            if not failed:
                self._skills.extend(_tool_evidence(name, tool_input))


@stream_format(CLAUDE_FORMAT)
def parse_claude_stream(lines: Iterable[bytes]) -> Trace:
    """The Trace a recorded stream-json stream describes, read one line at a time (the replay parser)."""
    parser = ClaudeStreamParser()
    for line in lines:
        parser.feed(line)
    return parser.trace()


def decode_line(decoder: msgspec.json.Decoder[T], raw: bytes, number: int, expected: str) -> T | None:
    """Stream line ``number`` decoded, None for a blank one; a ``StreamParseError`` quoting it otherwise."""
    line = raw.strip()
    if not line:
        return None
    try:
        return decoder.decode(line)
    except msgspec.DecodeError as exc:
        raise stream_error(number, expected, exc, line) from exc


def stream_error(number: int, expected: str, exc: Exception, line: bytes) -> StreamParseError:
    """A ``StreamParseError`` for line ``number`` that quotes the line's start."""
    found = line[:120].decode("utf-8", errors="replace") + ("..." if len(line) > 120 else "")
    return StreamParseError(
        f"line {number}: expected {expected}; {exc} (found {found!r})",
        line=number,
        expected=expected,
        problem=str(exc),
        found=found,
    )


def cap_text(text: str) -> str:
    """``text`` cut to ``MAX_TEXT_CHARS``, saying how much was cut."""
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return text[:MAX_TEXT_CHARS] + f"\n[... {len(text) - MAX_TEXT_CHARS} more characters cut by skillgym]"


# A SKILL.md path inside a command or a Read; the folder right above it names the skill.
_SKILL_MD = re.compile(r"(?P<path>(?:[^\s'\"`;|&<>()]*/)?(?P<name>[^\s/'\"`;|&<>()]+)/SKILL\.md)\b")
_SEGMENTS = re.compile(r"&&|\|\||[;|\n]")
# Programs that print a file: running one on a SKILL.md is the agent reading the skill.
READERS: Final = frozenset({"cat", "head", "tail", "sed", "awk", "less", "more", "nl", "bat", "view", "tac"})


def skill_md_reads(command: str) -> list[tuple[str, str]]:
    """(skill, path) for each SKILL.md that a reader program (``cat``, ``sed -n``, ...) prints in ``command``.

    A SKILL.md merely listed or searched (``ls``, ``grep -l``) is not a read.
    """
    found: list[tuple[str, str]] = []
    for segment in _SEGMENTS.split(command):
        words = segment.strip().split(None, 1)
        if not words or words[0].rsplit("/", 1)[-1] not in READERS:
            continue
        found += [(m["name"], m["path"]) for m in _SKILL_MD.finditer(segment)]
    return found


def skill_read_evidence(skill: str, path: str, *, via: str) -> SkillEvidence:
    """Evidence that ``path`` (a SKILL.md) was read: high inside a ``skills/<name>/`` folder, else medium."""
    native = f"skills/{skill}/SKILL.md"
    confidence: Confidence = "high" if path == native or path.endswith("/" + native) else "medium"
    return _evidence(skill, "read-skill-md", confidence, f"{via} {path}")


def unwrap_shell(command: str) -> str:
    """The script of ``bash -lc '<script>'`` (how Codex reports commands), else ``command`` unchanged."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if (
        len(words) == 3
        and words[0].rsplit("/", 1)[-1] in {"bash", "sh", "zsh", "dash"}
        and words[1] in {"-c", "-lc", "-ilc"}
    ):
        return words[2]
    return command


def _tool_call(
    name: str, tool_input: dict[str, Any], before: int, answer: tuple[str, bool] | None = None
) -> ToolCall:
    """A tool call after ``before`` messages; ``answer`` is its (output, failed) once the result came
    back, None while it runs."""
    command = _str(tool_input.get("command")) if name in _SHELL_TOOLS else None
    output, failed = answer if answer is not None else ("", False)
    exit_code = None
    if command is not None and answer is not None:
        exit_code = _exit_code(output) if failed else 0
    return ToolCall(
        name=name,
        command=command,
        input=cap_text(_encoder.encode(tool_input).decode()),
        output=cap_text(output),
        exit_code=exit_code,
        is_error=failed,
        after_messages=before,
    )


_EXIT_LINE = re.compile(r"^Exit code (\d+)")


def _exit_code(output: str) -> int | None:
    # A failed Bash result starts "Exit code N"; other failures (a timeout, a refusal) carry none.
    match = _EXIT_LINE.match(output)
    return int(match[1]) if match else None


def _tool_evidence(name: str, tool_input: dict[str, Any]) -> list[SkillEvidence]:
    if name in _SKILL_TOOLS and (skill := _str(tool_input.get("skill"))):
        return [_evidence(skill, "skill-tool", "high", "Skill tool call")]
    if name in _READ_TOOLS and (path := _str(tool_input.get("file_path"))):
        match = _SKILL_MD.fullmatch(path)
        return [skill_read_evidence(match["name"], path, via="Read")] if match else []
    if name in _SHELL_TOOLS and (command := _str(tool_input.get("command"))):
        return [skill_read_evidence(s, p, via="Bash") for s, p in skill_md_reads(command)]
    return []


def _evidence(skill: str, source: EvidenceSource, confidence: Confidence, detail: str) -> SkillEvidence:
    return SkillEvidence(skill=skill, source=source, confidence=confidence, detail=detail)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _usage(usage: _Usage) -> TokenUsage:
    details = usage.output_tokens_details or {}
    thinking = details.get("thinking_tokens")
    return TokenUsage(
        input=usage.input_tokens,
        output=usage.output_tokens,
        cache_read=usage.cache_read_input_tokens,
        cache_write=usage.cache_creation_input_tokens,
        reasoning=thinking if isinstance(thinking, int) else None,
    )


def _skill_name(entry: Any) -> str | None:
    # Plain names in 2.x; an object with a name in some builds.
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict):
        return _str(entry.get("name"))
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _last_text(messages: list[Message]) -> str:
    return next((m.text for m in reversed(messages) if m.role == "assistant"), "")
