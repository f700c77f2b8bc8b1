"""The example suite: the skills under test, how each condition delivers them, and shared workspaces.

Two skills: ``tmux-tui`` (drive terminal programs with tmux) and ``tui-qa`` (QA with evidence on top).
The four conditions are spelled out rather than left to the defaults, because the preloaded text names
helper scripts: the oracle gets the folders installed as well, so the commands it is taught exist.
"""

from skillgym import anti_pattern, condition, judged_by, skill, workspace_preset

STUB = "conditions/self-load.stub.md"
TMUX_TUI = skill("tmux-tui", "skills/tmux-tui", stub=STUB, stale="conditions/tmux-tui.stale.md")
TUI_QA = skill("tui-qa", "skills/tui-qa", stub=STUB, stale="conditions/tui-qa.stale.md")
INSTALL = [(s.name, s.path) for s in (TMUX_TUI, TUI_QA)]

# The judge of the judged checks (s.judge, c.rubric). Its verdicts are recorded in judge/verdicts/ so a run
# grades them offline. "claude:scripted" is synthetic, like the agent cassettes: judge/README.md says
# how to record a real judge's verdicts and measure its agreement with judge/labelled.jsonl.
judged_by("claude:scripted", min_kappa=0.6)

condition("none", description="baseline: no skill installed or injected")
condition(
    "self-load",
    description="skills installed where the agent finds them, plus a bootstrap stub: it must route itself",
    inject=[STUB],
    install=INSTALL,
)
condition(
    "preloaded",
    description="both SKILL.md texts injected (the oracle); folders installed so the scripts they name exist",
    inject=[f"{s.path}/SKILL.md" for s in (TMUX_TUI, TUI_QA)],
    install=INSTALL,
)
condition(
    "stale",
    description="outdated guidance (GNU screen, fixed sleeps, OS screenshots, sessions left running)",
    inject=[s.stale for s in (TMUX_TUI, TUI_QA) if s.stale],
)

# tmux-tui ends sessions with its cleanup script: `scripts/cleanup.sh NAME` kills session NAME, a bare
# `scripts/cleanup.sh` the whole private server. Declared as a session-ending command, the orphaned-session
# rule counts it as it counts `tmux kill-session` (tmux's own commands still count).
anti_pattern(
    "orphaned-session",
    # At the start of a command, any directory before it; the session is its first argument, if any.
    r"(?:^\s*|[;&|(`]\s*)(?:[\w.~$/-]*/)?(?P<end>cleanup\.sh)"
    r"(?:[ \t]+(?P<session>[\w.-]+)(?:[^\w.>-]|$)|[^\w.-]|$)",
    description="creates a tmux session that is never ended",
    suggested_fix="end every session you start: scripts/cleanup.sh SESSION "
    "(or tmux -L NAME kill-session -t SESSION)",
)

# tmux renders wide characters only in a UTF-8 locale, and the colour cases want a 256-colour TERM.
TERMINAL_ENV = {"TERM": "xterm-256color", "LANG": "C.UTF-8", "COLORTERM": "truecolor"}

workspace_preset(
    "tui-smoke",
    description="a fresh workspace with a notes file, for driving one program and saving text captures",
    template="templates/tui",
    env=TERMINAL_ENV,
)
workspace_preset(
    "tui-artifacts",
    description="an artifacts/ folder for screenshots and recordings; fails early when tmux is missing",
    template="templates/artifacts",
    bootstrap=[["tmux", "-V"]],
    env=TERMINAL_ENV,
)
workspace_preset(
    "qa-lab",
    description="a QA brief and room for a proof bundle; fails early when tmux is missing",
    template="templates/qa",
    bootstrap=[["tmux", "-V"]],
    env=TERMINAL_ENV,
)
