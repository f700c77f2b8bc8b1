"""Acceptance: the default conditions install the skill folder wherever they teach the skill."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import run_agent, run_dirs

SUITE = {
    "suite.py": """
        from skillgym import condition, skill

        skill("greet", "skills/greet", stale="greet.stale.md")
        condition("hinted", inject_text="A greeting skill may help.")  # added to the four defaults
    """,
    "skills/greet/SKILL.md": "---\nname: greet\ndescription: greet\n---\nRun scripts/greet.py.\n",
    "skills/greet/scripts/greet.py": "print('hello from the skill')\n",
    "greet.stale.md": "Greet by hand; there is no script.\n",
    "cases.py": """
        from skillgym import execution_case

        with execution_case("greet") as c:
            c.category("task")
            c.task("Greet into greeting.txt")
            with c.assertions() as a:
                a.file_contains("greeting.txt", "hello from the skill")
    """,
}

# Follows the installed SKILL.md: runs the script it names, when both are there.
AGENT = """\
#!/bin/sh
cat > /dev/null
skill=.claude/skills/greet
if grep -q "scripts/greet.py" "$skill/SKILL.md" 2>/dev/null; then
  python3 "$skill/scripts/greet.py" > greeting.txt
fi
[ -d "$skill/scripts" ] && echo "scripts installed" > scripts.txt
echo '{"type": "result", "text": "done"}'
"""


def test_preloaded_and_stale_install_the_folder_and_declared_conditions_add(
    suite_dir: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    root = suite_dir(SUITE)
    agent = tmp_path / "agent.sh"
    agent.write_text(AGENT, encoding="utf-8")
    agent.chmod(0o755)
    proc = run_agent(root, str(agent), "--keep-workspaces")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (run_dir,) = run_dirs(tmp_path / "runs")
    trials = run_dir / "trials/execution/greet"
    status = {
        p.parent.parent.parent.name: json.loads(p.read_text())["status"] for p in trials.rglob("result.json")
    }
    assert status == {
        "none": "failed",
        "self-load": "passed",
        "preloaded": "passed",  # the oracle's SKILL.md names a script, and the script is there
        "stale": "failed",
        "hinted": "failed",
    }
    stale = trials / "stale/command/trial-1/workspace/.claude/skills/greet"
    assert (stale / "SKILL.md").read_text() == "Greet by hand; there is no script.\n"
    assert (stale.parents[2] / "scripts.txt").exists()  # the folder is installed under the stale text
