"""A trial's human-readable transcript (``transcript.md``): its prompt and what the agent said and ran."""

from __future__ import annotations

import re
from typing import Final

from .trace import Message, Trace, conversation

# A tool's output is cut here in the transcript; the whole output stays in trace.json.
MAX_OUTPUT_CHARS: Final = 4000
_BACKTICKS: Final = re.compile(r"`+")


def render_transcript(key: str, prompt: str, trace: Trace) -> str:
    """Markdown for one trial: the prompt, the messages and tool calls in order (each call with its
    output), the skill evidence, the answer and the tokens."""
    out = [f"# {key}", "", "## Prompt", "", _fenced(prompt or "(empty)")]
    entries = conversation(trace)
    if entries:
        out += ["", "## Conversation", ""]
    for entry in entries:
        if isinstance(entry, Message):
            out += [f"**{entry.role}**", "", _fenced(entry.text), ""]
            continue
        number, call = entry
        status = "" if call.exit_code is None else f", exit {call.exit_code}"
        out += [f"**tool call {number}: {call.name}**{status}{' (error)' if call.is_error else ''}", ""]
        shown = f"$ {call.command}" if call.command is not None else call.input
        output = call.output
        if len(output) > MAX_OUTPUT_CHARS:
            cut = len(output) - MAX_OUTPUT_CHARS
            output = f"{output[:MAX_OUTPUT_CHARS]}\n[... {cut} more characters in trace.json]"
        body = "\n".join(part for part in (shown, output) if part)
        out += [_fenced(body or "(no input)"), ""]
    if entries:
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


def _fenced(text: str) -> str:
    # A fence longer than any backtick run inside keeps the text verbatim.
    longest = max(map(len, _BACKTICKS.findall(text)), default=0) if "`" in text else 0
    fence = "`" * max(3, longest + 1)
    body = text.rstrip("\n")
    return f"{fence}\n{body}\n{fence}"
