"""Acceptance: under --sandbox none, agents and everything in their process groups die with skillgym."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from tests.conftest import running_cli, wait_for, write_suite

SUITE = {
    "cases.py": """
        from skillgym import prompt_case

        with prompt_case("hangs") as c:
            c.category("trigger")
            c.prompt("wait")
            c.expect_skill(None)
    """,
}
# The agent starts a child, which starts a grandchild, all in the agent's process group; each carries
# the test's marker in its command line, and the grandchild says when all three are up.
AGENT = """
import subprocess, sys, time
marker, ready = sys.argv[1], sys.argv[2]
CHILD = '''
import subprocess, sys, time
marker, ready = sys.argv[1], sys.argv[2]
GRANDCHILD = "import sys, time; open(sys.argv[2], 'a').write('up '); time.sleep(600)"
subprocess.Popen([sys.executable, "-c", GRANDCHILD, marker + "-grandchild", ready])
time.sleep(600)
'''
subprocess.Popen([sys.executable, "-c", CHILD, marker + "-child", ready])
time.sleep(600)
"""


def _marked(marker: str, but: int | None = None) -> list[int]:
    """The processes whose command line holds ``marker``, skillgym's own (``but``) left out."""
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True, check=False)
    return [int(pid) for pid in found.stdout.split() if int(pid) != but]


def test_a_sigkilled_skillgym_takes_its_unsandboxed_agents_and_their_children_with_it(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", SUITE)
    marker = f"lifeline-{uuid.uuid4().hex}"
    ready = tmp_path / "ready"
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    args = (
        "run",
        "--suite",
        str(root),
        "--provider",
        "command",
        "--sandbox",
        "none",
        "--condition",
        "none",
        "--trials",
        "2",
        "--concurrency",
        "2",
        "--agent-command",
        f"{sys.executable} {agent} {marker} {ready}",
    )
    try:
        with running_cli(*args, cwd=tmp_path) as child:
            wait_for(
                lambda: ready.exists() and len(ready.read_text().split()) == 2,
                timeout=60,
                what="both agents, their children and grandchildren to start",
            )
            assert len(_marked(marker, but=child.pid)) == 6  # two agents, two children, two grandchildren
            child.send_signal(signal.SIGKILL)
            child.communicate(timeout=30)
        wait_for(lambda: not _marked(marker), timeout=5, what="every agent process to die with skillgym")
    finally:
        for pid in _marked(marker):  # only when the test failed: what it started itself, by marker
            os.kill(pid, signal.SIGKILL)
