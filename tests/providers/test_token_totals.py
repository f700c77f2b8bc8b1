"""Every stream parser's token usage means the same thing: each token counted once, so that
total = fresh input + cache read + cache write + output, with reasoning inside output.

One model request is given to each parser in its own CLI's shape: 1200 fresh input tokens, 300 read
from the prompt cache, 40 written to it (Gemini reports no cache writes), and 85 output tokens of
which 20 are reasoning.
"""

from __future__ import annotations

import json

import pytest

from skillgym.plugins import STREAM_FORMATS
from skillgym.trace import TokenUsage, with_total

FRESH, READ, WRITTEN, OUTPUT, REASONING = 1200, 300, 40, 85, 20

CLAUDE = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "num_turns": 1,
    "result": "done",
    # Anthropic counts the three input parts apart; thinking is inside output_tokens.
    "usage": {
        "input_tokens": FRESH,
        "cache_read_input_tokens": READ,
        "cache_creation_input_tokens": WRITTEN,
        "output_tokens": OUTPUT,
        "output_tokens_details": {"thinking_tokens": REASONING},
    },
}
CODEX = {
    "type": "turn.completed",
    # The Responses API's input_tokens is the whole prompt, cache reads and writes included.
    "usage": {
        "input_tokens": FRESH + READ + WRITTEN,
        "cached_input_tokens": READ,
        "cache_write_input_tokens": WRITTEN,
        "output_tokens": OUTPUT,
        "reasoning_output_tokens": REASONING,
    },
}
GEMINI = {
    "type": "result",
    "status": "success",
    # input_tokens holds the cached part; output_tokens is the visible output alone, total_tokens all.
    "stats": {
        "total_tokens": FRESH + READ + OUTPUT,
        "input_tokens": FRESH + READ,
        "output_tokens": OUTPUT - REASONING,
        "cached": READ,
        "input": FRESH,
    },
}


@pytest.mark.parametrize(
    ("fmt", "line", "written"),
    [
        ("claude-stream-json", CLAUDE, WRITTEN),
        ("codex-json", CODEX, WRITTEN),
        ("gemini-stream-json", GEMINI, None),
    ],
)
def test_each_parser_counts_every_token_once(fmt: str, line: dict[str, object], written: int | None) -> None:
    usage = STREAM_FORMATS.get(fmt)([json.dumps(line).encode()]).usage
    assert usage is not None
    assert (usage.input, usage.cache_read, usage.cache_write, usage.output, usage.reasoning) == (
        FRESH,
        READ,
        written,
        OUTPUT,
        REASONING,
    )
    total = with_total(usage).total
    assert total == FRESH + READ + (written or 0) + OUTPUT


def test_the_computed_total_adds_the_parts_once() -> None:
    usage = TokenUsage(input=FRESH, output=OUTPUT, cache_read=READ, cache_write=WRITTEN, reasoning=REASONING)
    assert with_total(usage).total == FRESH + READ + WRITTEN + OUTPUT
