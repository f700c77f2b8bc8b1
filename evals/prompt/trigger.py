"""Prompt lane: does the agent route to the tmux skill and plan to wait on output, not sleep?"""

from skillgym import prompt_case

with prompt_case("wait-for-output") as c:
    c.category("trigger")
    c.prompt("I need to wait until my server prints 'Listening on port 3000' before running tests")
    c.expect_skill("tmux-tui")
    with c.step("observe-readiness") as s:
        s.must_mention("wait", "Listening on port 3000")
        s.must_not_mention(r"\bsleep\b")

with prompt_case("plain-file-edit") as c:
    c.category("should-not-trigger")
    c.prompt("Rename the function parse_args to parse_arguments in cli.py")
    c.grader_notes("A plain edit: no terminal program is involved, so no skill should be used.")
    c.expect_skill(None)
    c.must_not_mention(r"\btmux\b")
