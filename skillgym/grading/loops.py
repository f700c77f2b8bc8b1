"""Poll loops in shell and Python text: where a sleep paces a loop that checks something, not a blind wait."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

__all__ = ("line_starts", "poll_loop_spans", "strip_comment")

# A shell keyword counts in command position only: at the start of a line (after a list marker or prompt
# in prose), after a separator, a quote (sh -c 'until ...') or a subshell, or after then/else/do/!.
_SHELL_KEYWORD = re.compile(r"(?<![\w.-])(while|until|for|select|do|done)(?![\w.-])")
_COMMAND_BEFORE = re.compile(
    r"(?:^\s*(?:[-*+]|\d+[.)]|[$>])?|[;&|(`'\"{]|\$\(|(?<![\w-])(?:then|else|do|!))\s*$"
)
# A loop checks something when its while/until condition is a real command, or when its body can leave
# on what it observed (break, exit, return; in Python also raise and sys.exit).
_CONSTANT_CONDITION: Final = re.compile(r"\s*(?:true|false|:|\[\s*1\s*\]|\(\(\s*1\s*\)\)|sleep\s+\S+)?\s*")
# An exit word counts in command position of the loop's own text with its quoted strings blanked:
# send-keys 'exit' Enter and echo 'press q to exit' leave nothing. A case arm ("READY) break;;") counts.
_SHELL_EXIT = re.compile(
    r"(?:^|[;&|(){`!]|(?<![\w-])(?:then|else|do))\s*(?:break|exit|return)(?![\w-])", re.MULTILINE
)
_SHELL_DO = re.compile(r"(?:^|;)\s*do(?![\w.-])")
_PY_LOOP = re.compile(r"^(\s*)(?:async\s+)?(while|for)\b(.*?):\s*(\S.*)?$")
_PY_CONSTANT = re.compile(r"\s*(?:True|1)\s*")
_PY_EXIT = re.compile(r"\b(?:break|return|raise|sys\.exit|exit\()")


def _blank_quotes(text: str) -> str:
    """``text`` with each closed '...' or "..." string (quotes included) turned into spaces, lines kept.

    Only the text as given is read: a loop inside ``sh -c '...'`` is judged on the program inside, whose own
    strings are then blanked. A quote never closed (prose, an apostrophe) is left as it is.
    """
    out = list(text)
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char not in "'\"":
            index += 1
            continue
        close = index + 1
        while close < len(text) and text[close] != char:
            close += 2 if char == '"' and text[close] == "\\" else 1
        if close >= len(text):
            break  # never closed: not a string
        for blank in range(index, close + 1):
            if out[blank] != "\n":
                out[blank] = " "
        index = close + 1
    return "".join(out)


def strip_comment(line: str, *, prose: bool) -> str:
    """``line`` without its shell comment: a ``#`` outside quotes at the start of a word, to the end.

    In prose the ``#`` must also be followed by a space ("issue #3" is no comment), and an apostrophe inside
    a word ("don't") is no quote.
    """
    if "#" not in line:
        return line
    quote = ""
    escaped = False
    for index, char in enumerate(line):
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            inside_word = (
                0 < index < len(line) - 1 and line[index - 1].isalnum() and line[index + 1].isalnum()
            )
            if not (prose and inside_word):
                quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            if prose and index + 1 < len(line) and not line[index + 1].isspace():
                continue  # "#3" in prose is an issue number, not a comment
            return line[:index].rstrip()
    return line


def _command_position(text: str, start: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    return _COMMAND_BEFORE.search(text[line_start:start]) is not None


class _Open:
    __slots__ = ("body", "keyword", "start")

    def __init__(self, keyword: str, start: int) -> None:
        self.keyword = keyword
        self.start = start
        self.body = -1  # offset just after its "do", once seen


def _shell_loops(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    opened: list[_Open] = []
    for match in _SHELL_KEYWORD.finditer(text):
        word = match.group(1)
        if not _command_position(text, match.start()):
            continue
        if word == "do":
            waiting = next((o for o in reversed(opened) if o.body < 0), None)
            if waiting is not None:
                waiting.body = match.end()
        elif word == "done":
            while opened and opened[-1].body < 0:
                opened.pop()  # a "while" that never reached "do": not a shell loop (Python, prose)
            if not opened:
                continue
            loop = opened.pop()
            condition = text[loop.start + len(loop.keyword) : loop.body - 2].rstrip().rstrip(";")
            checks = loop.keyword in ("while", "until") and _CONSTANT_CONDITION.fullmatch(condition) is None
            if checks or _SHELL_EXIT.search(_blank_quotes(text[loop.body : match.start()])):
                spans.append((loop.start, match.end()))
        else:
            opened.append(_Open(word, match.start()))
    return spans


def _python_loops(lines: Sequence[str], starts: Sequence[int]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for index, line in enumerate(lines):
        header = _PY_LOOP.match(line)
        if header is None or _SHELL_DO.search(line):
            continue
        indent, keyword, condition, inline = header.groups()
        last = index
        if inline is None:  # the body is the following lines indented deeper
            for later in range(index + 1, len(lines)):
                if not lines[later].strip():
                    continue
                if len(lines[later]) - len(lines[later].lstrip()) <= len(indent):
                    break
                last = later
        end = starts[last] + len(lines[last])
        body = inline or "\n".join(lines[index + 1 : last + 1])
        checks = keyword == "while" and _PY_CONSTANT.fullmatch(condition) is None
        if checks or _PY_EXIT.search(_blank_quotes(body)):
            spans.append((starts[index], end))
    return spans


def line_starts(lines: Sequence[str]) -> list[int]:
    """The offset of each of ``lines`` in the text they were split from at line breaks."""
    starts: list[int] = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    return starts


def poll_loop_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of every loop in ``text`` that checks something on each turn.

    Shell loops (``while``/``until``/``for``/``select`` ... ``do`` ... ``done``, on one line or many, also
    inside ``sh -c '...'``) and Python loops (``while``/``for`` headers with an indented or inline body).
    ``while true; do sleep 1; done`` and ``for i in 1 2 3; do ...; sleep 1; done`` check nothing: a
    sleep there is still a fixed wait.
    """
    lines = text.split("\n")
    return _shell_loops(text) + _python_loops(lines, line_starts(lines))
