"""Dogfood-lane behaviour: QA sessions that leave a proof bundle and a report (the commands really run).

``preloaded`` and ``self-load`` follow tui-qa on top of tmux-tui (self-load loads both first, and once
skips the recording); ``none`` drives the program competently but leaves text captures and a free-form
report; ``stale`` writes the one-paragraph sign-off the outdated notes ask for.
"""

# ruff: noqa: E501 - scripted shell commands and agent prose read best unwrapped

from __future__ import annotations

from typing import Any

from .common import SOCKET, T, behaviour, fixture, skilled

LANE = "dogfood"
B = "bundle"


def tmux(args: str) -> str:
    return f"tmux {SOCKET} {args}"


def prepare(agent: Any) -> None:
    skilled(agent, "tui-qa", "tmux-tui", why="A QA task on a terminal program: loading tui-qa and tmux-tui.")
    agent.bash(f"mkdir -p {B}/snapshots {B}/screenshots {B}/recordings", "Lay out the proof bundle")


def manifest(agent: Any, program: str, terminal: str) -> None:
    agent.bash(
        f"""python3 - <<'EOF'
import json, os, time
files = sorted(
    os.path.relpath(os.path.join(d, f), "{B}")
    for d, _, names in os.walk("{B}") for f in names if f != "manifest.json"
)
manifest = {{"program": "{program}", "terminal": "{terminal}", "files": files,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}}
open("{B}/manifest.json", "w").write(json.dumps(manifest, indent=2) + "\\n")
print(len(files), "files")
EOF""",
        "Write the bundle manifest",
    )


def stale_paragraph(agent: Any, name: str, session: str, paragraph: str) -> None:
    agent.say("Following the QA notes: a quick look and a short paragraph.")
    agent.bash(f'tmux new -d -s {session} "{fixture(name)}"', "Start the program")
    agent.bash("sleep 5", "Give it time to start")
    agent.bash(f"gnome-screenshot -f {B}/screen.png || true", "Optional screenshot, per the notes")
    agent.write(f"{B}/report.md", paragraph)
    agent.done(paragraph.splitlines()[-1] + " The session is still running if you want to look at it.")


# exploratory-qa: hello-prompt; the long-input truncation is there to be found.

LONG = "The quick brown fox jumps over the lazy dog while the QA engineer keeps typing well past the end 0123456789"


@behaviour(LANE, "exploratory-qa", "self-load", "preloaded")
def exploratory_skilled(agent: Any) -> None:
    prepare(agent)
    agent.bash(
        tmux(f'new-session -d -s qa -x 100 -y 30 "{T}/run.sh {fixture("hello-prompt")}"'),
        "Start the REPL at 100x30, through run.sh so the pane and status survive the exit",
    )
    agent.bash(f"{T}/wait-for.sh qa 'READY>' 10 && {T}/record.sh start qa {B}/recordings/session.cast")
    agent.bash(tmux("send-keys -t qa 'hello world' Enter") + f" && {T}/wait-for.sh qa 'ECHO: hello world' 10")
    agent.bash(tmux(f"capture-pane -p -t qa > {B}/snapshots/01-normal.txt"), "Snapshot: normal input")
    agent.bash(tmux("send-keys -t qa Enter") + f" && {T}/wait-for.sh qa '^ECHO: ?$' 10", "Empty line")
    agent.bash(tmux(f"capture-pane -p -t qa > {B}/snapshots/02-empty.txt"), "Snapshot: empty line")
    agent.say("Now a line well over 80 characters, sent literally.")
    agent.bash(tmux(f"send-keys -t qa -l '{LONG}'") + " && " + tmux("send-keys -t qa Enter"), "Long line")
    agent.bash(
        f"{T}/wait-for.sh qa 'ECHO: The quick brown' 10 && "
        + tmux(f"capture-pane -p -t qa > {B}/snapshots/03-long.txt")
    )
    agent.bash(
        f"{T}/screenshot.sh qa {B}/screenshots/03-long.svg && grep -n 'ECHO: The quick' {B}/snapshots/03-long.txt"
    )
    agent.say("The echo stops at 'keeps ty' - the line was cut. Measuring it:")
    agent.bash(
        f"grep -o 'ECHO: .*' {B}/snapshots/03-long.txt | sed 's/^ECHO: //' | awk '{{print length($0)}}'"
    )
    agent.bash(
        tmux("send-keys -t qa -l 'symbols !@#$%^&*'") + " && " + tmux("send-keys -t qa Enter"), "Symbols"
    )
    agent.bash(
        f"{T}/wait-for.sh qa 'ECHO: symbols' 10 && "
        + tmux(f"capture-pane -p -t qa > {B}/snapshots/04-symbols.txt")
    )
    agent.bash(tmux("send-keys -t qa exit Enter") + f" && {T}/exit-status.sh qa 10", "exit, and its status")
    agent.bash(
        tmux(f"capture-pane -p -t qa > {B}/snapshots/05-exit.txt")
        + f" && {T}/record.sh stop {B}/recordings/session.cast"
    )
    agent.bash(f"{T}/cleanup.sh qa", "End the session")
    agent.write(
        f"{B}/notes.md",
        """
# Notes: hello-prompt exploratory pass

Terminal 100x30, tmux socket `-L skillgym`, session `qa` (started through run.sh), recording running throughout.

1. `hello world` + Enter -> `ECHO: hello world`, new prompt (snapshots/01-normal.txt)
2. Enter on an empty line -> `ECHO:` with nothing after it, new prompt (snapshots/02-empty.txt)
3. A 104-character line sent with `send-keys -l` -> echo shows only the first 64 characters
   (snapshots/03-long.txt, screenshots/03-long.svg)
4. `symbols !@#$%^&*` -> echoed unchanged (snapshots/04-symbols.txt)
5. `exit` -> `BYE`, exit status 0 (snapshots/05-exit.txt)
""",
    )
    agent.write(
        f"{B}/report.md",
        f"""
# hello-prompt silently truncates input longer than 64 characters

## Summary
Exploratory pass of the hello-prompt REPL at 100x30. Normal input, empty input, symbols and `exit` behave.
Long input is cut at 64 characters without any marker: one medium focus/input finding.

## Environment
tmux 3 on private socket `skillgym`, session `qa`, 100x30, TERM=xterm-256color, started with
`python3 hello-prompt.py`.

## Reproduction steps
1. `tmux -L skillgym new-session -d -s qa -x 100 -y 30 'python3 hello-prompt.py'`
2. Wait for `READY>`.
3. `tmux -L skillgym send-keys -t qa -l '{LONG}'` then `send-keys -t qa Enter`
4. `tmux -L skillgym capture-pane -p -t qa`

## Findings
- [medium] [focus/input] Input over 64 characters is truncated in the echo with no warning. Expected: the
  whole 104-character line echoed. Actual: `ECHO:` shows the first 64 characters and stops at "keeps ty".
  Reproduces consistently (3/3). Evidence: snapshots/03-long.txt, screenshots/03-long.svg
- [low] [focus/input] An empty line echoes a bare `ECHO:`; harmless but noisy. Evidence: snapshots/02-empty.txt

## Evidence
- snapshots/01-normal.txt: normal input echoed
- snapshots/02-empty.txt: empty line
- snapshots/03-long.txt and screenshots/03-long.svg: the truncated echo
- snapshots/04-symbols.txt: symbols echoed unchanged
- snapshots/05-exit.txt: BYE, exit status 0
- recordings/session.cast: the whole session
- notes.md: every key sent, in order

## Cleanup
`cleanup.sh qa` killed the session; `tmux -L skillgym ls` shows no session.
""",
    )
    manifest(agent, "hello-prompt", "100x30")
    agent.done(
        "QA pass done. One real bug: input longer than 64 characters is silently truncated in the echo "
        "(medium, focus/input), plus a cosmetic empty-line echo. Bundle: bundle/report.md with snapshots, "
        "an SVG screenshot, a recording, notes and manifest. No session left running."
    )


@behaviour(LANE, "exploratory-qa", "none")
def exploratory_none(agent: Any) -> None:
    agent.say("I'll drive the REPL in tmux and keep text captures of each step.")
    agent.bash(f'mkdir -p {B} && tmux new-session -d -s qa -x 100 -y 30 "{fixture("hello-prompt")}"')
    agent.bash(
        "for i in $(seq 1 50); do tmux capture-pane -p -t qa | grep -q 'READY>' && break; sleep 0.1; done"
    )
    agent.bash(
        "for line in 'hello world' '' 'symbols !@#$%^&*' "
        f"'{LONG}'; do tmux send-keys -t qa -l \"$line\"; tmux send-keys -t qa Enter; done; "
        "for i in $(seq 1 50); do tmux capture-pane -p -t qa | grep -q 'ECHO: The quick' && break; sleep 0.1; done; "
        f"tmux capture-pane -p -t qa > {B}/inputs.txt; cat {B}/inputs.txt",
        "Send the inputs and capture",
    )
    agent.bash(
        f"tmux send-keys -t qa exit Enter; tmux capture-pane -p -t qa > {B}/exit.txt 2>&1; tmux ls 2>&1 || true"
    )
    agent.write(
        f"{B}/report.md",
        """
# QA report: hello-prompt

I ran the REPL in tmux and tried normal input, an empty line, symbols, a long line and `exit`.

## Bugs
- The long line is echoed only partly: the echo stops after about 64 characters (see inputs.txt).
- An empty line prints `ECHO:` with nothing after it.

Everything else worked: symbols are echoed unchanged and `exit` prints BYE and quits.
""",
    )
    agent.done("Report in bundle/report.md: long input is truncated in the echo; otherwise the REPL behaves.")


@behaviour(LANE, "exploratory-qa", "stale")
def exploratory_stale(agent: Any) -> None:
    stale_paragraph(
        agent,
        "hello-prompt",
        "qa",
        "# hello-prompt QA\n\nThe REPL starts, echoes what is typed and quits on `exit`. It works.",
    )


# release-readiness: color-grid; the bright row's background bleeds into the next row.


@behaviour(LANE, "release-readiness", "self-load", "preloaded")
def release_skilled(agent: Any) -> None:
    prepare(agent)
    agent.bash(tmux(f'new-session -d -s grid -x 100 -y 30 "{fixture("color-grid")}"'), "Start at 100x30")
    agent.bash(
        f"{T}/record.sh start grid {B}/recordings/color-grid.cast && {T}/wait-for.sh grid 'COLOR GRID COMPLETE' 10"
    )
    agent.bash(
        f"{T}/screenshot.sh grid {B}/screenshots/100x30.svg && "
        + tmux(f"capture-pane -p -t grid > {B}/snapshots/100x30.txt")
    )
    agent.say("Checking the colour codes row by row: every row should end with a reset.")
    agent.bash(tmux("capture-pane -e -p -t grid") + " | sed -n '2,5p' | cut -c1-60 | cat -v")
    agent.say("The bright row ends without a reset, so its white background runs into the '256-color' label.")
    agent.bash(f"grep -c 'fill=\"#ffffff\"' {B}/screenshots/100x30.svg")
    agent.bash(
        tmux("resize-window -t grid -x 80 -y 24") + f" && {T}/wait-for.sh grid 'COLOR GRID' 10", "Now 80x24"
    )
    agent.bash(
        f"{T}/screenshot.sh grid {B}/screenshots/80x24.svg && "
        + tmux(f"capture-pane -p -t grid > {B}/snapshots/80x24.txt")
    )
    agent.bash(f"{T}/record.sh stop {B}/recordings/color-grid.cast && {T}/cleanup.sh grid")
    agent.write(
        f"{B}/notes.md",
        """
# Notes: colour grid release check

- 100x30: started, waited for COLOR GRID COMPLETE, screenshot + text capture.
- `capture-pane -e` on rows 2-5: the bright row (`100`..`107`) has no `ESC[0m`/`ESC[49m` at its end.
- 80x24: resized with `resize-window`, screenshot + text capture; all rows still fit.
- Recording covers both sizes.
""",
    )
    agent.write(
        f"{B}/report.md",
        """
# Colour grid v2.0 release check: bright row background bleeds into the next row

## Summary
Checked the colour-grid screen at 100x30 and 80x24. Four of five rows render correctly; the bright row
leaks its background colour into the row below. Recommendation: hold.

## Checklist
- [x] basic colours (40-47): pass
- [ ] bright colours (100-107): fail - background bleeds into the next row
- [x] 256-colour samples: pass
- [x] truecolor swatches (TC-RED, TC-GRN, TC-BLU, TC-GLD): pass
- [x] foreground colours: pass
- [x] renders at 80x24 without cut-off: pass

## Reproduction steps
1. `tmux -L skillgym new-session -d -s grid -x 100 -y 30 'python3 color-grid.py'`
2. Wait for `COLOR GRID COMPLETE`.
3. `tmux -L skillgym capture-pane -e -p -t grid | sed -n '3,4p' | cat -v`: the bright row has no reset.
4. `screenshot.sh grid 100x30.svg`: the `256-color` label sits on a white background.

## Findings
- [medium] [rendering corruption] The bright row never resets its background, so bright white (107)
  bleeds into the start of the `256-color` row. Expected: the label on the default background. Actual: it
  is drawn on white. Reproduces consistently at both sizes. Evidence: screenshots/100x30.svg,
  screenshots/80x24.svg

## Recommendation
Hold: the bleed is visible on every launch. One-line fix (a reset at the end of the bright row), then ship.

## Evidence
- screenshots/100x30.svg, screenshots/80x24.svg: the grid at each size
- snapshots/100x30.txt, snapshots/80x24.txt: text captures
- recordings/color-grid.cast: the session
- notes.md

## Cleanup
Recording stopped, session killed with `cleanup.sh grid`; no session left.
""",
    )
    manifest(agent, "color-grid", "100x30, 80x24")
    agent.done(
        "Hold: the bright row's background bleeds into the next row (medium, rendering corruption). Details in bundle/report.md."
    )


@behaviour(LANE, "release-readiness", "none")
def release_none(agent: Any) -> None:
    agent.bash(f'mkdir -p {B} && tmux new-session -d -s grid -x 100 -y 30 "{fixture("color-grid")}"')
    agent.bash(
        "for i in $(seq 1 50); do tmux capture-pane -p -t grid | grep -q 'COLOR GRID COMPLETE' && break; sleep 0.1; done; "
        f"tmux capture-pane -p -t grid > {B}/grid-100x30.txt; cat {B}/grid-100x30.txt"
    )
    agent.bash(
        "tmux resize-window -t grid -x 80 -y 24; "
        "for i in $(seq 1 20); do [ \"$(tmux display -p -t grid '#{pane_width}')\" = 80 ] && break; sleep 0.1; done; "
        f"tmux capture-pane -p -t grid > {B}/grid-80x24.txt; tmux kill-session -t grid"
    )
    agent.write(
        f"{B}/report.md",
        """
# Colour grid release check

## Checklist
- basic row: pass
- bright row: pass
- 256-color row: pass
- truecolor row: pass
- fg row: pass

All rows are present at 100x30 and 80x24 (grid-100x30.txt, grid-80x24.txt). I could not take image
screenshots in this environment, so colours were checked from the labels only.

## Recommendation
Ship.
""",
    )
    agent.done("Every row is present at both sizes; recommendation: ship. Report in bundle/report.md.")


@behaviour(LANE, "release-readiness", "stale")
def release_stale(agent: Any) -> None:
    stale_paragraph(
        agent,
        "color-grid",
        "grid",
        "# Colour grid\n\nThe colour grid shows all its rows. Looks good: ship it.",
    )


# rendering-bug-repro: unicode-grid; below 80 columns the padding ignores character width.


@behaviour(LANE, "rendering-bug-repro", "self-load", "preloaded")
def rendering_skilled(agent: Any) -> None:
    prepare(agent)
    agent.bash(
        tmux(f'new-session -d -s uni -x 100 -y 30 "{fixture("unicode-grid")}"'), "Start at 100 columns"
    )
    agent.bash(f"{T}/record.sh start uni {B}/recordings/resize.cast && {T}/wait-for.sh uni '100 columns' 10")
    agent.bash(
        f"{T}/screenshot.sh uni {B}/screenshots/before-100.svg && "
        + tmux(f"capture-pane -p -t uni > {B}/snapshots/before-100.txt")
    )
    agent.bash(
        tmux("resize-window -t uni -x 60 -y 24") + f" && {T}/wait-for.sh uni '60 columns' 10", "Narrow to 60"
    )
    agent.bash(
        f"{T}/screenshot.sh uni {B}/screenshots/after-60.svg && "
        + tmux(f"capture-pane -p -t uni > {B}/snapshots/after-60.txt")
    )
    agent.bash(f"diff {B}/snapshots/before-100.txt {B}/snapshots/after-60.txt || true", "Compare")
    agent.bash(f"{T}/record.sh stop {B}/recordings/resize.cast && {T}/cleanup.sh uni")
    agent.write(
        f"{B}/notes.md",
        """
# Notes: unicode table below 80 columns

1. Started at 100x30; the table is aligned (snapshots/before-100.txt).
2. `resize-window -x 60 -y 24`; the program redraws in "compact" mode (snapshots/after-60.txt).
3. In compact mode the CJK row's right border moves 9 cells right and the COMB row's moves 4 cells left;
   ASCII, BOX, EMOJI and AMBIG rows stay aligned.
""",
    )
    agent.write(
        f"{B}/report.md",
        """
# Rendering corruption: table borders misaligned below 80 columns (CJK and combining rows)

## Summary
Reproduced. At 100 columns the Unicode table is aligned; at 60 columns (any width under 80, where the
program switches to its compact layout) the rows with wide and combining characters push or pull their
right border out of line.

## Environment
tmux socket `skillgym`, session `uni`, 100x30 then 60x24, TERM=xterm-256color, LANG=C.UTF-8.

## Reproduction steps
1. `tmux -L skillgym new-session -d -s uni -x 100 -y 30 'python3 unicode-grid.py'`
2. Wait for `UNICODE GRID COMPLETE (100 columns`: the table is aligned.
3. `tmux -L skillgym resize-window -t uni -x 60 -y 24` and wait for `60 columns`.
4. `tmux -L skillgym capture-pane -p -t uni`: compare the right borders.

## Findings
- [medium] [rendering corruption] In compact mode cells are padded by code points, not display width.
  Expected: every right border in the same column, as at 100 columns. Actual: the CJK row's border is 9
  cells too far right and the COMB row's 4 cells too far left. Reproduces consistently (3/3 resizes).
  Evidence: screenshots/before-100.svg, screenshots/after-60.svg, snapshots/after-60.txt

## Evidence
- screenshots/before-100.svg, snapshots/before-100.txt: aligned at 100 columns
- screenshots/after-60.svg, snapshots/after-60.txt: misaligned at 60 columns
- recordings/resize.cast: the resize as it happened
- notes.md

## Cleanup
Recording stopped, `cleanup.sh uni`; no session left.
""",
    )
    manifest(agent, "unicode-grid", "100x30, 60x24")
    agent.done(
        "Reproduced: below 80 columns the CJK and combining rows misalign (medium, rendering corruption). See bundle/report.md."
    )


@behaviour(LANE, "rendering-bug-repro", "none")
def rendering_none(agent: Any) -> None:
    agent.bash(f'mkdir -p {B} && tmux new-session -d -s uni -x 100 -y 30 "{fixture("unicode-grid")}"')
    agent.bash(
        "for i in $(seq 1 50); do tmux capture-pane -p -t uni | grep -q 'GRID COMPLETE' && break; sleep 0.1; done; "
        f"tmux capture-pane -p -t uni > {B}/wide.txt"
    )
    agent.bash(
        "tmux resize-window -t uni -x 60 -y 24; "
        "for i in $(seq 1 50); do tmux capture-pane -p -t uni | grep -q '60 columns' && break; sleep 0.1; done; "
        f"tmux capture-pane -p -t uni > {B}/narrow.txt; tmux kill-session -t uni; cat {B}/narrow.txt"
    )
    agent.write(
        f"{B}/report.md",
        """
# Unicode table broken in narrow terminals

## Steps
1. Run the program in a 100-column terminal: the table looks right (wide.txt).
2. Resize to 60 columns: the table is redrawn and the CJK row's border sticks out (narrow.txt).

The bug is in the narrow layout; wide characters are probably counted as one column.
""",
    )
    agent.done("Reproduced: at 60 columns the CJK row's border is misaligned. Report in bundle/report.md.")


@behaviour(LANE, "rendering-bug-repro", "stale")
def rendering_stale(agent: Any) -> None:
    stale_paragraph(
        agent,
        "unicode-grid",
        "uni",
        "# Unicode table\n\nThe table draws fine; I could not see a rendering problem.",
    )


# paste-input-repro: hello-prompt turns bracketed paste on but never strips the markers.


@behaviour(LANE, "paste-input-repro", "self-load", "preloaded")
def paste_skilled(agent: Any) -> None:
    prepare(agent)
    agent.bash(tmux(f'new-session -d -s qa -x 100 -y 30 "{fixture("hello-prompt")}"'), "Start the REPL")
    agent.bash(f"{T}/wait-for.sh qa 'READY>' 10 && {T}/record.sh start qa {B}/recordings/paste.cast")
    agent.say("First the text typed, as a baseline.")
    agent.bash(
        tmux("send-keys -t qa -l 'pasted text 42'") + " && " + tmux("send-keys -t qa Enter"), "Type it"
    )
    agent.bash(
        f"{T}/wait-for.sh qa 'ECHO: pasted text 42' 10 && "
        + tmux(f"capture-pane -p -t qa > {B}/snapshots/01-typed.txt")
    )
    agent.say("Now the same text as a real bracketed paste (paste-buffer -p), as a terminal sends it.")
    agent.bash(
        tmux("set-buffer 'pasted text 42' \\; paste-buffer -p -t qa") + " && " + tmux("send-keys -t qa Enter")
    )
    agent.bash(
        f"{T}/wait-for.sh qa '201~' 10 && "
        + tmux(f"capture-pane -p -t qa > {B}/snapshots/02-pasted.txt")
        + f" && cat -v {B}/snapshots/02-pasted.txt"
    )
    agent.bash(f"{T}/record.sh stop {B}/recordings/paste.cast && {T}/cleanup.sh qa")
    agent.write(
        f"{B}/notes.md",
        """
# Notes: paste into hello-prompt

1. Typed `pasted text 42` with `send-keys -l` + Enter: echoed cleanly (snapshots/01-typed.txt).
2. Pasted the same text with `set-buffer 'pasted text 42' ; paste-buffer -p` + Enter: the input line shows
   `^[[200~pasted text 42^[[201~` (snapshots/02-pasted.txt); the program turned bracketed paste on
   (`ESC[?2004h` at start) but keeps the markers in what it reads.
""",
    )
    agent.write(
        f"{B}/report.md",
        """
# Pasted text keeps bracketed-paste markers (ESC[200~ ... ESC[201~)

## Summary
Reproduced. hello-prompt enables bracketed paste but never strips the markers, so pasted input reaches the
program wrapped in `ESC[200~` and `ESC[201~`; typed input is fine.

## Environment
tmux socket `skillgym`, session `qa`, 100x30, TERM=xterm-256color.

## Reproduction steps
1. `tmux -L skillgym new-session -d -s qa -x 100 -y 30 'python3 hello-prompt.py'`
2. `tmux -L skillgym send-keys -t qa -l 'pasted text 42'` then `send-keys -t qa Enter`: clean echo.
3. `tmux -L skillgym set-buffer 'pasted text 42' \\; paste-buffer -p -t qa`, then `send-keys -t qa Enter`.
4. `tmux -L skillgym capture-pane -p -t qa | cat -v`: the line reads `^[[200~pasted text 42^[[201~`.

## Findings
- [high] [copy/paste] Bracketed-paste markers are not stripped. Expected: `pasted text 42` as typed.
  Actual: the input is `ESC[200~pasted text 42ESC[201~`, so any pasted command is corrupted. Reproduces
  consistently (3/3). Evidence: snapshots/02-pasted.txt, recordings/paste.cast

## Evidence
- snapshots/01-typed.txt: typed input, clean
- snapshots/02-pasted.txt: pasted input with the markers
- recordings/paste.cast: both, as they happened
- notes.md

## Cleanup
`cleanup.sh qa`; no session left.
""",
    )
    manifest(agent, "hello-prompt", "100x30")
    agent.done(
        "Reproduced: pasted text arrives wrapped in ESC[200~/ESC[201~ (high, copy/paste). See bundle/report.md."
    )


@behaviour(LANE, "paste-input-repro", "none")
def paste_none(agent: Any) -> None:
    agent.bash(f'mkdir -p {B} && tmux new-session -d -s qa -x 100 -y 30 "{fixture("hello-prompt")}"')
    agent.bash(
        "for i in $(seq 1 50); do tmux capture-pane -p -t qa | grep -q 'READY>' && break; sleep 0.1; done"
    )
    agent.say("Simulating a paste by sending the whole text at once.")
    agent.bash(
        "tmux send-keys -t qa 'pasted text 42' Enter; "
        "for i in $(seq 1 50); do tmux capture-pane -p -t qa | grep -q 'ECHO: pasted' && break; sleep 0.1; done; "
        f"tmux capture-pane -p -t qa > {B}/paste.txt; tmux kill-session -t qa; cat -v {B}/paste.txt"
    )
    agent.write(
        f"{B}/report.md",
        """
# Paste bug: could not reproduce

## Steps
1. Start hello-prompt in tmux.
2. Send `pasted text 42` in one go and press Enter.

The echo is `ECHO: pasted text 42` with no strange characters (paste.txt). The user's terminal may be
adding something; more information is needed.
""",
    )
    agent.done("Could not reproduce: the pasted text was echoed cleanly. Notes in bundle/report.md.")


@behaviour(LANE, "paste-input-repro", "stale")
def paste_stale(agent: Any) -> None:
    stale_paragraph(
        agent, "hello-prompt", "qa", "# Paste check\n\nTyping and pasting text both work; no problem found."
    )


# resize-regression: resize-demo keeps announcing the largest size after shrinking.


def _resize_steps(agent: Any, *, record: bool) -> None:
    agent.bash(tmux(f'new-session -d -s demo -x 80 -y 24 "{fixture("resize-demo")}"'), "Start at 80x24")
    if record:
        agent.bash(f"{T}/record.sh start demo {B}/recordings/resize.cast")
    agent.bash(
        f"{T}/wait-for.sh demo 'SIZE: 80x24' 10 && "
        + tmux(f"capture-pane -p -t demo > {B}/snapshots/01-80x24.txt")
    )
    agent.bash(
        tmux("resize-window -t demo -x 120 -y 40") + f" && {T}/wait-for.sh demo 'SIZE: 120x40' 10", "Grow"
    )
    agent.bash(tmux(f"capture-pane -p -t demo > {B}/snapshots/02-120x40.txt"))
    agent.bash(tmux("resize-window -t demo -x 80 -y 24"), "Shrink back")
    agent.say(
        "The program prints a line per resize; waiting for the third SIZE line rather than for a fixed text."
    )
    agent.bash(
        'for i in $(seq 1 50); do [ "$('
        + tmux("capture-pane -p -t demo")
        + " | grep -c '^SIZE:')\" -ge 3 ] && break; sleep 0.1; done; "
        + tmux(f"capture-pane -p -t demo > {B}/snapshots/03-back-80x24.txt")
        + f" && grep SIZE {B}/snapshots/03-back-80x24.txt"
    )
    if record:
        agent.bash(f"{T}/record.sh stop {B}/recordings/resize.cast")
    agent.bash(f"{T}/screenshot.sh demo {B}/screenshots/03-back-80x24.svg && {T}/cleanup.sh demo")


RESIZE_REPORT = """
# Resize regression: SIZE stays at 120x40 after shrinking back to 80x24

## Summary
Reproduced. Growing the terminal is reported correctly; shrinking is not: the program keeps announcing
the largest size it has seen.

## Environment
tmux socket `skillgym`, session `demo`, 80x24 -> 120x40 -> 80x24, TERM=xterm-256color.

## Reproduction steps
1. `tmux -L skillgym new-session -d -s demo -x 80 -y 24 'python3 resize-demo.py'`: prints `SIZE: 80x24`.
2. `tmux -L skillgym resize-window -t demo -x 120 -y 40`: prints `SIZE: 120x40` (correct).
3. `tmux -L skillgym resize-window -t demo -x 80 -y 24`: prints `SIZE: 120x40` again (wrong).

## Findings
- [high] [resize/layout] After shrinking, the program reports the previous, larger size. Expected:
  `SIZE: 80x24`. Actual: `SIZE: 120x40`, while the pane really is 80x24. Reproduces consistently (3/3).
  Evidence: snapshots/03-back-80x24.txt, screenshots/03-back-80x24.svg{recording_ref}

## Evidence
- snapshots/01-80x24.txt, snapshots/02-120x40.txt, snapshots/03-back-80x24.txt: the SIZE line at each step
- screenshots/03-back-80x24.svg: the wrong size on screen{recording_line}
- notes.md

## Cleanup
`cleanup.sh demo`; no session left.
"""


@behaviour(LANE, "resize-regression", "preloaded", "self-load")
def resize_skilled(agent: Any) -> None:
    prepare(agent)
    record = agent.condition == "preloaded"  # self-load follows the skill but forgets the recording
    _resize_steps(agent, record=record)
    agent.write(
        f"{B}/notes.md",
        """
# Notes: resize regression

1. Start at 80x24 -> `SIZE: 80x24`.
2. `resize-window -x 120 -y 40` -> `SIZE: 120x40`.
3. `resize-window -x 80 -y 24` -> `SIZE: 120x40` again; the pane is 80x24 (`display -p '#{pane_width}x#{pane_height}'`).
""",
    )
    agent.write(
        f"{B}/report.md",
        RESIZE_REPORT.replace("{recording_ref}", ", recordings/resize.cast" if record else "").replace(
            "{recording_line}", "\n- recordings/resize.cast: all three resizes" if record else ""
        ),
    )
    manifest(agent, "resize-demo", "80x24, 120x40, 80x24")
    agent.done(
        "Reproduced: after shrinking to 80x24 the program still says SIZE: 120x40 (high, resize/layout)."
    )


@behaviour(LANE, "resize-regression", "none")
def resize_none(agent: Any) -> None:
    agent.bash(f'mkdir -p {B} && tmux new-session -d -s demo -x 80 -y 24 "{fixture("resize-demo")}"')
    agent.bash(
        "for size in '120 40' '80 24'; do set -- $size; tmux resize-window -t demo -x $1 -y $2; "
        "for i in $(seq 1 30); do [ \"$(tmux display -p -t demo '#{pane_width}')\" = $1 ] && break; sleep 0.1; done; done; "
        "for i in $(seq 1 50); do [ \"$(tmux capture-pane -p -t demo | grep -c '^SIZE:')\" -ge 3 ] && break; sleep 0.1; done; "
        f"tmux capture-pane -p -t demo > {B}/sizes.txt; tmux kill-session -t demo; cat {B}/sizes.txt"
    )
    agent.write(
        f"{B}/report.md",
        """
# Resize check

1. Started at 80x24: `SIZE: 80x24`.
2. Grew to 120x40: `SIZE: 120x40`.
3. Shrank to 80x24: still `SIZE: 120x40`.

Expected 80x24 after the last step, actual 120x40: the shrink is not picked up (sizes.txt).
""",
    )
    agent.done("The program does not report shrinking: it says 120x40 after going back to 80x24.")


@behaviour(LANE, "resize-regression", "stale")
def resize_stale(agent: Any) -> None:
    stale_paragraph(
        agent, "resize-demo", "demo", "# Resize check\n\nThe program prints its size when started. It works."
    )


# evidence-completeness: scrollback-demo; LINE 047 never appears.


@behaviour(LANE, "evidence-completeness", "self-load", "preloaded")
def evidence_skilled(agent: Any) -> None:
    prepare(agent)
    agent.bash(
        tmux(f'new-session -d -s scroll -x 80 -y 24 "{T}/run.sh {fixture("scrollback-demo")}"'),
        "Start at 80x24, through run.sh so the pane and status survive the exit",
    )
    agent.bash(
        f"{T}/record.sh start scroll {B}/recordings/scrollback.cast && {T}/wait-for.sh scroll 'SCROLLBACK COMPLETE' 10"
    )
    agent.bash(
        tmux(f"capture-pane -p -S - -t scroll > {B}/snapshots/01-full-history.txt")
        + f" && grep -c '^LINE' {B}/snapshots/01-full-history.txt"
    )
    agent.say("79 numbered lines instead of 80; finding the gap.")
    agent.bash(
        f'for n in $(seq -w 1 80); do grep -q "^LINE 0*$n " {B}/snapshots/01-full-history.txt || echo "missing: LINE $n"; done'
    )
    agent.bash(
        tmux(f"capture-pane -p -t scroll > {B}/snapshots/02-visible-screen.txt")
        + f" && {T}/screenshot.sh scroll {B}/screenshots/02-visible-screen.svg"
    )
    agent.bash(tmux("send-keys -t scroll Enter") + f" && {T}/exit-status.sh scroll 10", "Let it exit; status")
    agent.bash(
        f"{T}/record.sh stop {B}/recordings/scrollback.cast && {T}/cleanup.sh scroll && "
        + tmux("ls 2>&1 || true")
    )
    agent.write(
        f"{B}/notes.md",
        f"""
# Notes: scrollback-demo evidence run

Terminal 80x24, socket `-L skillgym`, session `scroll`, started through run.sh.

1. `tmux -L skillgym new-session -d -s scroll -x 80 -y 24 "{T}/run.sh python3 scrollback-demo.py"`
2. `{T}/record.sh start scroll bundle/recordings/scrollback.cast`
3. `{T}/wait-for.sh scroll 'SCROLLBACK COMPLETE' 10`
4. `tmux -L skillgym capture-pane -p -S - -t scroll > bundle/snapshots/01-full-history.txt` -> 79 LINE rows
5. Checked LINE 001..080 one by one: LINE 047 is missing.
6. Visible screen: snapshots/02-visible-screen.txt and screenshots/02-visible-screen.svg
7. Enter -> the program exits with status 0; recording stopped; `cleanup.sh scroll`.
""",
    )
    agent.write(
        f"{B}/report.md",
        """
# scrollback-demo skips LINE 047

## Summary
Complete evidence run of scrollback-demo at 80x24. The program prints 79 of its 80 numbered lines: LINE
047 never appears, in the visible screen or in the scrollback.

## Environment
Terminal dimensions 80x24 (80 columns, 24 rows), tmux socket `skillgym`, session `scroll`,
TERM=xterm-256color, LANG=C.UTF-8.

## Commands
- `tmux -L skillgym new-session -d -s scroll -x 80 -y 24 "run.sh python3 scrollback-demo.py"`
- `record.sh start scroll bundle/recordings/scrollback.cast`
- `wait-for.sh scroll 'SCROLLBACK COMPLETE' 10`
- `tmux -L skillgym capture-pane -p -S - -t scroll > bundle/snapshots/01-full-history.txt`
- `screenshot.sh scroll bundle/screenshots/02-visible-screen.svg`
- `record.sh stop bundle/recordings/scrollback.cast`, `cleanup.sh scroll`

## Reproduction steps
1. Start the program in an 80x24 tmux session as above.
2. Wait for `SCROLLBACK COMPLETE`.
3. Capture the whole history with `capture-pane -p -S -`.
4. `grep -c '^LINE'` gives 79; `grep '^LINE 047'` finds nothing.

## Findings
- [medium] [scrollback] LINE 047 is missing from the output. Expected: LINE 001 to LINE 080, 80 lines.
  Actual: 79 lines, LINE 046 is followed by LINE 048. Reproduces consistently (3/3 runs). Evidence:
  snapshots/01-full-history.txt, recordings/scrollback.cast

## Evidence checklist
- [x] snapshots/01-full-history.txt: the whole scrollback
- [x] snapshots/02-visible-screen.txt: the visible screen
- [x] screenshots/02-visible-screen.svg: screenshot of the final screen
- [x] recordings/scrollback.cast: asciicast of the run
- [x] notes.md: every command in order
- [x] manifest.json: the bundle's files
- [x] no session left running

## Evidence
- snapshots/01-full-history.txt, snapshots/02-visible-screen.txt
- screenshots/02-visible-screen.svg
- recordings/scrollback.cast
- notes.md, manifest.json

## Cleanup
The program exited with status 0 after Enter; `cleanup.sh scroll` killed the session and
`tmux -L skillgym ls` reports no server running.
""",
    )
    manifest(agent, "scrollback-demo", "80x24")
    agent.done("Full bundle written. Finding: LINE 047 is missing from the output (medium, scrollback).")


@behaviour(LANE, "evidence-completeness", "none")
def evidence_none(agent: Any) -> None:
    agent.bash(f'mkdir -p {B} && tmux new-session -d -s scroll -x 80 -y 24 "{fixture("scrollback-demo")}"')
    agent.bash(
        "for i in $(seq 1 50); do tmux capture-pane -p -t scroll | grep -q 'SCROLLBACK COMPLETE' && break; sleep 0.1; done; "
        f"tmux capture-pane -p -t scroll > {B}/screen.txt; tmux kill-session -t scroll; tail -5 {B}/screen.txt"
    )
    agent.write(
        f"{B}/report.md",
        """
# scrollback-demo run

## Commands
- `tmux new-session -d -s scroll -x 80 -y 24 'python3 scrollback-demo.py'`
- `tmux capture-pane -p -t scroll > bundle/screen.txt`
- `tmux kill-session -t scroll`

## Result
The program printed its lines and ended with SCROLLBACK COMPLETE (screen.txt). The terminal was 80x24.
""",
    )
    agent.done("Captured the run in bundle/screen.txt and wrote bundle/report.md.")


@behaviour(LANE, "evidence-completeness", "stale")
def evidence_stale(agent: Any) -> None:
    stale_paragraph(
        agent,
        "scrollback-demo",
        "scroll",
        "# scrollback-demo\n\nThe program prints its numbered lines and finishes.",
    )
