"""Execution lane: drive the hello-prompt fixture through tmux and prove it with real effects."""

from skillgym import execution_case

with execution_case("hello-prompt") as c:
    c.category("session")
    c.fixture("hello-prompt")
    c.workspace("tui-smoke")
    c.expect_skill("tmux-tui")
    c.task("Send 'hello world', wait for READY>, save a snapshot to snapshot.txt, end the session")
    with c.workflow() as w:
        w.create_session().input("hello world").wait_for("READY>").snapshot().destroy()
    with c.assertions() as a:
        a.file_contains("snapshot.txt", r"ECHO:\s*hello world")
        a.fixture_received("hello world")
        a.no_live_sessions()
    c.budget(timeout_s=120, max_turns=12)
    c.reference_steps(5)
