"""A scripted model server for the integration tests: the Anthropic Messages API, the OpenAI Responses API
and the Gemini API, all streamed as server-sent events, on 127.0.0.1 with an ephemeral port.

A test scripts the replies in order; each model request takes the next one, so the agent CLI under test
runs a conversation whose every turn, tool call and token count the test knows in advance. Requests are
recorded, so a test can also check what the CLI sent (the tool result of a real shell command, say).
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any, Self, TypeAlias

import msgspec


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    """One turn's token counts, each counted once: ``input`` is the fresh input, without cache reads
    or writes, as the Anthropic API counts it; each API's reply reports them in its own shape."""

    input: int
    output: int
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0


_NO_USAGE = Usage(input=1, output=1)


class Say(msgspec.Struct, frozen=True, kw_only=True):
    """A final text answer that ends the agent's turn."""

    text: str
    usage: Usage = _NO_USAGE
    delay_s: float = 0.0  # how long the model "thinks" before it answers


class Shell(msgspec.Struct, frozen=True, kw_only=True):
    """A shell command: Claude's ``Bash`` tool, Codex's ``exec_command``, Gemini's ``run_shell_command``."""

    command: str
    usage: Usage = _NO_USAGE


class UseTool(msgspec.Struct, frozen=True, kw_only=True):
    """Any other tool call, by its name and JSON input (Claude's ``Skill``, Gemini's ``activate_skill``)."""

    name: str
    input: dict[str, Any]
    usage: Usage = _NO_USAGE


class Fail(msgspec.Struct, frozen=True, kw_only=True):
    """An HTTP error answer in the API's own error shape (Gemini's names its status from ``status``)."""

    status: int
    message: str
    kind: str = "invalid_request_error"


Reply: TypeAlias = Say | Shell | UseTool | Fail


class Recorded(msgspec.Struct, frozen=True, kw_only=True):
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


# The Gemini API's model methods: POST /v1beta/models/<model>:<method> (streamed with ?alt=sse).
_GEMINI_PATH = re.compile(r"/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)")


class ModelServer:
    """Serves scripted replies until closed; use as a context manager (``with ModelServer() as s``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._replies: list[Reply] = []
        self.requests: list[Recorded] = []
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, replies: Sequence[Reply]) -> None:
        """Replace the queue of replies; each model request takes the next."""
        with self._lock:
            self._replies = list(replies)
            self.requests = []

    def left(self) -> int:
        with self._lock:
            return len(self._replies)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            if not self._replies:
                return Fail(status=500, message="the test's script has no reply left", kind="api_error")
            return self._replies.pop(0)


def _handler_for(server: ModelServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            path = self.path.split("?", 1)[0]
            if path.endswith("/messages/count_tokens"):
                self._send(200, "application/json", json.dumps({"input_tokens": 1}).encode())
                return
            gemini = _GEMINI_PATH.fullmatch(path)
            if gemini is not None and gemini["method"] == "countTokens":
                self._send(200, "application/json", json.dumps({"totalTokens": 1}).encode())
                return
            if gemini is None and not path.endswith(("/messages", "/responses")):
                self._send(404, "application/json", b'{"error": "not scripted"}')
                return
            body = json.loads(raw or b"{}")
            reply = server._next(Recorded(path=path, headers=dict(self.headers.items()), body=body))
            if isinstance(reply, Say) and reply.delay_s:
                time.sleep(reply.delay_s)  # each request has a thread of its own (ThreadingHTTPServer)
            if gemini is not None:
                self._gemini(reply, gemini["model"], stream=gemini["method"] == "streamGenerateContent")
                return
            anthropic = path.endswith("/messages")
            if isinstance(reply, Fail):
                self._send(reply.status, "application/json", _error_body(reply, anthropic=anthropic))
                return
            model = str(body.get("model", "scripted"))
            events = _anthropic_events(reply, model) if anthropic else _responses_events(reply, model)
            self._send(200, "text/event-stream", b"".join(_sse(name, data) for name, data in events))

        def _gemini(self, reply: Reply, model: str, *, stream: bool) -> None:
            if isinstance(reply, Fail):
                self._send(reply.status, "application/json", _gemini_error(reply))
            elif stream:
                chunks = _gemini_chunks(reply, model)
                self._send(200, "text/event-stream", b"".join(_gemini_sse(c) for c in chunks))
            else:
                # The whole answer at once: every part in one candidate, the usage of the last chunk.
                chunks = list(_gemini_chunks(reply, model))
                parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
                last = chunks[-1]
                candidate = {**last["candidates"][0], "content": {"role": "model", "parts": parts}}
                self._send(200, "application/json", json.dumps({**last, "candidates": [candidate]}).encode())

        def do_GET(self) -> None:
            self._send(404, "application/json", b'{"error": "not scripted"}')

        def _send(self, status: int, content_type: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep pytest's output to the test's own

    return Handler


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _error_body(reply: Fail, *, anthropic: bool) -> bytes:
    if anthropic:
        return json.dumps({"type": "error", "error": {"type": reply.kind, "message": reply.message}}).encode()
    return json.dumps({"error": {"type": reply.kind, "message": reply.message, "code": None}}).encode()


_ids = iter(range(1, 1_000_000))


def _id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):04d}"


def _anthropic_events(reply: Say | Shell | UseTool, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    usage = reply.usage
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": _id("msg"),
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                # The real API reports output 1 here and the final count in message_delta.
                "usage": {
                    "input_tokens": usage.input,
                    "cache_read_input_tokens": usage.cache_read,
                    "cache_creation_input_tokens": usage.cache_write,
                    "output_tokens": 1,
                },
            },
        },
    )
    if isinstance(reply, Say):
        yield "content_block_start", _block_start({"type": "text", "text": ""})
        yield "content_block_delta", _delta({"type": "text_delta", "text": reply.text})
        stop = "end_turn"
    else:
        name, tool_input = (
            ("Bash", {"command": reply.command, "description": "scripted command"})
            if isinstance(reply, Shell)
            else (reply.name, reply.input)
        )
        yield (
            "content_block_start",
            _block_start({"type": "tool_use", "id": _id("toolu"), "name": name, "input": {}}),
        )
        yield (
            "content_block_delta",
            _delta({"type": "input_json_delta", "partial_json": json.dumps(tool_input)}),
        )
        stop = "tool_use"
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": usage.output},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _block_start(block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": 0, "content_block": block}


def _delta(delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": 0, "delta": delta}


def _responses_events(reply: Say | Shell | UseTool, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    response_id = _id("resp")
    item: dict[str, Any]
    if isinstance(reply, Say):
        item = {
            "type": "message",
            "id": _id("msg"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
        }
    else:
        name, arguments = (
            ("exec_command", {"cmd": reply.command})
            if isinstance(reply, Shell)
            else (reply.name, reply.input)
        )
        item = {
            "type": "function_call",
            "id": _id("fc"),
            "call_id": _id("call"),
            "name": name,
            "arguments": json.dumps(arguments),
            "status": "completed",
        }
    usage = reply.usage
    yield "response.created", {"type": "response.created", "response": {"id": response_id, "model": model}}
    yield (
        "response.output_item.added",
        {"type": "response.output_item.added", "output_index": 0, "item": item},
    )
    if isinstance(reply, Say):
        yield (
            "response.output_text.delta",
            {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": reply.text,
            },
        )
    yield "response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}
    yield (
        "response.completed",
        {
            "type": "response.completed",
            "response": {
                "id": response_id,
                "model": model,
                "status": "completed",
                "output": [item],
                "usage": _responses_usage(usage),
            },
        },
    )


def _responses_usage(usage: Usage) -> dict[str, Any]:
    # The Responses API counts the whole prompt in input_tokens, cache reads and cache writes included,
    # and names those two parts in input_tokens_details.
    prompt = usage.input + usage.cache_read + usage.cache_write
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": usage.cache_read, "cache_write_tokens": usage.cache_write},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning},
        "total_tokens": prompt + usage.output,
    }


# google.rpc status names by HTTP status, as the Gemini API puts them in its error body.
_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def _gemini_error(reply: Fail) -> bytes:
    status = _GEMINI_STATUS.get(reply.status, "UNKNOWN")
    return json.dumps({"error": {"code": reply.status, "message": reply.message, "status": status}}).encode()


def _gemini_sse(chunk: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(chunk)}\r\n\r\n".encode()


def _gemini_chunks(reply: Say | Shell | UseTool, model: str) -> Iterator[dict[str, Any]]:
    """A streamed answer: text in two pieces (the CLI prints each as a delta), a function call whole; the
    last chunk carries the finish reason and the usage."""
    usage = reply.usage
    pieces: list[dict[str, Any]]
    if isinstance(reply, Say):
        half = len(reply.text) // 2
        pieces = (
            [{"text": reply.text[:half]}, {"text": reply.text[half:]}] if half else [{"text": reply.text}]
        )
    else:
        name, args = (
            ("run_shell_command", {"command": reply.command, "description": "scripted command"})
            if isinstance(reply, Shell)
            else (reply.name, reply.input)
        )
        pieces = [{"functionCall": {"name": name, "args": args}}]
    # promptTokenCount includes the cached part; thoughts are counted apart from the candidates.
    prompt = usage.input + usage.cache_read
    metadata: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": usage.output,
        "totalTokenCount": prompt + usage.output + usage.reasoning,
    }
    if usage.cache_read:
        metadata["cachedContentTokenCount"] = usage.cache_read
    if usage.reasoning:
        metadata["thoughtsTokenCount"] = usage.reasoning
    response_id = _id("gresp")
    for number, piece in enumerate(pieces, 1):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [piece]}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": response_id}
        if number == len(pieces):
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = metadata
        yield chunk
