"""Prompt lane, tui-qa triggers: QA, bug reproduction and release checks of terminal programs."""

from skillgym import prompt_case

EVIDENCE = r"snapshot|screenshot|\.svg|\.cast|recording"
SEVERITY = r"\b(severity|high|medium|low)\b"

with prompt_case("exploratory-testing") as c:
    c.category("trigger-qa")
    c.prompt(
        "Explore our terminal todo app like a QA engineer, find bugs, and hand me a report with evidence."
    )
    c.expect_skill("tui-qa")
    with c.step("collect-evidence") as s:
        s.must_mention(EVIDENCE)
    with c.step("structured-report") as s:
        s.must_mention(r"reproduc", SEVERITY)

with prompt_case("bug-hunting") as c:
    c.category("trigger-qa")
    c.prompt("Hunt for rendering and input bugs in our TUI file manager and classify what you find.")
    c.expect_skill("tui-qa")
    with c.step("classify-with-taxonomy") as s:
        s.must_mention(r"rendering corruption", r"focus/input")
    with c.step("evidence") as s:
        s.must_mention(EVIDENCE)

with prompt_case("release-check") as c:
    c.category("trigger-qa")
    c.prompt(
        "We ship v2.0 of the TUI on Friday. Do a release-readiness check and give me a quality report "
        "with a ship or hold call."
    )
    c.expect_skill("tui-qa")
    with c.step("checklist") as s:
        s.must_mention(r"checklist", r"pass|fail")
    with c.step("recommendation") as s:
        s.must_mention(r"\bship\b", r"\bhold\b")
    with c.step("visual-evidence") as s:
        s.must_mention(r"screenshot|\.svg")

with prompt_case("ux-review") as c:
    c.category("trigger-qa")
    c.prompt(
        "Review the navigation, responsiveness and visual consistency of our terminal dashboard and write "
        "up what you find."
    )
    c.expect_skill("tui-qa")
    with c.step("several-sizes") as s:
        s.must_mention(r"resize|\d+x\d+")
    with c.step("visual-evidence") as s:
        s.must_mention(r"screenshot|\.svg")
    with c.step("write-up") as s:
        s.must_mention(r"report", SEVERITY)

with prompt_case("issue-reproduction") as c:
    c.category("trigger-qa")
    c.prompt(
        "Users report that the app crashes when they resize the terminal. Reproduce it and capture "
        "evidence for the bug report."
    )
    c.expect_skill("tui-qa")
    with c.step("reproduce-resize") as s:
        s.must_mention(r"resize-window|resize-pane")
    with c.step("keep-the-crash") as s:
        s.must_mention(r"remain-on-exit|exit status|exit code")
    with c.step("label") as s:
        s.must_mention(r"crash/recovery")

with prompt_case("regression-triage") as c:
    c.category("trigger-qa")
    c.prompt(
        "Is the v1.3 scrollback regression (lines missing from the history) still present on main? Triage it."
    )
    c.expect_skill("tui-qa")
    with c.step("whole-history") as s:
        s.must_mention(r"-S\s*-|full scrollback|whole scrollback")
    with c.step("label") as s:
        s.must_mention(r"\bscrollback\b")
    with c.step("verdict") as s:
        s.must_mention(r"still present|fixed|reproduc")
