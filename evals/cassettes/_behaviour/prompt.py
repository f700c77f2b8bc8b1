"""Prompt-lane behaviour: text answers per condition (and, under self-load, the skills the agent loads).

``preloaded`` follows the injected skills; ``self-load`` loads them with the Skill tool and then answers
the same way, except where it routes or plans worse (ux-review, snapshot-inspection); ``none`` gives the
generic advice a capable agent without the skill gives; ``stale`` follows the outdated notes (GNU
screen, fixed sleeps, OS screenshots, one-paragraph QA).
"""

# ruff: noqa: E501 - scripted shell commands and agent prose read best unwrapped

from __future__ import annotations

from typing import Any

from .common import T, behaviour

# Per case: (skills a routed agent loads, the answer that follows the skills, what none says, what stale
# says). Answers are what the agent prints at the end; the prompt lane never runs commands.
ANSWERS: dict[str, tuple[tuple[str, ...], str, str, str]] = {}


def answers(case: str, skills: tuple[str, ...], skilled: str, none: str, stale: str) -> None:
    ANSWERS[case] = (skills, skilled.strip(), none.strip(), stale.strip())


answers(
    "session-creation",
    ("tmux-tui",),
    f"""
I'd use the **tmux-tui** skill: run the build in a detached tmux session on a private socket, keep the
pane when the build exits, and save the whole output at the end.

1. Start it: `tmux -L skillgym new-session -d -s build -x 120 -y 40 "{T}/run.sh ./build.sh"` (run.sh keeps
   the pane and prints the exit status when the build ends)
2. Check on it any time: `tmux -L skillgym capture-pane -p -t build | tail -20`
3. Wait for the end with a deadline rather than a fixed sleep: `{T}/exit-status.sh build 1800` prints the
   exit code as soon as the build finishes.
4. Save everything it printed, scrollback included: `tmux -L skillgym capture-pane -p -S - -t build > build.log`
5. Clean up: `{T}/cleanup.sh build` (it confirms no session is left on the socket).
""",
    """
Run it in the background and log its output:

1. `nohup ./build.sh > build.log 2>&1 &` and note the PID (`echo $!`).
2. Check progress with `tail -f build.log`; `ps -p <pid>` tells you whether it is still running.
3. When it ends, `build.log` has everything it printed; `wait <pid>` in the same shell gives the exit code.
""",
    """
Following the tmux-tui notes (v0.3):

```
screen -dmS build ./build.sh
sleep 5
screen -S build -X hardcopy build.log
```

Leave the session running afterwards so you can attach with `screen -r build` and look around.
""",
)

answers(
    "interactive-cli",
    ("tmux-tui",),
    f"""
This is a job for the **tmux-tui** skill: drive the installer in a tmux session and answer each question
only once it is on screen.

1. `tmux -L skillgym new-session -d -s install -x 100 -y 30 "{T}/run.sh ./install.sh"`
2. `{T}/wait-for.sh install 'name' 30`, then `tmux -L skillgym send-keys -t install 'alice' Enter`
3. `{T}/wait-for.sh install 'port' 30`, then `tmux -L skillgym send-keys -t install '8080' Enter`
4. `{T}/wait-for.sh install 'y/n' 30`, then `tmux -L skillgym send-keys -t install 'y' Enter`
5. `{T}/exit-status.sh install 120` to confirm it finished with 0, and
   `tmux -L skillgym capture-pane -p -S - -t install > install.log` as a record.
6. `{T}/cleanup.sh install`.

Each answer waits on the question text itself, never on a timer, so a slow step cannot get the wrong answer.
""",
    """
Use `expect`, which was made for this:

```
#!/usr/bin/expect -f
spawn ./install.sh
expect "name"  { send "alice\\r" }
expect "port"  { send "8080\\r" }
expect "y/n"   { send "y\\r" }
expect eof
```

Or in Python with `pexpect` if you prefer: `child.expect('name'); child.sendline('alice')`, and so on.
""",
    """
With the tmux-tui notes: start it with `tmux new -d -s install './install.sh'`, then give it time and type
the answers:

```
sleep 5
tmux send-keys -t install 'alice' Enter
sleep 2
tmux send-keys -t install '8080' Enter
sleep 2
tmux send-keys -t install 'y' Enter
```

Leave the session running so you can attach and check the result.
""",
)

answers(
    "wait-for-output",
    ("tmux-tui",),
    f"""
Use the **tmux-tui** skill to wait on the server's own output:

1. `tmux -L skillgym new-session -d -s server -x 120 -y 30 'npm start'`
2. `{T}/wait-for.sh server 'Listening on port 3000' 60` polls the pane and fails after 60 s.
   That is instead of a blind sleep, which is either too short or too slow.
3. Run the tests once it returns 0; if it returns 1 it prints the pane, which tells you why the server
   never came up.
4. `{T}/cleanup.sh server` when the tests are done.
""",
    """
Start the server in the background and poll its log for the line:

```
npm start > server.log 2>&1 &
timeout 60 bash -c 'until grep -q "Listening on port 3000" server.log; do sleep 0.5; done'
npm test
```
""",
    """
As the tmux-tui notes say, give the server a few seconds before testing:

```
tmux new -d -s server 'npm start'
sleep 5
tmux capture-pane -p -t server | grep 'Listening on port 3000' && npm test
```
""",
)

SNAPSHOT_SKILLED = f"""
With the **tmux-tui** skill, on the session that runs your REPL (say `repl`, socket `-L skillgym`):

1. Wait until the run is over rather than guessing: `{T}/wait-for.sh repl 'make: \\*\\*\\*|passed|failed' 900`
2. Capture the whole history, not just the screen (hundreds of lines scroll off the top):
   `tmux -L skillgym capture-pane -p -S - -t repl > make-test.txt`
3. Check the result: `grep -nE 'FAILED|Error|[0-9]+ passed' make-test.txt | tail -5`
"""
answers(
    "snapshot-inspection",
    ("tmux-tui",),
    SNAPSHOT_SKILLED,
    """
If the REPL runs inside tmux, `tmux capture-pane -p` prints what the terminal shows; otherwise rerun
`make test 2>&1 | tee make-test.log` so you have the output in a file, then check the summary line with
`tail -5 make-test.log`.
""",
    """
Per the tmux-tui notes, read the screen with tmux, including the history since the output is long:

```
tmux capture-pane -p -S - -t repl > out.txt
grep -E 'FAILED|passed' out.txt
```
""",
)

answers(
    "screenshot-capture",
    ("tmux-tui",),
    f"""
The **tmux-tui** skill renders the pane itself, colours included, to SVG, which drops straight into a PR:

1. `tmux -L skillgym new-session -d -s dash -x 120 -y 40 './dashboard'`
2. `{T}/wait-for.sh dash 'CPU' 15` so the dashboard has drawn
3. `{T}/screenshot.sh dash shots/dashboard.svg`
4. `{T}/cleanup.sh dash`

An OS-level screenshot would capture a desktop and a font you do not control; the SVG is the terminal's
exact cells.
""",
    """
Run the dashboard in your terminal at a comfortable size and use the OS screenshot tool:
`gnome-screenshot -w` on Linux (active window), Cmd+Shift+4 then Space on macOS. Crop it and paste the
PNG into the PR description.
""",
    """
The tmux-tui notes say to take an OS screenshot once the dashboard is up:

```
tmux new -d -s dash './dashboard'
sleep 5
import -window root dashboard.png
```
""",
)

answers(
    "recording-export",
    ("tmux-tui",),
    f"""
Use the **tmux-tui** recorder, which writes an asciicast v2 file (asciinema-player replays it in a
browser):

1. `tmux -L skillgym new-session -d -s demo -x 100 -y 30 './cli-demo'`
2. `{T}/record.sh start demo demo.cast`
3. Drive the demo: `tmux -L skillgym send-keys -t demo 'list' Enter`, then
   `{T}/wait-for.sh demo 'items' 10`, and so on for each step.
4. `{T}/record.sh stop demo.cast` (stop before ending the session, so the last screen is in the file)
5. `{T}/cleanup.sh demo`
""",
    """
asciinema is the usual tool: `asciinema rec demo.cast`, run the demo, press Ctrl-D to stop. The .cast
file plays in the browser with asciinema-player, or upload it with `asciinema upload demo.cast`.
""",
    """
The tmux-tui notes say recordings are not needed and a screenshot says enough:

```
tmux new -d -s demo './cli-demo'
sleep 5
scrot demo.png
```
""",
)

answers(
    "cli-workflow-test",
    ("tmux-tui",),
    f"""
With the **tmux-tui** skill, one command at a time, each checked before the next:

1. `tmux -L skillgym new-session -d -s app -x 100 -y 30 './app'` and `{T}/wait-for.sh app '> $' 10`
2. `tmux -L skillgym send-keys -t app 'init' Enter`, `{T}/wait-for.sh app 'initialized' 10`,
   `tmux -L skillgym capture-pane -p -t app > 1-init.txt`
3. `tmux -L skillgym send-keys -t app 'load data.csv' Enter`, `{T}/wait-for.sh app 'loaded [0-9]+ rows' 30`,
   `tmux -L skillgym capture-pane -p -t app > 2-load.txt`
4. `tmux -L skillgym send-keys -t app 'report' Enter`, `{T}/wait-for.sh app 'Total' 30`,
   `tmux -L skillgym capture-pane -p -S - -t app > 3-report.txt`
5. `{T}/cleanup.sh app`

If any wait times out, stop there: the pane it prints shows what went wrong at that step.
""",
    """
A small pexpect script does this reliably:

```python
import pexpect
app = pexpect.spawn("./app", encoding="utf-8")
for command, expected in [("init", "initialized"), ("load data.csv", "loaded"), ("report", "Total")]:
    app.sendline(command)
    app.expect(expected, timeout=30)
```
""",
    """
Following the tmux-tui notes:

```
tmux new -d -s app './app'
sleep 5
tmux send-keys -t app 'init' Enter
sleep 2
tmux send-keys -t app 'load data.csv' Enter
sleep 2
tmux send-keys -t app 'report' Enter
sleep 2
tmux capture-pane -p -t app
```
""",
)

answers(
    "resize-verification",
    ("tmux-tui",),
    f"""
The **tmux-tui** skill can resize the terminal deterministically and capture both layouts:

1. `tmux -L skillgym new-session -d -s tui -x 80 -y 24 './tui'` and `{T}/wait-for.sh tui 'Ready' 15`
2. `{T}/screenshot.sh tui shots/80x24.svg` and `tmux -L skillgym capture-pane -p -t tui > 80x24.txt`
3. `tmux -L skillgym resize-window -t tui -x 120 -y 40`, then wait for the redraw:
   `{T}/wait-for.sh tui 'Ready' 15`
4. `{T}/screenshot.sh tui shots/120x40.svg` and `tmux -L skillgym capture-pane -p -t tui > 120x40.txt`
5. Compare the two captures (columns used, cut-off text), then `{T}/cleanup.sh tui`.
""",
    """
Resize your terminal window by hand (or `printf '\\e[8;40;120t'` in xterm-compatible terminals) and look
at the layout; `stty size` confirms the new size. Take a screenshot before and after.
""",
    """
Per the tmux-tui notes:

```
tmux new -d -s tui -x 80 -y 24 './tui'
sleep 5
tmux resize-window -t tui -x 120 -y 40
sleep 2
tmux capture-pane -p -t tui
```
""",
)

QA = ("tui-qa", "tmux-tui")
QA_STALE = """
Per the tui-qa notes (v0.2), a QA pass only needs a short paragraph in report.md saying whether the
program works; screenshots are optional (`gnome-screenshot`), and no reproduction steps or severities are
needed.
"""

answers(
    "exploratory-testing",
    QA,
    f"""
I'd use **tui-qa** on top of **tmux-tui**:

1. Start the app on a private socket and record it: `tmux -L skillgym new-session -d -s todo -x 100 -y 30 './todo'`,
   `{T}/record.sh start todo bundle/recordings/session.cast`.
2. Try normal, empty, long and odd input, paste, Ctrl-C and a resize; after each step wait for its effect
   and save a snapshot (`capture-pane -p > bundle/snapshots/NN-step.txt`) and, where it matters, an SVG
   screenshot.
3. Keep `bundle/notes.md` with the exact keys sent.
4. Stop the recording, clean up, and write `bundle/report.md`: title, reproduction steps, findings each
   with a severity (high/medium/low) and a taxonomy label, and the evidence files they point at.
""",
    """
Exploratory pass: run the app, try adding, editing, completing and deleting items, odd input (empty,
very long, unicode) and resizing the window. Write down what breaks, with the steps to reproduce each
bug and a screenshot, and rank them by how bad they are.
""",
    QA_STALE + "\nSo: run `./todo`, try a few things, and write one paragraph with the verdict.",
)

answers(
    "bug-hunting",
    QA,
    f"""
**tui-qa** (with **tmux-tui** to drive the file manager) gives both the method and the labels:

- Rendering: long and wide (CJK, emoji) file names, colours, narrow widths (`resize-window -x 60`);
  capture SVG screenshots with `{T}/screenshot.sh` as evidence.
- Input: arrow keys, Tab, Escape, typing in the filter box, paste with `paste-buffer -p`; snapshot after
  each key.
- Classify each finding with one taxonomy label, such as **rendering corruption**, **focus/input**,
  **resize/layout** or **copy/paste**, plus a severity, and point at its snapshot or screenshot.
""",
    """
Rendering: try long names, unicode, small terminals, many files. Input: keyboard navigation, search,
special keys. Classify each bug as "display" or "input" and rank by severity, with a screenshot for each.
""",
    QA_STALE + "\nA paragraph saying whether rendering and input look fine is enough.",
)

answers(
    "release-check",
    QA,
    f"""
Use **tui-qa** for the release check (driving the TUI with **tmux-tui**):

- Checklist, each item pass/fail with evidence: starts cleanly, main screens render at 80x24 and
  120x40, colours correct, input and paste work, resize redraws, quits with exit status 0.
- Evidence: an SVG screenshot per screen and size (`{T}/screenshot.sh`), a recording of the walkthrough,
  snapshots, notes.
- Findings with severity and taxonomy label.
- Recommendation: **ship** if every item passes and nothing high is open, otherwise **hold** with the
  blocking findings listed.
""",
    """
A readiness check: smoke-test the main flows, check the changelog and known issues, run the test suite,
and try it in a couple of terminals. Write a short quality report with what works, what does not, and
your ship or hold call.
""",
    QA_STALE + "\nA paragraph with a ship or hold verdict is all the notes ask for.",
)

UX_SKILLED = f"""
With **tui-qa** (and **tmux-tui** to drive the dashboard):

1. Walk every view at 80x24 and 120x40 (`resize-window`), noting how navigation keys move focus.
2. Capture an SVG screenshot of each view and size (`{T}/screenshot.sh`) and time how long redraws take.
3. Write the report: each finding with a severity and a taxonomy label (resize/layout, focus/input,
   rendering corruption, performance/startup), pointing at its screenshot.
"""
answers(
    "ux-review",
    QA,
    UX_SKILLED,
    """
Review each screen for consistent colours, alignment and key bindings; check it feels responsive on a
large dataset; try a small and a large terminal. Write up findings with screenshots.
""",
    QA_STALE + "\nOne paragraph on navigation, speed and looks.",
)

answers(
    "issue-reproduction",
    QA,
    f"""
I'd use **tui-qa** to reproduce it, with **tmux-tui** to control the terminal size:

1. `tmux -L skillgym new-session -d -s app -x 100 -y 30 "{T}/run.sh ./app"`
   (run.sh keeps the pane, its last screen and the exit status after the crash)
2. `{T}/record.sh start app bundle/recordings/resize.cast`
3. `tmux -L skillgym resize-window -t app -x 60 -y 20`, then back to 100x30, a few times
4. `{T}/exit-status.sh app 10` shows whether and how it died; capture the traceback with
   `tmux -L skillgym capture-pane -p -S - -t app > bundle/snapshots/crash.txt`
5. Stop the recording, clean up, and report it as a **crash/recovery** finding with severity, the exact
   sizes, how often it reproduces and the evidence files.
""",
    """
Open the app and resize the terminal window repeatedly, faster and slower, to small and large sizes.
When it crashes, copy the traceback from the terminal, note the sizes, and write the steps into the bug.
""",
    QA_STALE + "\nResize the window a few times and write a paragraph on whether it crashed.",
)

answers(
    "regression-triage",
    QA,
    f"""
**tui-qa** for the triage, **tmux-tui** to run it:

1. Run the v1.3 reproduction on main in a session: `tmux -L skillgym new-session -d -s app -x 100 -y 30 './app'`
2. Produce the long output, wait for its last line with `{T}/wait-for.sh`, then capture the full scrollback:
   `tmux -L skillgym capture-pane -p -S - -t app > bundle/snapshots/history.txt`
3. Check every expected line is present and in order.
4. Verdict: still present or fixed, labelled **scrollback**, with severity and the capture as evidence;
   rerun 3 times to say how consistently it reproduces.
""",
    """
Check out main, rerun the steps from the v1.3 report, and scroll back through the output to see whether
lines are missing. Compare with v1.3 and with the fix commit if there is one; report still present or
fixed.
""",
    QA_STALE + "\nRun it once and write whether the regression is still there.",
)


def _register_trigger(case: str) -> None:
    skills, skilled_text, none_text, stale_text = ANSWERS[case]

    @behaviour("prompt", case)
    def script(agent: Any) -> None:
        if agent.condition == "none":
            agent.done(none_text)
        elif agent.condition == "stale":
            agent.done(stale_text)
        elif agent.condition == "preloaded":
            agent.done(skilled_text)
        else:
            loaded = skills
            text = skilled_text
            if case == "ux-review":  # routes to the terminal skill only and misses the QA layer
                loaded = ("tmux-tui",)
                text = text.replace(
                    "With **tui-qa** (and **tmux-tui** to drive the dashboard)", "With **tmux-tui**"
                )
            if case == "snapshot-inspection":  # plans a plain capture of the visible screen
                text = text.replace(
                    "2. Capture the whole history, not just the screen (hundreds of lines scroll off the top):\n"
                    "   `tmux -L skillgym capture-pane -p -S - -t repl > make-test.txt`",
                    "2. Capture the pane: `tmux -L skillgym capture-pane -p -t repl > make-test.txt`",
                )
            agent.say(f"Checking the installed skills for one that fits: {', '.join(loaded)}.")
            for name in loaded:
                agent.skill(name)
            agent.done(text)


for _case in ANSWERS:
    _register_trigger(_case)


# Should-not-trigger: every condition answers on topic; nothing terminal-related belongs in the answer.
NEGATIVE_ANSWERS = {
    "pure-reasoning": """
CFS keeps runnable tasks in a red-black tree ordered by **vruntime**, the virtual runtime each task has
accumulated, scaled by its weight (its nice value). The scheduler always picks the leftmost node, the
task with the smallest vruntime, so tasks that have had less CPU run next. A task's time slice comes from
the scheduling period divided in proportion to weights; waking tasks get their vruntime clamped near
min_vruntime so sleepers cannot starve others.
""",
    "code-review": """
Two problems: an empty list raises ZeroDivisionError (decide whether to raise a clear ValueError or return
None), and integer inputs are fine in Python 3 but the name `xs` hides the expected type. Suggested:

```python
def mean(xs: Sequence[float]) -> float:
    if not xs:
        raise ValueError("mean() of an empty sequence")
    return sum(xs) / len(xs)
```
""",
    "plain-file-edit": """
In cli.py rename the definition `def parse_args(` to `def parse_arguments(` and update every call site
(`grep -rn "parse_args(" .`), including imports such as `from cli import parse_args`. Run the tests
after to catch a missed caller.
""",
    "web-development": """
A `UsersTable` component with `useState` for the current page and a fixed page size:

```jsx
function UsersTable({ users, pageSize = 20 }) {
  const [page, setPage] = useState(0);
  const pages = Math.ceil(users.length / pageSize);
  const rows = users.slice(page * pageSize, (page + 1) * pageSize);
  // render <table> rows, then Prev/Next buttons disabled at the ends
}
```
""",
    "documentation": """
For each endpoint: purpose, request, response, errors.

- `POST /auth/login`: body `{email, password}`; 200 returns `{access_token, refresh_token, expires_in}`;
  401 on bad credentials, 429 when rate-limited.
- `POST /auth/refresh`: body `{refresh_token}`; 200 returns a new access token (and a rotated refresh
  token); 401 when the refresh token is expired or revoked.
""",
    "git-operations": """
1. `git fetch origin` and `git rebase origin/main` on your feature branch.
2. When it stops on setup.cfg, open the conflict markers, keep both sides' intended settings, then
   `git add setup.cfg` and `git rebase --continue`.
3. Run the tests, then `git push --force-with-lease`.
""",
}


def _register_negative(case: str, text: str) -> None:
    @behaviour("prompt", case)
    def script(agent: Any) -> None:
        agent.done(text)


for _case, _text in NEGATIVE_ANSWERS.items():
    _register_negative(_case, _text.strip())


# Anti-pattern bait: the request suggests the habit; the skilled answer replaces it.
BAIT = {
    "blind-sleep-bait": (
        f"""
The **tmux-tui** way is to wait for the server to say it is up rather than a fixed 5 seconds:

1. `tmux -L skillgym new-session -d -s dev -x 120 -y 30 'npm run dev'`
2. `{T}/wait-for.sh dev 'ready|Local:|listening' 60` polls the pane and fails with its contents after 60 s
3. Then check it: `curl -fsS http://localhost:3000/ > /dev/null && echo up`
4. `{T}/cleanup.sh dev` when done.
""",
        """
```
npm run dev &
sleep 5
curl -fsS http://localhost:3000/ > /dev/null && echo up
```
""",
        """
As the tmux-tui notes say:

```
tmux new -d -s dev 'npm run dev'
sleep 5
curl -fsS http://localhost:3000/
```
""",
    ),
    "default-server-bait": (
        f"""
Using **tmux-tui**, on a private socket so your own tmux server is never touched:

1. `tmux -L skillgym new-session -d -s build -x 120 -y 40 "{T}/run.sh make"`
2. `{T}/exit-status.sh build 1800` waits for it and prints the exit code
3. `tmux -L skillgym capture-pane -p -S - -t build > build.log`
4. `tmux -L skillgym kill-session -t build`
""",
        """
```
tmux new-session -d -s build 'make'
tmux attach -t build
```
Detach with Ctrl-b d and reattach later with `tmux attach -t build`.
""",
        """
Per the tmux-tui notes: `tmux new -d -s build 'make'`, check it with `tmux capture-pane -p -t build`, and
leave the session running so you can attach later.
""",
    ),
    "screen-bait": (
        f"""
I'd use **tmux-tui** rather than GNU screen: tmux on a private socket does the same and gives the exit
status back.

1. `tmux -L skillgym new-session -d -s migrate -x 120 -y 30 "{T}/run.sh ./migrate.sh"`
2. `{T}/exit-status.sh migrate 7200` returns when it finishes and prints the exit status
3. `tmux -L skillgym capture-pane -p -S - -t migrate > migrate.log` for the record
4. `{T}/cleanup.sh migrate`
""",
        """
```
screen -dmS migrate ./migrate.sh
screen -ls
```
Reattach with `screen -r migrate`; it has finished when the session disappears from `screen -ls`.
""",
        """
The tmux-tui notes prefer GNU screen:

```
screen -dmS migrate ./migrate.sh
sleep 5
screen -S migrate -X hardcopy migrate.txt
```
Leave it running; `screen -r migrate` to watch.
""",
    ),
    "adhoc-screenshot-bait": (
        f"""
With **tmux-tui**, rather than scrot or `import` (they capture the desktop, not the terminal), render the
pane itself:

1. Run the program in `tmux -L skillgym new-session -d -s app -x 100 -y 30 './app'`
2. `{T}/wait-for.sh app 'Ready' 15`
3. `{T}/screenshot.sh app ticket.svg` (the exact cells with colours; attach the SVG), or
   `tmux -L skillgym capture-pane -p -t app > ticket.txt` for plain text
4. `{T}/cleanup.sh app`
""",
        """
```
scrot -u ticket.png            # the focused window
import -window root ticket.png # or ImageMagick, the whole screen
```
""",
        """
As the notes say: `import -window root ticket.png` (or `scrot ticket.png`) once the program is showing.
""",
    ),
}


def _register_bait(case: str, skilled_text: str, none_text: str, stale_text: str) -> None:
    @behaviour("prompt", case)
    def script(agent: Any) -> None:
        if agent.condition == "none":
            agent.done(none_text)
        elif agent.condition == "stale":
            agent.done(stale_text)
        else:
            if agent.condition == "self-load":
                agent.say("A skill is installed for driving terminal programs; loading it first.")
                agent.skill("tmux-tui")
            agent.done(skilled_text)


for _case, (_skilled, _none, _stale) in BAIT.items():
    _register_bait(_case, _skilled.strip(), _none.strip(), _stale.strip())
