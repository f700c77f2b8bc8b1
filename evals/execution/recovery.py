"""Execution lane, recovery cases: programs that end badly; the agent must keep the evidence and clean up."""

from skillgym import execution_case

# Creating the session so that the pane, its last screen and the exit status outlive the program: through
# the skill's run.sh, with remain-on-exit, or with a shell wrapper that records $?.
KEEPS_PANE = r"\btmux\b.*\bnew(-session)?\b.*(run\.sh|remain-on-exit|\$\?)"

with execution_case("crash-recovery") as c:
    c.category("recovery")
    c.fixture("crash-demo")
    c.workspace("tui-smoke")
    c.expect_skill("tmux-tui")
    c.task(
        "The program crashes about a second after it starts. Save its last screen (with the traceback) to "
        "crash.txt and write its exit status, as a bare number, to exit-status.txt. Leave no session running."
    )
    with c.workflow() as w:
        w.create_session(id="create-keep-pane", patterns=[KEEPS_PANE])
        w.wait_for("CRASH DEMO EXITING").snapshot().destroy()
    with c.assertions() as a:
        a.file_contains("crash.txt", r"CRASH DEMO EXITING")
        a.file_contains("exit-status.txt", r"^\s*1\s*$")
        a.fixture_exited(1)
        a.no_live_sessions()
    c.budget(timeout_s=180, max_turns=12)
    c.reference_steps(5)

with execution_case("interrupt-recovery") as c:
    c.category("recovery")
    c.fixture("hello-prompt")
    c.workspace("tui-smoke")
    c.expect_skill("tmux-tui")
    c.task(
        "Stop the program with Ctrl-C, not with 'exit'. Save the screen showing how it reacted to "
        "interrupted.txt and write its exit status, as a bare number, to exit-status.txt. Leave no session "
        "running."
    )
    with c.workflow() as w:
        w.create_session(id="create-keep-pane", patterns=[KEEPS_PANE])
        w.wait_for("READY>").input("C-c", id="send-ctrl-c").wait_for("INTERRUPTED").snapshot().destroy()
    with c.assertions() as a:
        a.file_contains("interrupted.txt", r"INTERRUPTED")
        a.file_contains("exit-status.txt", r"^\s*130\s*$")
        a.fixture_exited(130)
        a.no_live_sessions()
    c.budget(timeout_s=120, max_turns=12)
    c.reference_steps(6)
