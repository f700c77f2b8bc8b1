"""Execution lane, artifact cases: screenshots, exact Unicode captures and recordings someone can review."""

from skillgym import execution_case

# Run by a.command() in the workspace after the trial (fixtures/_check_cast.py): is the file a real
# asciicast v2 recording whose frames show the program's reply?
CHECK_CAST = 'python3 "$SKILLGYM_FIXTURES/_check_cast.py" artifacts/session.cast "ECHO: hello cast"'

with execution_case("color-grid") as c:
    c.category("artifact")
    c.fixture("color-grid")
    c.workspace("tui-artifacts")
    c.expect_skill("tmux-tui")
    c.task(
        "Once the program has drawn its whole colour grid, save a screenshot of it with its colours, as an "
        "SVG image at artifacts/color-grid.svg. End the session afterwards."
    )
    with c.workflow() as w:
        w.create_session().wait_for("COLOR GRID COMPLETE").screenshot().destroy()
    with c.assertions() as a:
        a.file_contains("artifacts/color-grid.svg", r"<svg\b")
        a.file_contains(
            "artifacts/color-grid.svg", r"TC-RED", description="the grid's labels are in the image"
        )
        a.file_contains(
            "artifacts/color-grid.svg",
            r"#ff0000|rgb\(\s*255\s*,\s*0\s*,\s*0\s*\)",
            description="the truecolor red swatch kept its colour",
        )
        a.no_live_sessions()
    c.artifact("screenshot", "artifacts/*.svg", description="an SVG screenshot under artifacts/")
    c.budget(timeout_s=120, max_turns=10)
    c.reference_steps(4)

with execution_case("unicode-grid") as c:
    c.category("artifact")
    c.fixture("unicode-grid")
    c.workspace("tui-artifacts")
    c.expect_skill("tmux-tui")
    c.task(
        "Run the program in a 100x30 terminal and save its table as text to artifacts/unicode.txt, exactly "
        "as drawn: box lines, CJK and emoji intact. End the session afterwards."
    )
    with c.workflow() as w:
        w.create_session().wait_for("UNICODE GRID COMPLETE").snapshot().destroy()
    with c.assertions() as a:
        a.file_contains("artifacts/unicode.txt", r"┌─+┬")
        a.file_contains("artifacts/unicode.txt", r"漢字テスト中文日本")
        a.file_contains("artifacts/unicode.txt", r"✓ ✗ ★")
        a.file_contains("artifacts/unicode.txt", r"UNICODE GRID COMPLETE \(100 columns")
        a.no_live_sessions()
    c.budget(timeout_s=120, max_turns=10)
    c.reference_steps(4)

with execution_case("export-proof") as c:
    c.category("artifact")
    c.fixture("hello-prompt")
    c.workspace("tui-artifacts")
    c.expect_skill("tmux-tui")
    c.task(
        "Record a short session as an asciicast v2 file at artifacts/session.cast: send 'hello cast' to the "
        "program and let its reply show before the recording ends. End the session afterwards."
    )
    with c.workflow() as w:
        w.create_session().wait_for("READY>").input("hello cast").wait_for("ECHO: hello cast").destroy()
    with c.step("record-cast", description="record the pane to artifacts/session.cast") as s:
        s.must_mention(r"artifacts/session\.cast").after("create-session")
    with c.assertions() as a:
        a.command(
            ["sh", "-c", CHECK_CAST],
            stdout=r"valid asciicast",
            description="a valid asciicast v2 file whose frames show the reply",
        )
        a.fixture_received("hello cast")
        a.no_live_sessions()
    c.artifact("recording", "artifacts/*.cast")
    c.budget(timeout_s=180, max_turns=14)
    c.reference_steps(7)
