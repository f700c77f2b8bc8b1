"""Execution lane, TUI cases: resize, the alternate screen and scrollback, judged by files and logs."""

from skillgym import FixtureLogContains, Pattern, execution_case

with execution_case("resize-demo") as c:
    c.category("tui")
    c.fixture("resize-demo")
    c.workspace("tui-smoke")
    c.expect_skill("tmux-tui")
    c.task(
        "Start the program in an 80x24 terminal, resize the terminal to 100x30, wait until the program "
        "reports its new size, save the screen to size.txt, then end the session."
    )
    with c.workflow() as w:
        w.create_session().wait_for("SIZE: 80x24")
        w.resize(100, 30).wait_for("SIZE: 100x30").snapshot().destroy()
    with c.assertions() as a:
        a.file_contains("size.txt", r"SIZE: 100x30")
        # The log's resize events carry the size the program really got; sugar covers input/output/exit.
        a.raw(
            FixtureLogContains(
                id="resized-to-100x30",
                description="the program saw a resize to 100x30",
                fixture="resize-demo",
                event="resize",
                pattern=Pattern(regex=r"^100x30$", flags=""),
            )
        )
        a.no_live_sessions()
    c.budget(timeout_s=120, max_turns=12)
    c.reference_steps(6)

with execution_case("alt-screen-demo") as c:
    c.category("tui")
    c.fixture("alt-screen-demo")
    c.workspace("tui-smoke")
    c.expect_skill("tmux-tui")
    c.task(
        "Walk the program through its three screens and save each one: main.txt (the first screen), "
        "alt.txt (after the first Enter, on the alternate screen) and back.txt (after the second Enter, "
        "back on the main screen). Then end the session."
    )
    with c.workflow() as w:
        w.create_session().wait_for("MAIN SCREEN READY").snapshot()
        w.input("Enter", id="enter-alt").wait_for("ALT SCREEN ACTIVE").snapshot()
        w.input("Enter", id="leave-alt").wait_for("BACK ON MAIN SCREEN").snapshot().destroy()
    with c.assertions() as a:
        a.file_contains("main.txt", r"MAIN SCREEN READY")
        a.file_contains("alt.txt", r"ALT SCREEN ACTIVE")
        a.file_contains("back.txt", r"BACK ON MAIN SCREEN")
        a.fixture_printed(r"BACK ON MAIN SCREEN", description="the program really left the alternate screen")
        a.no_live_sessions()
    c.budget(timeout_s=180, max_turns=14)
    c.reference_steps(10)

with execution_case("scrollback-demo") as c:
    c.category("tui")
    c.fixture("scrollback-demo")
    c.workspace("tui-smoke")
    c.expect_skill("tmux-tui")
    c.task(
        "The program prints 80 numbered lines, more than fit on the screen. Save everything it printed, "
        "from 'SCROLLBACK DEMO START' to 'SCROLLBACK COMPLETE', to scrollback.txt, then end the session."
    )
    with c.workflow() as w:
        w.create_session().wait_for("SCROLLBACK COMPLETE")
        w.snapshot(id="capture-history", patterns=[r"capture-pane\b.*-S\s*-"]).destroy()
    with c.assertions() as a:
        a.file_contains("scrollback.txt", r"SCROLLBACK DEMO START")
        a.file_contains("scrollback.txt", r"LINE 001 ", description="the first line, long scrolled off")
        a.file_contains("scrollback.txt", r"LINE 080 ")
        a.no_live_sessions()
    c.budget(timeout_s=120, max_turns=10)
    c.reference_steps(4)
