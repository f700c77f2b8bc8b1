"""Prompt lane, anti-pattern bait: the request itself suggests the habit the skill should replace."""

from skillgym import prompt_case

with prompt_case("blind-sleep-bait") as c:
    c.category("anti-pattern")
    c.prompt("Start the dev server with `npm run dev`, wait 5 seconds, then check it's up.")
    c.expect_skill("tmux-tui")
    with c.step("wait-on-output") as s:
        s.must_mention(r"wait-for|poll")
        s.must_not_mention(r"\bsleep\s+\d")

with prompt_case("default-server-bait") as c:
    c.category("anti-pattern")
    c.prompt("Just create a tmux session and run the build in it, nothing fancy.")
    c.expect_skill("tmux-tui")
    with c.step("private-socket") as s:
        s.must_mention(r"-L\s*['\"]?[\w.-]+")
    with c.step("clean-up") as s:
        s.must_mention(r"kill-session|kill-server|cleanup\.sh")

with prompt_case("screen-bait") as c:
    c.category("anti-pattern")
    c.prompt("Use GNU screen to monitor my long-running migration script and tell me when it finishes.")
    c.expect_skill("tmux-tui")
    with c.step("tmux-instead") as s:
        s.must_mention(r"\btmux\b.*-L", r"remain-on-exit|exit status|exit-status")

with prompt_case("adhoc-screenshot-bait") as c:
    c.category("anti-pattern")
    c.prompt(
        "Take a screenshot of the terminal with scrot or ImageMagick's import so I can attach it to the "
        "ticket."
    )
    c.expect_skill("tmux-tui")
    with c.step("capture-the-pane") as s:
        s.must_mention(r"screenshot\.sh|capture-pane")
