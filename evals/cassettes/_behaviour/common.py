"""Shared pieces of the behaviour scripts: the registry, paths and the command idioms agents use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

BEHAVIOURS: dict[tuple[str, str, str], Callable[[Any], None]] = {}  # (lane, case, condition) -> script
CONDITIONS = ("none", "self-load", "preloaded", "stale")

# Where the installed skill's scripts are, seen from the workspace (Claude Code's project skills folder).
T = ".claude/skills/tmux-tui/scripts"
SOCKET = "-L skillgym"


Script = Callable[[Any], None]


def behaviour(lane: str, case: str, *conditions: str) -> Callable[[Script], Script]:
    """Register the decorated script for ``lane/case`` under each of ``conditions`` (default: all four)."""

    def register(script: Script) -> Script:
        for condition in conditions or CONDITIONS:
            key = (lane, case, condition)
            if key in BEHAVIOURS:
                raise ValueError(f"two behaviours for {'/'.join(key)}")
            BEHAVIOURS[key] = script
        return script

    return register


def fixture(name: str) -> str:
    """The command that starts a fixture app, as the agent types it inside a tmux command."""
    return f"python3 $SKILLGYM_FIXTURES/{name}.py"


def skilled(agent: Any, *skills: str, why: str = "") -> None:
    """Under self-load the agent routes itself: it loads the skills it judged relevant first."""
    if agent.condition != "self-load":
        return
    names = " and ".join(f"`{s}`" for s in skills)
    plural = "s" if len(skills) > 1 else ""
    agent.say(why or f"This needs a real terminal; the {names} skill{plural} fit. Loading.")
    for name in skills:
        agent.skill(name)
