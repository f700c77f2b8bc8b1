"""A trial's human-readable transcript (``transcript.md``): its prompt and what the agent said and ran."""

from __future__ import annotations

import re
from typing import Final

from .trace import Trace

# A tool's output is cut here in the transcript; the whole output stays in trace.json.
MAX_OUTPUT_CHARS: Final = 4000
_BACKTICKS: Final = re.compile(r"`+")


def render_transcript(key: str, prompt: str, trace: Trace) -> str:
    """Markdown for one trial: the prompt, the messages, each tool call with its output, the answer.

    The trace keeps messages and tool calls apart, so they are shown as two lists, each in its own order.
    """
    out = [f"# {key}", "", "## Prompt", "", _fenced(prompt or "(empty)")]
    if trace.messages:
        out += ["", "## Messages", ""]
        for message in trace.messages:
            out += [f"**{message.role}**", "", _fenced(message.text), ""]
        out.pop()
    if trace.tool_calls:
        out += ["", "## Tool calls", ""]
        for number, call in enumerate(trace.tool_calls, start=1):
            status = "" if call.exit_code is None else f", exit {call.exit_code}"
            out += [f"{number}. {call.name}{status}{' (error)' if call.is_error else ''}", ""]
            shown = f"$ {call.command}" if call.command is not None else call.input
            output = call.output
            if len(output) > MAX_OUTPUT_CHARS:
                cut = len(output) - MAX_OUTPUT_CHARS
                output = f"{output[:MAX_OUTPUT_CHARS]}\n[... {cut} more characters in trace.json]"
            body = "\n".join(part for part in (shown, output) if part)
            out += [_fenced(body or "(no input)", indent="   "), ""]
        out.pop()
    if trace.skills:
        out += ["", "## Skill evidence", ""]
        out += [
            f"- {s.skill}: {s.source} ({s.confidence}){f', {s.detail}' if s.detail else ''}"
            for s in trace.skills
        ]
    out += ["", "## Final answer" + (" (the agent reported an error)" if trace.is_error else ""), ""]
    out.append(_fenced(trace.final_text or "(none)"))
    if trace.usage is not None:
        counts = {
            k: getattr(trace.usage, k) for k in ("input", "cache_read", "cache_write", "output", "total")
        }
        shown = ", ".join(f"{k} {v}" for k, v in counts.items() if v is not None)
        out += ["", "## Tokens", "", shown or "(none reported)"]
    return "\n".join(out) + "\n"


def _fenced(text: str, *, indent: str = "") -> str:
    # A fence longer than any backtick run inside keeps the text verbatim.
    longest = max(map(len, _BACKTICKS.findall(text)), default=0) if "`" in text else 0
    fence = "`" * max(3, longest + 1)
    body = text.rstrip("\n")
    if indent:
        body = "\n".join(f"{indent}{line}" if line else line for line in body.split("\n"))
    return f"{indent}{fence}\n{body}\n{indent}{fence}"
