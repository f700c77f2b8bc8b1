"""Tests for skillgym.grading.sessions: tmux commands read for name and socket, and sessions still running."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from skillgym.grading import GradeContext
from skillgym.grading.antipatterns import TMUX_SESSION_PATTERNS
from skillgym.grading.sessions import OpenSession, SessionEvent, open_sessions, read_tmux, still_running

from .conftest import tmux

MakeCtx = Callable[..., GradeContext]


@pytest.mark.parametrize(
    ("command", "event"),
    [
        ("tmux new -d -s app", SessionEvent(kind="create", socket=("L", "default"), session="app")),
        (
            "tmux -L sg new-session -d -s app 'x'",
            SessionEvent(kind="create", socket=("L", "sg"), session="app"),
        ),
        ("tmux -Lsg new -dsapp", SessionEvent(kind="create", socket=("L", "sg"), session="app")),
        ("tmux -f /dev/null -S ./s new -d", SessionEvent(kind="create", socket=("S", "./s"), session=None)),
        (
            "tmux -2u -L sg new -n win -s 'my app'",
            SessionEvent(kind="create", socket=("L", "sg"), session="my app"),
        ),
        ("tmux -L sg kill-server", SessionEvent(kind="end", socket=("L", "sg"), scope="all")),
        ("tmux -L sg kill-session -t =app:1.0", SessionEvent(kind="end", socket=("L", "sg"), session="app")),
        ("tmux -L sg kill-session -t app.1", SessionEvent(kind="end", socket=("L", "sg"), session="app")),
        ("tmux -L sg kill-session -t build.", SessionEvent(kind="end", socket=("L", "sg"), session="build")),
        ("tmux -L sg kill-session -t :1", SessionEvent(kind="end", socket=("L", "sg"))),
        ("tmux -L sg new -d -s my.app", SessionEvent(kind="create", socket=("L", "sg"), session="my_app")),
        (
            "tmux -L sg kill-session -a -t app",
            SessionEvent(kind="end", socket=("L", "sg"), session="app", scope="others"),
        ),
        ("tmux -L sg kill-session", SessionEvent(kind="end", socket=("L", "sg"))),
        (
            "tmux -L sg kill-session -t app; tmux new -s b",
            SessionEvent(kind="end", socket=("L", "sg"), session="app"),
        ),
        (
            "tmux -L sg kill-session -t app`, then",
            SessionEvent(kind="end", socket=("L", "sg"), session="app"),
        ),
    ],
)
def test_read_tmux(command: str, event: SessionEvent) -> None:
    assert read_tmux(command) == event


@pytest.mark.parametrize("command", ["tmux -L sg ls", "tmux", "tmux -L", "tmux attach -t app"])
def test_other_tmux_commands_are_no_session_event(command: str) -> None:
    assert read_tmux(command) is None


def test_an_unclosed_quote_in_prose_still_reads() -> None:
    assert read_tmux("tmux -L sg new -s app and don't stop") == SessionEvent(
        kind="create", socket=("L", "sg"), session="app"
    )


def test_a_sentence_s_final_period_is_no_part_of_a_new_session_s_name() -> None:
    command = "tmux -L sg new -d -s build."
    assert read_tmux(command, prose=True) == SessionEvent(kind="create", socket=("L", "sg"), session="build")
    assert read_tmux(command) == SessionEvent(kind="create", socket=("L", "sg"), session="build_")


@pytest.mark.parametrize("end", [".", ",", ";", ":", "!", "?", ")"])
def test_punctuation_after_a_name_in_prose_belongs_to_the_sentence(end: str) -> None:
    assert read_tmux(f"tmux -L sg new -d -s build{end}", prose=True) == SessionEvent(
        kind="create", socket=("L", "sg"), session="build"
    )
    assert read_tmux(f"tmux -L sg kill-session -t build{end} then stop", prose=True) == SessionEvent(
        kind="end", socket=("L", "sg"), session="build"
    )
    text = [
        (1, "Start it with tmux -L sg new -d -s build, look,"),
        (2, f"then tmux -L sg kill-session -t build{end}"),
    ]
    assert open_sessions(TMUX_SESSION_PATTERNS, text, negation=True) == []


def test_a_kill_without_a_target_ends_the_latest_session_on_its_socket() -> None:
    lines = list(
        enumerate(
            [
                "tmux -L sg new -d -s a",
                "tmux -L sg new -d -s b",
                "tmux -L x new -d",
                "tmux -L sg kill-session",
            ],
            1,
        )
    )
    left = open_sessions(TMUX_SESSION_PATTERNS, lines, negation=False)
    assert [(s.socket, s.session, s.line) for s in left] == [(("L", "sg"), "a", 1), (("L", "x"), None, 3)]


def test_a_second_session_of_the_same_name_is_not_a_second_session() -> None:
    lines = list(
        enumerate(["tmux -L sg new -d -s a", "tmux -L sg new -d -s a", "tmux -L sg kill-session -t a"], 1)
    )
    assert open_sessions(TMUX_SESSION_PATTERNS, lines, negation=False) == []


def test_what_tmux_cannot_be_asked_about_counts_as_running(make_ctx: MakeCtx, tmp_path: Path) -> None:
    empty = tmp_path / "no-programs"
    empty.mkdir()
    running = still_running(make_ctx(env={"PATH": str(empty)}))
    assert running(OpenSession(socket=("L", "sg"), session="app", line=1, text="new"))  # no tmux to ask
    ask = still_running(make_ctx())
    assert ask(OpenSession(socket=None, session="app", line=1, text="x"))  # a declared command: any socket
    assert ask(OpenSession(socket=("L", "$SOCKET"), session="app", line=1, text="new"))
    assert ask(OpenSession(socket=("L", "sg"), session="$NAME", line=1, text="new"))


@pytest.mark.integration
def test_tmux_says_which_sessions_still_run(make_ctx: MakeCtx, tmux_tmpdir: Path) -> None:
    ctx = make_ctx(tmux_tmpdir=str(tmux_tmpdir))
    running = still_running(ctx)
    socket = ("L", "grading-test")
    assert not running(OpenSession(socket=socket, session="app", line=1, text="new"))  # no server at all
    assert tmux(tmux_tmpdir, "new-session", "-d", "-s", "app", "sleep 300").returncode == 0
    assert tmux(tmux_tmpdir, "new-session", "-d", "-s", "quick", "true").returncode == 0
    deadline = time.monotonic() + 10
    while tmux(tmux_tmpdir, "has-session", "-t", "=quick").returncode == 0 and time.monotonic() < deadline:
        time.sleep(0.05)  # its program exits at once, and the session with it
    assert running(OpenSession(socket=socket, session="app", line=1, text="new"))
    assert running(OpenSession(socket=socket, session=None, line=1, text="new"))
    assert not running(OpenSession(socket=socket, session="quick", line=1, text="new"))
    assert not running(OpenSession(socket=socket, session="ap", line=1, text="new"))  # names match exactly
    assert not running(OpenSession(socket=("L", "other"), session="app", line=1, text="new"))


@pytest.mark.integration
@pytest.mark.parametrize(
    ("name", "target"),
    [("build", "build."), ("app", "app.0"), ("app", "=app:0.0"), ("my.app", "my_app"), ("my.app", "my.app")],
)
def test_a_kill_ends_what_tmux_ends(tmux_tmpdir: Path, name: str, target: str) -> None:
    # tmux names the session my_app, and reads the target my.app as pane "app" of a session "my".
    for session in (name, "other"):
        assert tmux(tmux_tmpdir, "new-session", "-d", "-s", session, "sleep 300").returncode == 0
    tmux(tmux_tmpdir, "kill-session", "-t", target)
    listed = tmux(tmux_tmpdir, "list-sessions", "-F", "#{session_name}").stdout.split()
    commands = [f"tmux -L grading-test new -d -s {name}", f"tmux -L grading-test kill-session -t {target}"]
    left = open_sessions(TMUX_SESSION_PATTERNS, list(enumerate(commands, 1)), negation=False)
    assert [s.session for s in left] == [s for s in listed if s != "other"]
