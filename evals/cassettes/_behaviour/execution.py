"""Execution-lane behaviour: the commands an agent runs per condition (they really run when generated).

``preloaded`` and ``self-load`` follow the tmux-tui skill (self-load loads it first, and once forgets
to keep the pane with run.sh); ``none`` drives tmux from general knowledge (default server, poll loops, sometimes a
forgotten cleanup or a capture of the visible screen only); ``stale`` follows the outdated notes (tries
GNU screen, fixed sleeps, OS screenshots, leaves the session running).
"""

# ruff: noqa: E501 - scripted shell commands and agent prose read best unwrapped

from __future__ import annotations

from typing import Any

from .common import SOCKET, T, behaviour, fixture, skilled

LANE = "execution"


def tmux(args: str) -> str:
    return f"tmux {SOCKET} {args}"


def poll(session: str, text: str, *, private: bool = False, seconds: int = 10) -> str:
    """How an agent without the skill waits: a bounded poll loop on one line (not a blind sleep)."""
    cmd = tmux(f"capture-pane -p -t {session}") if private else f"tmux capture-pane -p -t {session}"
    tries = seconds * 10
    return f"for i in $(seq 1 {tries}); do {cmd} | grep -q '{text}' && break; sleep 0.1; done"


def stale_start(agent: Any, name: str, session: str, size: str = "") -> None:
    """The stale notes' opening: look for GNU screen, fall back to a plain tmux session, sleep."""
    agent.say("The notes say to start the program in GNU screen; checking that it is available.")
    agent.bash("screen -ls || true", "Check for GNU screen")
    agent.say("screen is not installed here, so plain tmux as the notes allow; then give it time to start.")
    agent.bash(f'tmux new -d -s {session}{size} "{fixture(name)}"', f"Start {name} in tmux")
    agent.bash("sleep 5", "Give the program time to start")


@behaviour(LANE, "hello-prompt", "self-load", "preloaded")
def hello_skilled(agent: Any) -> None:
    skilled(agent, "tmux-tui")
    agent.say("Starting the REPL in a detached session on the private socket, then waiting for its prompt.")
    agent.bash(
        tmux(f'new-session -d -s hello -x 100 -y 30 "{fixture("hello-prompt")}"'), "Start hello-prompt"
    )
    agent.bash(f"{T}/wait-for.sh hello 'READY>' 10", "Wait for the prompt")
    agent.bash(tmux("send-keys -t hello 'hello world' Enter"), "Send hello world")
    agent.bash(f"{T}/wait-for.sh hello 'ECHO: hello world' 10", "Wait for the echo")
    agent.bash(tmux("capture-pane -p -t hello > snapshot.txt") + " && cat snapshot.txt", "Save the screen")
    agent.bash(f"{T}/cleanup.sh hello", "End the session")
    agent.done(
        "Sent `hello world`; the program answered `ECHO: hello world` and showed a fresh `READY>` prompt. "
        "The screen is saved in snapshot.txt and the session is gone (no sessions left on the socket)."
    )


@behaviour(LANE, "hello-prompt", "none")
def hello_none(agent: Any) -> None:
    agent.say("I'll run the program inside tmux so I can type into it and read its screen.")
    agent.bash(f'tmux new-session -d -s hello -x 100 -y 30 "{fixture("hello-prompt")}"', "Start the program")
    agent.bash(poll("hello", "READY>"), "Wait for the prompt")
    agent.bash("tmux send-keys -t hello 'hello world' Enter", "Type hello world")
    agent.bash(
        poll("hello", "ECHO: hello world")
        + "; tmux capture-pane -p -t hello > snapshot.txt; cat snapshot.txt",
        "Wait for the echo and save the screen",
    )
    agent.done(
        "The program echoed `ECHO: hello world`; snapshot.txt has the screen. The tmux session `hello` is "
        "still there if you want to look at it (`tmux attach -t hello`)."
    )


@behaviour(LANE, "hello-prompt", "stale")
def hello_stale(agent: Any) -> None:
    stale_start(agent, "hello-prompt", "app")
    agent.bash(
        "tmux send-keys -t app 'hello world' Enter && sleep 2 && tmux capture-pane -p -t app > snapshot.txt "
        "&& cat snapshot.txt",
        "Type, wait, save the screen",
    )
    agent.done(
        "snapshot.txt shows `ECHO: hello world`. As the notes recommend, I left the session running so you "
        "can attach with `tmux attach -t app`."
    )


@behaviour(LANE, "run-command", "self-load", "preloaded")
def run_skilled(agent: Any) -> None:
    skilled(agent, "tmux-tui")
    agent.say("The program will exit after 'exit', so I start it through run.sh to keep its last screen.")
    agent.bash(
        tmux(f'new-session -d -s repl -x 100 -y 30 "{T}/run.sh {fixture("hello-prompt")}"'),
        "Start the REPL, through run.sh so the pane and status survive the exit",
    )
    agent.bash(f"{T}/wait-for.sh repl 'READY>' 10", "Wait for the prompt")
    agent.bash(tmux("send-keys -t repl 'echo test' Enter"), "Run echo test")
    agent.bash(f"{T}/wait-for.sh repl 'ECHO: echo test' 10", "Wait for its output")
    agent.bash(tmux("send-keys -t repl 'exit' Enter"), "Ask it to quit")
    agent.bash(f"{T}/exit-status.sh repl 10", "Wait for it to exit and read the status")
    agent.bash(tmux("capture-pane -p -t repl > transcript.txt") + " && cat transcript.txt", "Save the screen")
    agent.bash(f"{T}/cleanup.sh repl", "End the session")
    agent.done(
        "Ran `echo test` (the REPL answered `ECHO: echo test`), then `exit`: it printed BYE and exited with "
        "status 0. transcript.txt has the final screen; no session is left."
    )


@behaviour(LANE, "run-command", "none")
def run_none(agent: Any) -> None:
    agent.say("Running the REPL in tmux and typing the two commands.")
    agent.bash(f'tmux new-session -d -s repl -x 100 -y 30 "{fixture("hello-prompt")}"', "Start the REPL")
    agent.bash(poll("repl", "READY>"), "Wait for the prompt")
    agent.bash("tmux send-keys -t repl 'echo test' Enter", "Run echo test")
    agent.bash(poll("repl", "ECHO: echo test"), "Wait for the output")
    agent.bash(
        "tmux send-keys -t repl 'exit' Enter; "
        "for i in $(seq 1 50); do tmux has-session -t repl 2>/dev/null || break; sleep 0.1; done",
        "Quit and wait for it to end",
    )
    agent.bash("tmux capture-pane -p -t repl > transcript.txt; cat transcript.txt", "Save the screen")
    agent.say("The session closed as soon as the program exited, so the capture came back empty.")
    agent.bash("tmux ls 2>&1 || true", "Check for sessions")
    agent.done(
        "`echo test` was echoed and `exit` ended the program, which closed its tmux session. transcript.txt "
        "is empty because the pane was gone before I could capture it; no session is left."
    )


@behaviour(LANE, "run-command", "stale")
def run_stale(agent: Any) -> None:
    stale_start(agent, "hello-prompt", "app")
    agent.bash("tmux send-keys -t app 'echo test' Enter && sleep 2", "Run echo test")
    agent.bash("tmux send-keys -t app 'exit' Enter && sleep 2", "Quit")
    agent.bash("tmux capture-pane -p -t app > transcript.txt; cat transcript.txt", "Save the screen")
    agent.done("Sent both commands; the session ended when the program quit, so transcript.txt may be empty.")


@behaviour(LANE, "resize-demo", "self-load", "preloaded")
def resize_skilled(agent: Any) -> None:
    skilled(agent, "tmux-tui")
    agent.bash(tmux(f'new-session -d -s demo -x 80 -y 24 "{fixture("resize-demo")}"'), "Start at 80x24")
    agent.bash(f"{T}/wait-for.sh demo 'SIZE: 80x24' 10", "Wait for the first size report")
    agent.bash(tmux("resize-window -t demo -x 100 -y 30"), "Resize to 100x30")
    agent.bash(f"{T}/wait-for.sh demo 'SIZE: 100x30' 10", "Wait for the program to notice")
    agent.bash(tmux("capture-pane -p -t demo > size.txt") + " && cat size.txt", "Save the screen")
    agent.bash(f"{T}/cleanup.sh demo", "End the session")
    agent.done(
        "After the resize the program reported `SIZE: 100x30`; size.txt has the screen. Session ended."
    )


@behaviour(LANE, "resize-demo", "none")
def resize_none(agent: Any) -> None:
    agent.say("tmux lets me set the terminal size exactly, so I'll run it there.")
    agent.bash(f'tmux new-session -d -s demo -x 80 -y 24 "{fixture("resize-demo")}"', "Start at 80x24")
    agent.bash(poll("demo", "SIZE: 80x24"), "Wait for the size report")
    agent.bash("tmux resize-window -t demo -x 100 -y 30", "Resize")
    agent.bash(
        poll("demo", "SIZE: 100x30") + "; tmux capture-pane -p -t demo > size.txt; cat size.txt",
        "Wait for the new size and save the screen",
    )
    agent.bash("tmux kill-session -t demo", "End the session")
    agent.done("The program printed `SIZE: 100x30` after the resize; see size.txt. Session killed.")


@behaviour(LANE, "resize-demo", "stale")
def resize_stale(agent: Any) -> None:
    stale_start(agent, "resize-demo", "demo", " -x 80 -y 24")
    agent.bash("tmux resize-window -t demo -x 100 -y 30 && sleep 2", "Resize and give it time")
    agent.bash("tmux capture-pane -p -t demo > size.txt; cat size.txt", "Save the screen")
    agent.done("size.txt shows the new size. The session is still running for you to attach to.")


@behaviour(LANE, "alt-screen-demo", "self-load", "preloaded")
def alt_skilled(agent: Any) -> None:
    skilled(agent, "tmux-tui")
    agent.bash(tmux(f'new-session -d -s alt -x 80 -y 24 "{fixture("alt-screen-demo")}"'), "Start the program")
    agent.bash(f"{T}/wait-for.sh alt 'MAIN SCREEN READY' 10", "Wait for the main screen")
    agent.bash(tmux("capture-pane -p -t alt > main.txt"), "Save the main screen")
    agent.bash(tmux("send-keys -t alt Enter"), "Enter: to the alternate screen")
    agent.bash(f"{T}/wait-for.sh alt 'ALT SCREEN ACTIVE' 10", "Wait for the alternate screen")
    agent.bash(tmux("capture-pane -p -t alt > alt.txt"), "Save the alternate screen")
    agent.bash(tmux("send-keys -t alt Enter"), "Enter: back to the main screen")
    agent.bash(f"{T}/wait-for.sh alt 'BACK ON MAIN SCREEN' 10", "Wait for the main screen again")
    agent.bash(tmux("capture-pane -p -t alt > back.txt") + " && head -3 main.txt alt.txt back.txt", "Save it")
    agent.bash(f"{T}/cleanup.sh alt", "End the session")
    agent.done(
        "main.txt, alt.txt and back.txt hold the three stages; the main screen came back. Session ended."
    )


@behaviour(LANE, "alt-screen-demo", "none")
def alt_none(agent: Any) -> None:
    agent.bash(f'tmux new-session -d -s alt -x 80 -y 24 "{fixture("alt-screen-demo")}"', "Start the program")
    agent.bash("sleep 1; tmux capture-pane -p -t alt > main.txt", "Let it draw, save the main screen")
    agent.bash(
        "tmux send-keys -t alt Enter; sleep 1; tmux capture-pane -p -t alt > alt.txt", "Alternate screen"
    )
    agent.bash("tmux send-keys -t alt Enter; sleep 1; tmux capture-pane -p -t alt > back.txt", "Back to main")
    agent.bash("tmux kill-session -t alt; head -3 main.txt alt.txt back.txt", "Clean up and check")
    agent.done("Captured the three screens to main.txt, alt.txt and back.txt and killed the session.")


@behaviour(LANE, "alt-screen-demo", "stale")
def alt_stale(agent: Any) -> None:
    stale_start(agent, "alt-screen-demo", "alt")
    agent.bash("tmux capture-pane -p -t alt > main.txt", "Save the main screen")
    agent.bash(
        "tmux send-keys -t alt Enter && sleep 2 && tmux capture-pane -p -t alt > alt.txt", "Alt screen"
    )
    agent.bash("tmux send-keys -t alt Enter && sleep 2 && tmux capture-pane -p -t alt > back.txt", "Back")
    agent.done("Saved main.txt, alt.txt and back.txt. Left the session running as the notes suggest.")


@behaviour(LANE, "scrollback-demo", "self-load", "preloaded")
def scrollback_skilled(agent: Any) -> None:
    skilled(agent, "tmux-tui")
    agent.bash(
        tmux(f'new-session -d -s scroll -x 80 -y 24 "{fixture("scrollback-demo")}"'), "Start the program"
    )
    agent.bash(f"{T}/wait-for.sh scroll 'SCROLLBACK COMPLETE' 10", "Wait for the last line")
    agent.say("Eighty lines do not fit in 24 rows, so I capture the whole history with -S -.")
    agent.bash(
        tmux("capture-pane -p -S - -t scroll > scrollback.txt")
        + " && grep -c '^LINE' scrollback.txt && head -2 scrollback.txt && tail -2 scrollback.txt",
        "Save the whole scrollback",
    )
    agent.bash(f"{T}/cleanup.sh scroll", "End the session")
    agent.done(
        "scrollback.txt holds everything from SCROLLBACK DEMO START to SCROLLBACK COMPLETE. Note: it has 79 "
        "numbered lines, not 80: LINE 047 is missing from the program's output. Session ended."
    )


@behaviour(LANE, "scrollback-demo", "none")
def scrollback_none(agent: Any) -> None:
    agent.bash(
        f'tmux new-session -d -s scroll -x 80 -y 24 "{fixture("scrollback-demo")}"', "Start the program"
    )
    agent.bash(poll("scroll", "SCROLLBACK COMPLETE"), "Wait for the end marker")
    agent.bash(
        "tmux capture-pane -p -t scroll > scrollback.txt; tmux kill-session -t scroll; head -3 scrollback.txt"
    )
    agent.done(
        "Saved the program's output to scrollback.txt (ends with SCROLLBACK COMPLETE) and killed the session."
    )


@behaviour(LANE, "scrollback-demo", "stale")
def scrollback_stale(agent: Any) -> None:
    stale_start(agent, "scrollback-demo", "scroll")
    agent.bash("tmux capture-pane -p -t scroll > scrollback.txt; tail -3 scrollback.txt", "Save the screen")
    agent.done("scrollback.txt has the output. The session is still running.")


@behaviour(LANE, "color-grid", "self-load", "preloaded")
def color_skilled(agent: Any) -> None:
    skilled(agent, "tmux-tui")
    agent.bash(tmux(f'new-session -d -s grid -x 100 -y 30 "{fixture("color-grid")}"'), "Start the program")
    agent.bash(f"{T}/wait-for.sh grid 'COLOR GRID COMPLETE' 10", "Wait for the whole grid")
    agent.bash(f"{T}/screenshot.sh grid artifacts/color-grid.svg", "Render the pane with colours to SVG")
    agent.bash(
        "grep -c '<rect' artifacts/color-grid.svg && grep -o 'fill=\"#ff0000\"' artifacts/color-grid.svg | head -1"
    )
    agent.bash(f"{T}/cleanup.sh grid", "End the session")
    agent.done(
        "artifacts/color-grid.svg is the rendered grid with its colours (truecolor red included). Session ended."
    )


@behaviour(LANE, "color-grid", "none")
def color_none(agent: Any) -> None:
    agent.bash(f'tmux new-session -d -s grid -x 100 -y 30 "{fixture("color-grid")}"', "Start the program")
    agent.bash(poll("grid", "COLOR GRID COMPLETE"), "Wait for the grid")
    agent.say(
        "There is no screenshot tool for a headless terminal here, so I'll render the captured text as SVG."
    )
    agent.bash(
        "tmux capture-pane -p -t grid | python3 -c '\n"
        "import sys, html\n"
        "rows = sys.stdin.read().splitlines()\n"
        'print("<svg xmlns=\\"http://www.w3.org/2000/svg\\" width=\\"900\\" height=\\"%d\\" '
        'font-family=\\"monospace\\" font-size=\\"14\\">" % (18 * len(rows) + 10))\n'
        "for n, row in enumerate(rows):\n"
        '    print("<text x=\\"4\\" y=\\"%d\\" xml:space=\\"preserve\\">%s</text>" % (18 * n + 18, html.escape(row)))\n'
        'print("</svg>")\n'
        "' > artifacts/color-grid.svg && tmux kill-session -t grid && head -3 artifacts/color-grid.svg",
        "Write the screen as an SVG",
    )
    agent.done("Saved artifacts/color-grid.svg (the grid's text as an SVG) and killed the session.")


@behaviour(LANE, "color-grid", "stale")
def color_stale(agent: Any) -> None:
    stale_start(agent, "color-grid", "grid", " -x 100 -y 30")
    agent.bash(
        "import -window root artifacts/color-grid.png || scrot artifacts/color-grid.png", "OS screenshot"
    )
    agent.done(
        "Neither ImageMagick's import nor scrot is installed here (and there is no display), so I could not "
        "take the screenshot. The grid is still running in tmux session `grid`."
    )


@behaviour(LANE, "unicode-grid", "self-load", "preloaded")
def unicode_skilled(agent: Any) -> None:
    skilled(agent, "tmux-tui")
    agent.bash(tmux(f'new-session -d -s uni -x 100 -y 30 "{fixture("unicode-grid")}"'), "Start at 100x30")
    agent.bash(f"{T}/wait-for.sh uni 'UNICODE GRID COMPLETE' 10", "Wait for the table")
    agent.bash(tmux("capture-pane -p -t uni > artifacts/unicode.txt") + " && head -10 artifacts/unicode.txt")
    agent.bash(f"{T}/cleanup.sh uni", "End the session")
    agent.done(
        "artifacts/unicode.txt holds the table as drawn: box lines, CJK, emoji all intact. Session ended."
    )


@behaviour(LANE, "unicode-grid", "none")
def unicode_none(agent: Any) -> None:
    agent.bash(f'tmux new-session -d -s uni -x 100 -y 30 "{fixture("unicode-grid")}"', "Start at 100x30")
    agent.bash(poll("uni", "UNICODE GRID COMPLETE"), "Wait for the table")
    agent.bash(
        "tmux capture-pane -p -t uni > artifacts/unicode.txt; tmux kill-session -t uni; cat artifacts/unicode.txt"
    )
    agent.done(
        "Captured the table to artifacts/unicode.txt; the characters came through intact. Session killed."
    )


@behaviour(LANE, "unicode-grid", "stale")
def unicode_stale(agent: Any) -> None:
    stale_start(agent, "unicode-grid", "uni", " -x 100 -y 30")
    agent.bash("tmux capture-pane -p -t uni > artifacts/unicode.txt; head -5 artifacts/unicode.txt")
    agent.done("Saved artifacts/unicode.txt. The session is left running for inspection.")


@behaviour(LANE, "export-proof", "self-load", "preloaded")
def export_skilled(agent: Any) -> None:
    skilled(agent, "tmux-tui")
    agent.bash(tmux(f'new-session -d -s rec -x 100 -y 30 "{fixture("hello-prompt")}"'), "Start the program")
    agent.bash(f"{T}/wait-for.sh rec 'READY>' 10", "Wait for the prompt")
    agent.bash(f"{T}/record.sh start rec artifacts/session.cast", "Start recording")
    agent.bash(tmux("send-keys -t rec 'hello cast' Enter"), "Send hello cast")
    agent.bash(f"{T}/wait-for.sh rec 'ECHO: hello cast' 10", "Wait for the reply")
    agent.bash(f"{T}/record.sh stop artifacts/session.cast", "Stop the recording with a last frame")
    agent.bash("head -c 200 artifacts/session.cast", "Check the header")
    agent.bash(f"{T}/cleanup.sh rec", "End the session")
    agent.done(
        "artifacts/session.cast is an asciicast v2 recording that ends on the `ECHO: hello cast` reply."
    )


@behaviour(LANE, "export-proof", "none")
def export_none(agent: Any) -> None:
    agent.say("asciicast files come from asciinema; checking whether it is installed.")
    agent.bash("command -v asciinema || echo 'asciinema: not installed'", "Look for asciinema")
    agent.bash(
        "python3 -c 'import asciinema' 2>&1 | tail -1; ls ~/.local/bin 2>/dev/null | grep -c asciinema",
        "Any copy at all?",
    )
    agent.done(
        "I could not record: asciinema is not installed here, not even as a Python package. With it installed, run "
        "`asciinema rec artifacts/session.cast -c 'python3 hello-prompt.py'`, type `hello cast`, then Ctrl-D."
    )


@behaviour(LANE, "export-proof", "stale")
def export_stale(agent: Any) -> None:
    stale_start(agent, "hello-prompt", "rec")
    agent.bash("tmux send-keys -t rec 'hello cast' Enter && sleep 2", "Send hello cast")
    agent.bash("scrot artifacts/session.png || true", "A screenshot says enough, per the notes")
    agent.done(
        "The notes say recordings are not needed; a screenshot would do, but scrot is not installed here."
    )


@behaviour(LANE, "crash-recovery", "self-load", "preloaded")
def crash_skilled(agent: Any) -> None:
    skilled(agent, "tmux-tui")
    agent.say("It dies quickly, so it runs under run.sh, which keeps the pane and prints the exit status.")
    agent.bash(
        tmux(f'new-session -d -s crash -x 100 -y 30 "{T}/run.sh {fixture("crash-demo")}"'),
        "Start the program, through run.sh so the pane and status survive the exit",
    )
    agent.bash(f"{T}/exit-status.sh crash 15 > exit-status.txt && cat exit-status.txt", "Wait for the exit")
    agent.bash(
        tmux("capture-pane -p -t crash > crash.txt") + " && grep -v '^$' crash.txt", "Save the last screen"
    )
    agent.bash(f"{T}/cleanup.sh crash", "End the session")
    agent.done(
        "The program crashed with `ValueError: record 3 is malformed` and exit status 1. crash.txt has its "
        "last screen with the traceback, exit-status.txt says 1, and no session is left."
    )


@behaviour(LANE, "crash-recovery", "none")
def crash_none(agent: Any) -> None:
    agent.say("It exits quickly, so I'll have the pane's shell record the status and wait for a key.")
    agent.bash(
        f'tmux new-session -d -s crash -x 100 -y 30 "{fixture("crash-demo")}; echo \\$? > exit-status.txt; read"',
        "Start it with a wrapper that keeps the pane",
    )
    agent.bash(
        poll("crash", "CRASH DEMO EXITING", seconds=15) + "; tmux capture-pane -p -t crash > crash.txt",
        "Wait for the crash and save the screen",
    )
    agent.bash("tmux kill-session -t crash; cat exit-status.txt; tail -4 crash.txt", "Clean up and check")
    agent.done(
        "It crashed with exit status 1 (exit-status.txt); crash.txt has the traceback. Session killed."
    )


@behaviour(LANE, "crash-recovery", "stale")
def crash_stale(agent: Any) -> None:
    stale_start(agent, "crash-demo", "crash")
    agent.bash("tmux capture-pane -p -t crash > crash.txt; cat crash.txt", "Read the screen")
    agent.bash("echo 1 > exit-status.txt", "Record the exit status")
    agent.done("The session had already ended when I looked, so crash.txt is empty; I assumed exit status 1.")


@behaviour(LANE, "interrupt-recovery", "preloaded")
def interrupt_skilled(agent: Any) -> None:
    agent.bash(
        tmux(f'new-session -d -s repl -x 100 -y 30 "{T}/run.sh {fixture("hello-prompt")}"'),
        "Start the REPL, through run.sh so the pane and status survive the exit",
    )
    agent.bash(f"{T}/wait-for.sh repl 'READY>' 10", "Wait for the prompt")
    agent.bash(tmux("send-keys -t repl C-c"), "Send Ctrl-C")
    agent.bash(f"{T}/exit-status.sh repl 10 > exit-status.txt && cat exit-status.txt", "Read the exit status")
    agent.bash(tmux("capture-pane -p -t repl > interrupted.txt") + " && grep -v '^$' interrupted.txt")
    agent.bash(f"{T}/cleanup.sh repl", "End the session")
    agent.done(
        "Ctrl-C made it print INTERRUPTED and exit with 130 (exit-status.txt); interrupted.txt has the screen."
    )


@behaviour(LANE, "interrupt-recovery", "self-load", "none")
def interrupt_lost_pane(agent: Any) -> None:
    skilled(agent, "tmux-tui")
    private = agent.condition == "self-load"
    start = f'new-session -d -s repl -x 100 -y 30 "{fixture("hello-prompt")}"'
    agent.bash(tmux(start) if private else f"tmux {start}", "Start the REPL")
    agent.bash(
        f"{T}/wait-for.sh repl 'READY>' 10" if private else poll("repl", "READY>"), "Wait for the prompt"
    )
    agent.bash(tmux("send-keys -t repl C-c") if private else "tmux send-keys -t repl C-c", "Send Ctrl-C")
    if private:
        agent.bash(f"{T}/exit-status.sh repl 10", "Read the exit status")
    else:
        agent.bash(
            "for i in $(seq 1 50); do tmux has-session -t repl 2>/dev/null || break; sleep 0.1; done; tmux ls 2>&1",
            "See what is left",
        )
    agent.say("The session is gone: the pane closed when the program exited. A REPL exits 130 on Ctrl-C.")
    agent.bash("echo 130 > exit-status.txt; touch interrupted.txt", "Record what I know")
    agent.done(
        "Ctrl-C stopped the program, but its session closed with it, so interrupted.txt has no screen; "
        "exit-status.txt says 130, the usual status for SIGINT."
    )


@behaviour(LANE, "interrupt-recovery", "stale")
def interrupt_stale(agent: Any) -> None:
    stale_start(agent, "hello-prompt", "repl")
    agent.bash(
        "tmux send-keys -t repl C-c && sleep 2 && tmux capture-pane -p -t repl > interrupted.txt", "Ctrl-C"
    )
    agent.bash("echo 130 > exit-status.txt")
    agent.done(
        "Sent Ctrl-C; the session ended right away, so interrupted.txt is empty. Exit status 130 assumed."
    )
