"""Acceptance: `skillgym init` on a skill folder, then `list`, a stub run and a real scripted agent's run."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

from tests.conftest import run_agent, run_cli, run_dirs

SKILL_MD = """\
---
name: csv-summary
description: >
  Summarize a CSV file: row count, column names and basic statistics, using scripts/summarize.py.
  Use when the user asks to summarise or profile CSV data.
---

# CSV summary

Run `python3 scripts/summarize.py FILE` from this skill's folder and save what it prints.
"""

# The skill's own script: what the oracle condition must find installed.
SUMMARIZE = "import sys\nprint('summary of', sys.argv[1])\n"

# A scripted agent: in the execution lane it follows the SKILL.md installed in its workspace, running the
# skill's script unless that text is the drafted stale one (which says there are no helper scripts); with
# nothing installed it does nothing. In the prompt lane it routes to the skill only for the CSV request.
AGENT = """\
#!/bin/sh
prompt=$(cat)
script=.claude/skills/csv-summary/scripts/summarize.py
if [ "$SKILLGYM_LANE" = execution ]; then
  if [ -f "$script" ] && ! grep -q "no helper scripts" .claude/skills/csv-summary/SKILL.md; then
    python3 "$script" REQUEST.md > result.md
    run="python3 $script REQUEST.md > result.md"
    echo '{"type": "tool_call", "name": "Bash", "command": "'"$run"'", "exit_code": 0}'
  fi
  echo '{"type": "result", "text": "finished"}'
  exit 0
fi
case "$prompt" in
  *utils.py*) echo '{"type": "result", "text": "Rename count to total and fix the typo."}' ;;
  *) echo '{"type": "result", "text": "I would use the csv-summary skill to summarize the row count."}' ;;
esac
"""


def _skill(tmp_path: Path) -> Path:
    folder = tmp_path / "csv-summary"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (folder / "scripts/summarize.py").write_text(SUMMARIZE, encoding="utf-8")
    (folder / "evals").mkdir()
    (folder / "evals/evals.json").write_text('{"skill_name": "csv-summary", "evals": []}\n', encoding="utf-8")
    return folder


def _results(root: Path) -> dict[str, str]:
    (run_dir,) = run_dirs(root.parent / "runs")
    return {
        p.parent.relative_to(run_dir / "trials").as_posix(): json.loads(p.read_text())["status"]
        for p in (run_dir / "trials").rglob("result.json")
    }


def test_init_then_list_stub_run_and_a_scripted_agent(tmp_path: Path) -> None:
    _skill(tmp_path)
    made = run_cli("init", "csv-summary", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    root = tmp_path / "evals"
    assert "drafted a suite for the skill 'csv-summary' in evals/" in made.stdout
    assert "copied the skill from csv-summary to evals/skills/csv-summary/" in made.stdout
    assert "csv-summary/evals/evals.json holds evals in the Agent Skills format" in made.stdout
    assert (root / "skills/csv-summary/scripts/summarize.py").read_text() == SUMMARIZE
    readme = (root / "README.md").read_text()
    assert "--provider claude" in readme and "--provider codex" in readme

    listed = run_cli("list", "--suite", "evals", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "3 case(s)" in listed.stdout
    for case in ("csv-summary-trigger", "csv-summary-unrelated", "csv-summary-task"):
        assert case in listed.stdout
    assert "none,self-load,preloaded,stale" in listed.stdout

    stub = run_cli("run", "--suite", "evals", "--provider", "stub", cwd=tmp_path)
    assert stub.returncode == 0, stub.stdout + stub.stderr
    assert "12 trials: 12 passed, 0 failed, 0 errored" in stub.stdout

    shutil.rmtree(tmp_path / "runs")
    agent = tmp_path / "agent.sh"
    agent.write_text(AGENT, encoding="utf-8")
    agent.chmod(0o755)
    ran = run_agent(root, str(agent))
    assert ran.returncode == 1, ran.stdout + ran.stderr  # the baselines fail the execution case
    results = _results(root)
    assert len(results) == 12
    prompt = {k: v for k, v in results.items() if k.startswith("prompt/")}
    assert set(prompt.values()) == {"passed"}, prompt
    execution = {k.split("/")[2]: v for k, v in results.items() if k.startswith("execution/")}
    assert execution == {"none": "failed", "self-load": "passed", "preloaded": "passed", "stale": "failed"}
    (run_dir,) = run_dirs(tmp_path / "runs")
    transcript = (
        run_dir / "trials/execution/csv-summary-task/preloaded/command/trial-1/transcript.md"
    ).read_text()
    assert "Do what REQUEST.md asks and save the result in result.md" in transcript
    assert "**tool call 1: Bash**, exit 0" in transcript
    assert "$ python3 .claude/skills/csv-summary/scripts/summarize.py REQUEST.md > result.md" in transcript


def test_init_never_overwrites_unless_forced(tmp_path: Path) -> None:
    _skill(tmp_path)
    assert run_cli("init", "csv-summary", "--suite", "out", cwd=tmp_path).returncode == 0
    suite_py = tmp_path / "out/suite.py"
    suite_py.write_text("# my own edits\n", encoding="utf-8")
    again = run_cli("init", "csv-summary", "--suite", "out", cwd=tmp_path)
    assert again.returncode == 2
    assert "not overwriting out/suite.py, out/prompt/trigger.py" in again.stderr
    assert "--force" in again.stderr
    assert suite_py.read_text() == "# my own edits\n"
    forced = run_cli("init", "csv-summary", "--suite", "out", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "from skillgym import condition, skill, workspace_preset" in suite_py.read_text()


def test_a_skill_already_in_the_suite_is_used_in_place(tmp_path: Path) -> None:
    skill = _skill(tmp_path)
    os.makedirs(tmp_path / "evals/skills")
    skill.rename(tmp_path / "evals/skills/csv-summary")
    made = run_cli("init", "evals/skills/csv-summary", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "copied" not in made.stdout
    assert (
        'skill(\n    "csv-summary",\n    "skills/csv-summary",' in (tmp_path / "evals/suite.py").read_text()
    )
    assert run_cli("run", "--suite", "evals", "--provider", "stub", cwd=tmp_path).returncode == 0


def test_malformed_frontmatter_exits_2_naming_file_and_field_and_writes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "SKILL.md").write_text(textwrap.dedent("---\nname: broken\n---\n# Broken\n"), encoding="utf-8")
    made = run_cli("init", "broken", cwd=tmp_path)
    assert made.returncode == 2
    assert made.stderr.strip() == (
        "skillgym: error: broken/SKILL.md: the frontmatter has no field 'description'; "
        "add a line 'description: ...'"
    )
    assert not (tmp_path / "evals").exists()
