"""`run --executor ray` on a real two-node Ray cluster started on this machine (see cluster.py).

One cluster serves every test here: the example suite run through it equals a local run; a node killed
mid-run loses nothing finished and its trial runs again on the other node; a trial whose worker dies on
every attempt is an environment-error; a driver killed mid-run resumes; a node without the agent CLI's
credentials stops the run before any trial, naming the node.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.acceptance.test_shards import VOLATILE, events, junit, only_run
from tests.acceptance.test_shards import normalized as shard_normalized
from tests.conftest import REPO, run_cli, write_suite
from tests.executors.cluster import launch

pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(
        importlib.util.find_spec("ray") is None,
        reason="Ray is not installed: pip install 'skillgym[ray]' (CI installs it)",
    ),
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None,
        reason="the test cluster runs in a loopback-only network namespace: needs root, unshare and ip",
    ),
]

# The example suite's execution lane, as the shard test runs it: the none and stale conditions' recorded
# agents sleep instead of waiting, so whether their program was ready in time differs between any runs.
EXAMPLE = ["--suite", str(REPO / "evals"), "--lane", "execution", "--condition", "preloaded"]
EXAMPLE += ["--condition", "self-load", "--reporter", "junit"]

# Prompt cases answered by an agent that says where it runs (the node's name, from the environment of its
# Ray worker, which `--sandbox none` lets it read) and takes a second; the doomed case's agent kills its
# worker instead, every time.
SUITE = {
    "suite.py": """
        from skillgym import prompt_case

        for name in ["alpha", "beta", "gamma", "delta", "doomed"]:
            with prompt_case(name) as c:
                c.category("trigger")
                c.prompt(f"case {name}: should we wait?")
                c.expect_skill(None)
                c.budget(timeout_s=60)
                with c.step("waits") as s:
                    s.must_mention("wait")
    """,
}
AGENT = """\
import json, os, signal, sys, time
prompt = sys.stdin.read()
case = prompt.split("case ", 1)[1].split(":", 1)[0]
pid, node, worker = os.getpid(), "?", None
while pid > 1 and worker is None:
    env = open(f"/proc/{pid}/environ", "rb").read().split(b"\\0")
    for entry in env:
        if entry.startswith(b"SKILLGYM_TEST_NODE="):
            node, worker = entry.split(b"=", 1)[1].decode(), pid
    pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
stamp = f"{time.time():.6f}-{os.getpid()}"
open(os.path.join(STATE, f"{node}-start-{case}-{stamp}"), "w").close()
if case == "doomed":
    os.kill(worker, signal.SIGKILL)
    time.sleep(30)
time.sleep(1.5)
print(json.dumps({"type": "usage", "input": 40, "output": 4}))
print(json.dumps({"type": "result", "text": "I would wait"}))
"""
CLAUDE = "#!/bin/sh\necho '2.0.0 (Claude Code)'\n"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every step run once on one cluster: node A (the head, with the credentials) and node B (without)."""
    tmp = tmp_path_factory.mktemp("ray")
    root = write_suite(tmp / "suite", SUITE)
    state = tmp / "state"
    state.mkdir()
    agent = tmp / "agent.py"
    agent.write_text(f"STATE = {str(state)!r}\n" + AGENT)
    fake = tmp / "bin"
    fake.mkdir()
    (fake / "claude").write_text(CLAUDE)
    (fake / "claude").chmod(0o755)
    out = tmp / "out"
    command = ["--suite", str(root), "--provider", "command", "--agent-command", f"{sys.executable} {agent}"]
    command += ["--sandbox", "none", "--sandbox-writable", str(state), "--executor", "ray"]
    driver, pre = ("--output", f"{out}/driver"), ("--output", f"{out}/pre")
    path = f"{fake}{os.pathsep}{os.environ.get('PATH', '')}"
    spec = {
        "temp": str(tmp / "raytmp"),
        "cwd": str(REPO),
        "env": {"PYTHONPATH": str(REPO), "PATH": path, "ANTHROPIC_API_KEY": "sk-test-driver-0123456789"},
        "nodes": {
            "A": {"cpus": 2, "env": {"PATH": path, "ANTHROPIC_API_KEY": "sk-test-node-a-0123456789"}},
            "B": {"cpus": 2, "env": {"PATH": path}, "drop_env": ["ANTHROPIC_API_KEY"]},
        },
        "steps": [
            # 0: the claude CLI is on both nodes, its credentials on node A only.
            {
                "args": ["run", "--suite", str(root), *("--provider", "claude", "--executor", "ray"), *pre],
            },
            # 1: the example suite, every trial's folder sent back from its node.
            {
                "args": [
                    "run",
                    *EXAMPLE,
                    "--executor",
                    "ray",
                    "--trial-files",
                    "copy",
                    "--output",
                    f"{out}/copy",
                ]
            },
            # 2 and 3: the driver SIGKILLed after three trials finished, then resumed.
            {
                "args": ["run", *command, *("--case", "alpha", "--case", "beta", "--trials", "3"), *driver],
                "when": {
                    "root": f"{out}/driver",
                    "glob": "*/trials/**/result.json",
                    "count": 3,
                    "kill": "driver",
                },
            },
            {"args": ["run", "--resume", f"@run:{out}/driver"]},
            # 4 (last: node B stays dead): node B is killed once it has finished a trial and started
            # another (a trial takes a node's both CPUs, so one runs there at a time).
            {
                "args": ["run", *command, "--trials", "2", "--trial-cpus", "2", "--output", f"{out}/kill"],
                "when": {"root": str(state), "glob": "B-start-*", "count": 2, "kill": "B"},
                "clear": str(state),
            },
            # 5: more CPUs a trial than any node has (node A is left, with 2).
            {"args": ["run", *command, "--trial-cpus", "3", "--output", f"{out}/big"]},
        ],
    }
    # The local run the cluster's must equal, on this machine's own network.
    local = run_cli("run", *EXAMPLE, "--output", str(out / "local"), cwd=REPO, timeout=300)
    assert local.returncode in (0, 1), local.stderr
    report = launch(spec, tmp)
    return {**report, "out": out, "state": state}


def normalized(value: Any, run_dir: Path) -> Any:
    """As the shard test normalizes, and without where each trial ran and how the run was spread."""
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k not in {"node", "executor"}}
    if isinstance(value, list | dict):
        return shard_normalized(
            {k: normalized(v, run_dir) for k, v in value.items()}
            if isinstance(value, dict)
            else [normalized(v, run_dir) for v in value],
            run_dir,
        )
    return shard_normalized(value, run_dir)


def results(run_dir: Path) -> list[dict[str, Any]]:
    """Each trial's last result in the log (a resumed run posts the kept ones again)."""
    found = {e["result"]["id"]["key"]: e["result"] for e in events(run_dir) if e["type"] == "trial.finish"}
    return list(found.values())


def junit_suites(run_dir: Path) -> list[list[Any]]:
    """junit.xml's testsuites, each with its testcases, in a fixed order: trials finish in another order
    on two nodes than on one."""
    suites: list[list[Any]] = []
    for element in junit(run_dir):
        if element[0] == "testsuite":
            suites.append([element])
        elif element[0] == "testcase":
            suites[-1].append([element])
        else:
            suites[-1][-1].append(element)
    return sorted(([suite[0], *sorted(suite[1:], key=str)] for suite in suites), key=str)


def report_md(run_dir: Path) -> str:
    return re.sub(
        r"\d{8}-\d{6}-[0-9a-f]{6}", "<ID>", (run_dir / "report.md").read_text().replace(str(run_dir), "<RUN>")
    )


def test_the_example_suite_on_two_nodes_equals_the_local_run(cluster: dict[str, Any]) -> None:
    step = cluster["steps"][1]
    local, ray = only_run(cluster["out"] / "local"), only_run(cluster["out"] / "copy")
    assert step["rc"] in (0, 1), step["stderr"][-3000:]
    ours = sorted(events(ray), key=_event_order)
    theirs = sorted(events(local), key=_event_order)
    assert [e["type"] for e in ours] == [e["type"] for e in theirs]
    for a, b in zip(ours, theirs, strict=True):
        assert normalized(a, ray) == normalized(b, local), a["type"]
    report_ray = json.loads((ray / "report.json").read_text())
    report_local = json.loads((local / "report.json").read_text())
    for field in sorted((set(report_ray) | set(report_local)) - VOLATILE):
        assert normalized(report_ray.get(field), ray) == normalized(report_local.get(field), local), field
    assert junit_suites(ray) == junit_suites(local)
    assert report_md(ray) == report_md(local)
    # Every trial's folder came back, with the files its result names, and both nodes ran trials.
    found = results(ray)
    assert len(found) == 20
    for result in found:
        for path in result["paths"].values():
            assert path is None or (ray / path).exists(), path
        assert json.loads((ray / result["paths"]["result"]).read_text()) == result
    assert {r["node"] for r in found} == set(cluster["nodes"].values())
    assert json.loads((ray / "run.json").read_text())["settings"]["executor"]["transfer"] == "copy"


def _event_order(event: dict[str, Any]) -> tuple[str, str]:
    # Trials finish in another order on two nodes; what each event says must still be the same.
    if event["type"] in ("trial.start", "trial.finish"):
        key = (event.get("id") or event["result"]["id"])["key"]
        return (event["type"], key)
    return (
        event["type"],
        json.dumps({k: v for k, v in event.items() if k in ("lane", "case_id", "condition")}),
    )


def test_a_node_killed_mid_run_loses_nothing_finished_and_its_trial_runs_again_elsewhere(
    cluster: dict[str, Any],
) -> None:
    step = cluster["steps"][4]
    assert step["killed"], "node B was never seen running a second trial"
    run_dir = only_run(cluster["out"] / "kill")
    found = {r["id"]["key"]: r for r in results(run_dir)}
    assert len(found) == 10  # 5 cases x 2 trials: every trial has a result
    node_a, node_b = cluster["nodes"]["A"], cluster["nodes"]["B"]
    good = [r for r in found.values() if r["id"]["case_id"] != "doomed"]
    assert all(r["status"] == "passed" for r in good), [r["error_message"] for r in good]
    # What node B finished before it died is kept; what it was running ran again on node A.
    assert any(r["node"] == node_b for r in good)
    starts = sorted(p.name for p in cluster["state"].glob("*-start-*") if "-doomed-" not in p.name)
    on_b = [name for name in starts if name.startswith("B-")]
    finished_on_b = sum(r["node"] == node_b for r in good)
    assert len(on_b) > finished_on_b  # a trial started on B that B never finished...
    assert len(starts) > len(good)  # ...and so ran once more
    assert {r["node"] for r in good} == {node_a, node_b}
    # The doomed case: its worker died on both attempts, so an error that is not the agent's.
    doomed = [r for r in found.values() if r["id"]["case_id"] == "doomed"]
    assert [r["error_class"] for r in doomed] == ["environment-error"] * 2
    assert all("failed on 2 attempts" in r["error_message"] for r in doomed)
    assert step["rc"] == 3, step["stderr"][-3000:]  # errors not the agent's only: inconclusive


def test_a_driver_killed_mid_run_resumes_on_the_cluster(cluster: dict[str, Any]) -> None:
    killed, resumed = cluster["steps"][2], cluster["steps"][3]
    assert killed["killed"] and killed["rc"] == -9
    run_dir = only_run(cluster["out"] / "driver")
    assert resumed["rc"] == 0, resumed["stderr"][-3000:]
    found = results(run_dir)
    assert len(found) == 6  # two cases x three trials
    fresh = [
        e["result"]["id"]["key"] for e in events(run_dir) if e["type"] == "trial.finish" and not e["kept"]
    ]
    assert len(fresh) == len(set(fresh)) == 6  # each ran to its end once: before the kill, or after it
    assert all(r["status"] == "passed" for r in found)
    assert json.loads((run_dir / "run.json").read_text())["resumed"] is True
    assert all(r["node"] in cluster["nodes"].values() for r in found)


def test_a_node_that_cannot_run_the_agent_stops_the_run_before_any_trial(cluster: dict[str, Any]) -> None:
    step = cluster["steps"][0]
    assert step["rc"] == 2, step["stderr"][-3000:]
    lines = [line for line in step["stderr"].splitlines() if line.startswith("  node ")]
    assert len(lines) == 1, step["stderr"]
    assert lines[0].startswith(f"  node {cluster['nodes']['B'][:12]} (127.0.0.1): ")
    assert "no credentials for claude: set ANTHROPIC_API_KEY" in lines[0]
    assert not (cluster["out"] / "pre").exists()  # nothing written


def test_a_trial_bigger_than_every_node_is_refused_before_it_waits_forever(cluster: dict[str, Any]) -> None:
    step = cluster["steps"][5]
    assert step["rc"] == 2, step["stderr"][-3000:]
    assert "--trial-cpus 3: no node of the cluster has that many CPUs (the largest has 2)" in step["stderr"]
    assert not (cluster["out"] / "big").exists()
