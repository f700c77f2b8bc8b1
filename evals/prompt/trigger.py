"""Prompt lane, tmux-tui triggers: requests that need a real terminal; does the agent route and plan well?"""

from skillgym import prompt_case

# What the skill teaches, as patterns over the answer (prose: "instead of sleep 5" is not a use of sleep).
PRIVATE_SOCKET = r"-L\s*['\"]?[\w.-]+|private (tmux )?socket"
WAITS_ON_OUTPUT = r"wait-for|wait[- ]for\b|poll"
BLIND_SLEEP = r"\bsleep\s+\d"
CLEANUP = r"kill-session|kill-server|cleanup\.sh"

with prompt_case("session-creation") as c:
    c.category("trigger")
    c.prompt(
        "Start my ./build.sh in a terminal session that keeps running while I do other things, "
        "and save what it printed to build.log once it finishes."
    )
    c.expect_skill("tmux-tui")
    with c.step("create-private-session") as s:
        s.must_mention(r"new-session|\bnew\b -d", PRIVATE_SOCKET)
    with c.step("capture-output", depends_on="create-private-session") as s:
        s.must_mention(r"capture-pane", r"build\.log")
    with c.step("clean-up") as s:
        s.must_mention(CLEANUP)
        s.judge("the plan ends every terminal session it starts")
    c.must_not_mention(BLIND_SLEEP)
    # Said in plain words and graded by the suite's judge (see judge/README.md): what a pattern cannot see.
    with c.step("waits-for-the-end") as s:
        s.judge(
            "the plan waits for the build to finish by watching its exit status or its output, not with a "
            "fixed sleep"
        )
    with c.step("keeps-everything", required=False) as s:
        s.judge(
            "the log keeps everything the build printed, scrollback included, not only the visible screen"
        )
    c.rubric("a plan a teammate could follow step by step without asking questions", points=4)

with prompt_case("interactive-cli") as c:
    c.category("trigger")
    c.prompt(
        "Automate our interactive installer (./install.sh): it asks for a name, then a port, then a yes/no "
        "confirmation. I want a script to answer the three questions without me typing."
    )
    c.expect_skill("tmux-tui")
    with c.step("answer-with-keys") as s:
        s.must_mention(r"send-keys")
    with c.step("wait-for-each-question") as s:
        s.must_mention(WAITS_ON_OUTPUT)
        s.must_not_mention(BLIND_SLEEP)
        s.judge("each answer is typed only after its question is shown on screen")

with prompt_case("wait-for-output") as c:
    c.category("trigger")
    c.prompt("I need to wait until my server prints 'Listening on port 3000' before running tests")
    c.expect_skill("tmux-tui")
    with c.step("observe-readiness") as s:
        s.must_mention("wait", "Listening on port 3000")
        s.must_not_mention(r"\bsleep\b")

with prompt_case("snapshot-inspection") as c:
    c.category("trigger")
    c.prompt(
        "My REPL is running a long `make test` that prints hundreds of lines. Take a snapshot of what the "
        "terminal shows and check whether the build passed."
    )
    c.expect_skill("tmux-tui")
    with c.step("capture-pane") as s:
        s.must_mention(r"capture-pane")
    with c.step("whole-history") as s:
        s.must_mention(r"-S\s*-|scrollback|history")
    with c.step("check-result", depends_on="capture-pane") as s:
        s.must_mention(r"grep|search|look for|check")

with prompt_case("screenshot-capture") as c:
    c.category("trigger")
    c.prompt("I need a screenshot of our TUI's dashboard for the PR description, colours and all.")
    c.expect_skill("tmux-tui")
    with c.step("render-pane") as s:
        s.must_mention(r"screenshot\.sh|capture-pane\s+-e|\.svg")
        s.must_not_mention(r"\bscrot\b", r"gnome-screenshot", r"import\s+-window", r"screencapture")
    with c.step("clean-up") as s:
        s.must_mention(CLEANUP)

with prompt_case("recording-export") as c:
    c.category("trigger")
    c.prompt("Record a short session of my CLI demo so reviewers can replay it in the browser.")
    c.expect_skill("tmux-tui")
    with c.step("record-asciicast") as s:
        s.must_mention(r"record\.sh|asciicast", r"\.cast\b")
    with c.step("stop-then-clean-up", depends_on="record-asciicast") as s:
        s.must_mention(r"\bstop\b", CLEANUP)
    c.must_not_mention(r"\bffmpeg\b")

with prompt_case("cli-workflow-test") as c:
    c.category("trigger")
    c.prompt(
        "In my app's REPL, run `init`, then `load data.csv`, then `report`, and verify each step's output "
        "before sending the next one."
    )
    c.expect_skill("tmux-tui")
    with c.step("send-each-command") as s:
        s.must_mention(r"send-keys", r"load data\.csv")
    with c.step("verify-each-step") as s:
        s.must_mention(WAITS_ON_OUTPUT, r"capture-pane")
        s.must_not_mention(BLIND_SLEEP)

with prompt_case("resize-verification") as c:
    c.category("trigger")
    c.prompt("Check that our TUI re-lays out correctly when the terminal goes from 80x24 to 120x40.")
    c.expect_skill("tmux-tui")
    with c.step("resize") as s:
        s.must_mention(r"resize-window|resize-pane", r"\b120\b", r"\b40\b")
    with c.step("evidence-after-resize", depends_on="resize") as s:
        s.must_mention(r"capture-pane|screenshot")
