"""tmux sessions created and ended in a text, matched by name and socket: the orphaned-session check."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Callable, Sequence
from typing import Final, Literal

from ..model import Data, Pattern
from ..regex import Match
from .context import GradeContext
from .negation import is_negated
from .patterns import compile_pattern

__all__ = ("OpenSession", "SessionEvent", "open_sessions", "read_event", "read_tmux", "still_running")

# A socket as tmux sees it: ("L", name) for -L NAME, ("S", path) for -S PATH; the default server is
# ("L", "default"). None: any socket (a command the suite declared without naming one).
Socket = tuple[str, str] | None
DEFAULT_SOCKET: Final = ("L", "default")

# tmux's global options that take a value (-L and -S choose the server), and each session command's.
_GLOBAL_VALUED: Final = frozenset("cfLST")
_COMMAND_VALUED: Final = {
    "new-session": frozenset("cefFnstxy"),
    "new": frozenset("cefFnstxy"),
    "kill-session": frozenset("t"),
    "kill-server": frozenset(),
}
_SEPARATORS: Final = frozenset({";", "&&", "||", "|", "&", "(", ")", "`"})
# tmux turns . and : in a new session's name into _, so no session's name holds either. In a target they
# part the session from the window and pane (app:0.1; app.1 is pane 1 of app's window, app. names no
# pane), so its session ends at the first of them; =app asks for an exact match.
_UNSAFE = re.compile(r"[:.]")
# What ends a clause in a sentence that quotes a command: "run tmux kill-session -t build, then ...".
_PROSE_PUNCTUATION: Final = ".,;:!?)"
# A character that cannot start a command word: patterns match one before the word as its left context.
_CONTEXT = re.compile(r"[^\w./$~-]")
# What tmux says when the server or the session is not there.
_GONE: Final = ("no server running", "error connecting", "no such file or directory", "can't find session")
TMUX_QUERY_TIMEOUT_S: Final = 10.0


class SessionEvent(Data, frozen=True, kw_only=True):
    """A session being created or ended.

    ``scope`` of an end: ``one`` ends ``session`` (without one, the most recent session on the socket),
    ``all`` every session on the socket, ``others`` every session but ``session`` (``kill-session -a``).
    """

    kind: Literal["create", "end"]
    socket: Socket = DEFAULT_SOCKET
    session: str | None = None
    scope: Literal["one", "all", "others"] = "one"


def _created(value: str | None, *, prose: bool = False) -> str | None:
    """The name tmux gives a session asked for as ``value``; in prose, punctuation after it ends a clause."""
    if value and prose:
        value = value.rstrip(_PROSE_PUNCTUATION)
    return _UNSAFE.sub("_", value) if value else None


def _target(value: str | None, *, prose: bool = False) -> str | None:
    """The session a target (``-t``) names: None for the current one (``:1``, or no target at all)."""
    if value and prose:
        value = value.rstrip(_PROSE_PUNCTUATION)
    if not value:
        return None
    return _UNSAFE.split(value.lstrip("="), maxsplit=1)[0] or None


def _words(command: str) -> list[str]:
    """The shell words of ``command`` up to the end of its simple command (``;``, ``&&``, ``|`` ...)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()`")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:  # an unclosed quote (prose): plain words will do
        tokens = command.split()
    words: list[str] = []
    for token in tokens:
        if token in _SEPARATORS:  # tmux's own \; comes out of the lexer as ; too
            break
        words.append(token)
    return words


def _options(words: list[str], valued: frozenset[str]) -> tuple[dict[str, str], int]:
    """getopt-style options leading ``words``: each letter's value ("" for a flag), and where they end."""
    found: dict[str, str] = {}
    index = 0
    while index < len(words) and words[index].startswith("-") and len(words[index]) > 1:
        word = words[index]
        index += 1
        if word == "--":
            break
        for position, letter in enumerate(word[1:], 1):
            if letter in valued:
                value = word[position + 1 :]
                if not value and index < len(words):
                    value, index = words[index], index + 1
                found[letter] = value
                break
            found[letter] = ""
    return found, index


def read_tmux(command: str, *, prose: bool = False) -> SessionEvent | None:
    """The session event of a tmux invocation (``tmux -L x new-session -d -s app ...``), if it is one.

    ``prose``: the command is quoted in a sentence, whose final period is no part of a new session's name.
    """
    words = _words(command)
    if not words:
        return None
    options, index = _options(words[1:], _GLOBAL_VALUED)
    rest = words[1 + index :]
    if not rest or rest[0] not in _COMMAND_VALUED:
        return None
    socket = ("S", options["S"]) if options.get("S") else ("L", options.get("L") or "default")
    name, (args, _) = rest[0], _options(rest[1:], _COMMAND_VALUED[rest[0]])
    if name in ("new-session", "new"):
        return SessionEvent(kind="create", socket=socket, session=_created(args.get("s"), prose=prose))
    if name == "kill-server":
        return SessionEvent(kind="end", socket=socket, scope="all")
    return SessionEvent(
        kind="end",
        socket=socket,
        session=_target(args.get("t"), prose=prose),
        scope="others" if "a" in args else "one",
    )


def _socket(value: str) -> Socket:
    """A declared socket: "-S PATH", "-L NAME" or a bare NAME (as -L)."""
    value = value.strip()
    if value[:2] in ("-L", "-S"):
        return (value[1], value[2:].strip())
    return ("L", value)


def _group(match: Match, name: str) -> str | None:
    return match.group(name) if name in match.re.groupindex else None


def _command_start(match: Match, line: str) -> int:
    """Where the matched command starts: after the character before it, if the pattern matched that too."""
    start = match.start()
    return start + 1 if start < match.end() and _CONTEXT.match(line, start) else start


def read_event(match: Match, line: str, *, prose: bool = False) -> SessionEvent:
    """The session event a match of an orphaned-session pattern stands for.

    A pattern with an ``end`` group that took part recognises an end; any other match, a creation. Named
    groups ``session`` and ``socket`` say which; without them the matched tmux command is read for its
    options. A declared end without a session ends every session (of its socket, else of any socket).
    ``prose`` as for ``read_tmux``.
    """
    kind: Literal["create", "end"] = "end" if _group(match, "end") is not None else "create"
    session, socket = _group(match, "session"), _group(match, "socket")
    declared = "session" in match.re.groupindex or "socket" in match.re.groupindex
    if not declared:
        event = read_tmux(line[_command_start(match, line) :], prose=prose)
        if event is not None and event.kind == kind:
            return event
    where = _socket(socket) if socket else None
    if kind == "create":
        return SessionEvent(kind=kind, socket=where, session=_created(session, prose=prose))
    name = _target(session, prose=prose)
    return SessionEvent(kind=kind, socket=where, session=name, scope="one" if name else "all")


class OpenSession(Data, frozen=True, kw_only=True):
    """A session the text created and never ended: where it lives, its name, and the line that made it."""

    socket: Socket
    session: str | None
    line: int
    text: str


def _same_socket(a: Socket, b: Socket) -> bool:
    return a is None or b is None or a == b


def _apply(live: list[OpenSession], event: SessionEvent, line: int, text: str) -> None:
    on_socket = [s for s in live if _same_socket(s.socket, event.socket)]
    if event.kind == "create":
        if event.session is None or not any(s.session == event.session for s in on_socket):
            live.append(OpenSession(socket=event.socket, session=event.session, line=line, text=text))
        return  # tmux refuses a second session of the same name
    if event.scope == "all":
        ended = on_socket
    elif event.session is None:
        ended = on_socket[-1:] if event.scope == "one" else on_socket[:-1]
    elif event.scope == "one":
        ended = [s for s in on_socket if s.session == event.session]
    else:
        ended = [s for s in on_socket if s.session != event.session]
    for session in ended:
        live.remove(session)


def open_sessions(
    patterns: Sequence[Pattern], lines: Sequence[tuple[int, str]], *, negation: bool
) -> list[OpenSession]:
    """Sessions created and never ended, in the order they were created.

    ``patterns`` recognise the events (see ``read_event``); ``lines`` are the (number, line) pairs to read,
    comments removed. Events apply in text order: a creation adds a session on its socket;
    ``kill-session -t NAME`` ends NAME on its socket only; ``kill-server`` ends every session of its socket
    only. With ``negation`` (prose), an event in a negation ("never run tmux kill-server") does not happen,
    and a sentence's final period is no part of a name.
    """
    events: list[tuple[int, int, SessionEvent, str]] = []
    for number, line in lines:
        for pattern in patterns:
            for match in compile_pattern(pattern).finditer(line):
                if negation and is_negated(line, match.start()):
                    continue
                start, end = match.focus()
                focus = line[start:end]
                events.append((number, match.start(), read_event(match, line, prose=negation), focus))
    live: list[OpenSession] = []
    for number, _, event, text in sorted(events, key=lambda e: (e[0], e[1])):
        _apply(live, event, number, text)
    return live


def still_running(ctx: GradeContext) -> Callable[[OpenSession], bool]:
    """Asks the trial's tmux whether a session is still running; True when tmux cannot say.

    A program that exits ends its session, so a session the commands never ended may be gone anyway: in
    the lanes where the commands really ran, only a session still running is left behind.
    """
    env = dict(ctx.env)
    env.setdefault("PATH", os.environ.get("PATH", os.defpath))
    env["TMUX_TMPDIR"] = ctx.tmux_tmpdir
    env.pop("TMUX", None)  # inside a tmux pane, this would point tmux at the grader's own server
    cwd = ctx.workspace if os.path.isdir(ctx.workspace) else None  # a relative -S path starts there

    def running(session: OpenSession) -> bool:
        if session.socket is None or any(c in f"{session.socket[1]}{session.session}" for c in "$`"):
            return True  # a declared command, or a name the shell expanded: only the commands can say
        flag, where = session.socket
        query = ["has-session", "-t", f"={session.session}"] if session.session else ["list-sessions"]
        try:
            result = subprocess.run(
                ["tmux", f"-{flag}", where, *query],
                env=env,
                cwd=cwd,
                capture_output=True,
                timeout=TMUX_QUERY_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return True
        if result.returncode == 0:
            return True
        stderr = result.stderr.decode("utf-8", errors="replace").lower()
        return not any(marker in stderr for marker in _GONE)

    return running
