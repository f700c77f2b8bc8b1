"""Acceptance: a real agent process that loads the skill for some cases; the report says fired vs helped."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import run_agent, run_dirs

SUITE = {
    "suite.py": """
        from skillgym import skill

        skill("greet", "skills/greet")
    """,
    "skills/greet/SKILL.md": "---\nname: greet\ndescription: greet\n---\nRun scripts/greet.py.\n",
    "skills/greet/scripts/greet.py": "print('hello from the skill')\n",
    "cases.py": """
        from skillgym import execution_case

        for name in ("eager-1", "eager-2", "shy-1", "shy-2"):
            with execution_case(name) as c:
                c.category("task")
                c.expect_skill("greet")
                mood = "eagerly" if name.startswith("eager") else "quietly"
                c.task(f"Greet {mood} into greeting.txt")
                with c.assertions() as a:
                    a.file_contains("greeting.txt", "hello from the skill")
    """,
}

# Given the skill's text (preloaded), it follows it. Under self-load it reads the installed SKILL.md (and
# says so in its trace) only when asked eagerly; a quiet task never loads it, and fails.
AGENT = """\
#!/bin/sh
prompt=$(cat)
skill=.claude/skills/greet
case "$prompt" in
  *scripts/greet.py*) python3 "$skill/scripts/greet.py" > greeting.txt ;;
  *eagerly*)
    if [ -f "$skill/SKILL.md" ]; then
      cat "$skill/SKILL.md" > /dev/null
      echo '{"type": "skill", "skill": "greet", "source": "read-skill-md", "confidence": "high"}'
      python3 "$skill/scripts/greet.py" > greeting.txt
    fi ;;
esac
echo '{"type": "result", "text": "done"}'
"""


def test_the_report_splits_realized_lift_into_activation_gap_and_help_when_loaded(
    suite_dir: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    root = suite_dir(SUITE)
    agent = tmp_path / "agent.sh"
    agent.write_text(AGENT, encoding="utf-8")
    agent.chmod(0o755)
    conditions = ("--condition", "none", "--condition", "self-load", "--condition", "preloaded")
    proc = run_agent(root, str(agent), *conditions, "--trials", "2")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # none and the quiet self-load trials fail
    (run_dir,) = run_dirs(tmp_path / "runs")
    result = json.loads(
        (run_dir / "trials/execution/eager-1/self-load/command/trial-1/result.json").read_text()
    )
    assert result["grade"]["skill_loaded"] is True
    report = json.loads((run_dir / "report.json").read_text())
    (a,) = report["activation"]
    assert (a["lane"], a["provider"], a["condition"]) == ("execution", "command", "self-load")
    assert (a["cases"], a["trials"], a["activated"], a["cases_never_activated"]) == (4, 8, 4, 2)
    assert (a["passed_when_activated"], a["passed_when_not_activated"]) == (4, 0)
    assert a["activation_gap"]["mean_diff"] == 0.5  # preloaded passes all four; self-load the eager two
    assert a["help_when_loaded"]["n_pairs"] == 2 and a["help_when_loaded"]["mean_diff"] == 1.0
    assert (a["split_cases"], a["realized_lift"], a["oracle_lift"], a["gap"]) == (4, 0.5, 1.0, 0.5)
    md = (run_dir / "report.md").read_text()
    assert "| execution | command | 4/8 = 50% (4 case(s), 2 never) |" in md
    assert "realized lift +50 pts = oracle lift +100 pts minus activation gap +50 pts." in md
