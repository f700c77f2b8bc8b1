"""Acceptance: --concurrency bounds the agents running at once, and the next trials are set up meanwhile."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.conftest import run_agent, run_dirs, write_suite

SUITE = {
    "suite.py": """
        from skillgym import condition, prompt_case

        condition("none")
        for i in range(6):
            with prompt_case(f"case-{i}") as c:
                c.category("trigger")
                c.prompt(f"question {i}")
                c.expect_skill(None)
                # Each trial fits its limit only if waiting for a free slot does not count against it.
                c.budget(timeout_s=60, max_wall_clock_s=2.5)
                with c.step("waits") as s:
                    s.must_mention("wait")
    """,
}

# Marks itself running, counts who else is, and logs when it started and ended (monotonic, one clock for all).
AGENT = """
import json, os, sys, time, uuid
sys.stdin.read()
log, running = sys.argv[1], sys.argv[2]
mine = os.path.join(running, uuid.uuid4().hex)  # not its PID: each sandbox numbers its own from 1
open(mine, "w").close()
started = time.monotonic()
together = len(os.listdir(running))
time.sleep(0.4)
os.unlink(mine)
with open(log, "a") as f:
    f.write(json.dumps({"start": started, "end": time.monotonic(), "together": together}) + "\\n")
print(json.dumps({"type": "result", "text": "I would wait"}))
"""


def _events(root: Path) -> list[dict[str, object]]:
    (run_dir,) = run_dirs(root.parent / "runs")
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


def test_concurrency_bounds_the_agents_and_the_next_trials_are_set_up_while_they_run(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", SUITE)
    state = tmp_path / "state"  # what the agents share, the one folder their sandboxes let them write
    script, log, running = tmp_path / "agent.py", state / "agents.jsonl", state / "running"
    script.write_text(AGENT)
    running.mkdir(parents=True)
    proc = run_agent(root, f"{sys.executable} {script} {log} {running}", "--concurrency", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr

    agents = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(agents) == 6
    assert max(a["together"] for a in agents) <= 2, agents
    # Two at a time, never more: at any agent's start at most one other was running.
    for a in agents:
        overlapping = [b for b in agents if b is not a and b["start"] <= a["start"] < b["end"]]
        assert len(overlapping) <= 1, agents
    assert max(a["together"] for a in agents) == 2, "agents never overlapped: concurrency was not exercised"

    # A third trial began (its trial.start, made its workspace) before either of the first two finished:
    # set-up overlaps the running agents instead of waiting for a free slot.
    kinds = [e["type"] for e in _events(root)]
    starts = [i for i, kind in enumerate(kinds) if kind == "trial.start"]
    finishes = [i for i, kind in enumerate(kinds) if kind == "trial.finish"]
    assert starts[2] < finishes[0], kinds
    # And no trial ran past its wall-clock limit while it waited for a slot.
    results = [e["result"] for e in _events(root) if e["type"] == "trial.finish"]
    assert all(isinstance(r, dict) and r["status"] == "passed" for r in results), results


def test_concurrency_1_runs_trials_strictly_one_after_another(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", SUITE)
    state = tmp_path / "state"  # what the agents share, the one folder their sandboxes let them write
    script, log, running = tmp_path / "agent.py", state / "agents.jsonl", state / "running"
    script.write_text(AGENT.replace("time.sleep(0.4)", "time.sleep(0.05)"))
    running.mkdir(parents=True)
    proc = run_agent(root, f"{sys.executable} {script} {log} {running}", "--concurrency", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kinds = [e["type"] for e in _events(root) if e["type"] in ("trial.start", "trial.finish")]
    # No trial is even set up before the one before it has finished and been cleaned up.
    assert kinds == ["trial.start", "trial.finish"] * 6, kinds
