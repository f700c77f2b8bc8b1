"""The example suite's skills under test and shared workspace presets."""

from skillgym import skill, workspace_preset

skill(
    "tmux-tui",
    "skills/tmux-tui",
    stub="conditions/tmux-tui.stub.md",
    stale="conditions/tmux-tui.stale.md",
)
skill("tui-qa", "skills/tui-qa", stub="conditions/tui-qa.stub.md", stale="conditions/tui-qa.stale.md")

workspace_preset(
    "tui-smoke",
    description="an empty workspace with a private tmux socket dir and a notes file",
    template="templates/tui",
    env={"TERM": "xterm-256color", "LANG": "C.UTF-8"},
)
