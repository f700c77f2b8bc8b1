"""Execution lane, session cases: drive the hello-prompt REPL through tmux; verifiers read real effects."""

from skillgym import execution_case

with execution_case("hello-prompt") as c:
    c.category("session")
    c.fixture("hello-prompt")
    c.workspace("tui-smoke")
    c.expect_skill("tmux-tui")
    c.task(
        "Send 'hello world' to the program, wait for its answer, save the screen to snapshot.txt, "
        "end the session"
    )
    with c.workflow() as w:
        w.create_session().wait_for("READY>")
        w.input("hello world").wait_for("ECHO: hello world").snapshot().destroy()
    with c.assertions() as a:
        a.file_contains("snapshot.txt", r"ECHO:\s*hello world")
        a.fixture_received("hello world")
        a.no_live_sessions()
    c.budget(timeout_s=120, max_turns=12)
    c.reference_steps(6)

with execution_case("run-command") as c:
    c.category("session")
    c.fixture("hello-prompt")
    c.workspace("tui-smoke")
    c.expect_skill("tmux-tui")
    c.task(
        "In the program's REPL, run 'echo test', then send 'exit' so that it quits by itself. Save the "
        "screen as it looks after it quits (it prints BYE) to transcript.txt, and leave no session behind."
    )
    with c.workflow() as w:
        w.create_session().run("echo test").wait_for("ECHO: echo test").input("exit").snapshot().destroy()
    with c.assertions() as a:
        a.file_contains("transcript.txt", r"ECHO: echo test")
        a.file_contains(
            "transcript.txt", r"\bBYE\b", description="the capture was taken after the program quit"
        )
        a.fixture_received("echo test")
        a.fixture_exited(0, description="the program quit by itself after 'exit'")
        a.no_live_sessions()
    c.budget(timeout_s=120, max_turns=14)
    c.reference_steps(7)
