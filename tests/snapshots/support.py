"""A suite, an agent whose token usage the test sets exactly, and the CLI as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from tests.conftest import run_cli, run_dirs, write_suite

# The agent finds its case in the prompt (CASE=<id>) and reports the total tokens the plan file gives for
# it: a number every time, a list consumed one value per call, or null for "no usage reported".
AGENT = """
import fcntl, json, re, sys
prompt = sys.stdin.read()
case = re.search(r"CASE=([\\w-]+)", prompt).group(1)
with open({plan!r}, "r+") as handle:
    fcntl.flock(handle, fcntl.LOCK_EX)
    plan = json.load(handle)
    value = plan.get(case)
    if isinstance(value, list):
        value, plan[case] = value[0], value[1:]
        handle.seek(0)
        handle.truncate()
        json.dump(plan, handle)
if value is not None:
    print(json.dumps({{"type": "usage", "input": value - 10, "output": 10}}))
print(json.dumps({{"type": "result", "text": "I would wait for it"}}))
"""


def case_source(case_id: str, *, budget: float | None = None, variant: str = "") -> str:
    lines = [
        f'with prompt_case("{case_id}") as c:',
        '    c.category("trigger")',
        f'    c.prompt("CASE={case_id} wait for the server{variant}")',
        "    c.expect_skill(None)",
        '    with c.step("waits") as s:',
        '        s.must_mention("wait")',
    ]
    if budget is not None:
        lines.insert(2, f"    c.token_budget(max_regression_percent={budget})")
    return "\n".join(lines) + "\n"


class Project:
    """A folder holding ``evals/``, ``runs/`` and ``snapshots/``, where the CLI runs as a user would."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # The one folder outside their trials that the sandboxed agents may write.
        self.state = root / "state"
        self.state.mkdir(parents=True, exist_ok=True)
        self.plan = self.state / "tokens.json"
        self.agent = root / "agent.py"
        self.agent.write_text(textwrap.dedent(AGENT.format(plan=str(self.plan))))
        self.tokens()

    def cases(self, *sources: str) -> None:
        body = "from skillgym import prompt_case\n\n" + "\n".join(sources)
        write_suite(self.root / "evals", {"cases.py": body})

    def tokens(self, **totals: int | list[int] | None) -> None:
        self.plan.write_text(json.dumps(totals))

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, cwd=self.root)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        agent = f"{sys.executable} {self.agent}"
        return self.cli(
            "run",
            "--provider",
            "command",
            "--agent-command",
            agent,
            "--sandbox-writable",
            str(self.state),
            *args,
        )

    def runs(self, output: str = "runs") -> list[Path]:
        folder = self.root / output
        return run_dirs(folder) if folder.is_dir() else []

    def latest(self) -> Path:
        # Two runs can start in the same second; their ids then differ only by a random suffix.
        return max(self.runs(), key=lambda d: (d / "run.json").stat().st_mtime_ns)

    @property
    def snapshot(self) -> Path:
        return self.root / "snapshots/command/default.toml"

    def finish(self, run_dir: Path | None = None) -> dict[str, Any]:
        lines = ((run_dir or self.latest()) / "events.jsonl").read_text().splitlines()
        event: dict[str, Any] = json.loads(lines[-1])
        assert event["type"] == "run.finish"
        return event
