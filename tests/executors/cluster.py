"""A two-node Ray cluster on this machine, for the Ray executor's tests; run as a program, not imported.

    unshare -n -p -f -m --mount-proc python cluster.py SPEC.json

It runs in namespaces of its own: a network with only loopback (Ray binds the machine's routable address
and probes outside ones otherwise), and a PID namespace whose first process it is, so every process it
starts — Ray's, skillgym's, the agents' — ends when it does. The spec names the nodes (their CPUs and the
environment each is started with) and the steps: skillgym commands, run to their end or stopped midway
(the driver SIGKILLed, or a node killed by the PIDs of its processes). What happened is printed as one
JSON document: each node's id, and each step's exit code and output. benchmarks/ray_cluster.py runs its
measurements on the same cluster.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PORT = 6391
ADDRESS = f"127.0.0.1:{PORT}"
BIN = Path(sys.executable).parent


def main(spec: dict[str, Any]) -> dict[str, Any]:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    temp = Path(spec["temp"])
    (temp / "ray").mkdir(parents=True, exist_ok=True)
    # A home of the cluster's own: Ray keeps an auth token in ~/.ray, and a token another Ray instance
    # left there makes the nodes refuse each other.
    os.environ["HOME"] = str(temp / "home")
    (temp / "home").mkdir(exist_ok=True)
    nodes: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for index, (name, node) in enumerate(spec["nodes"].items()):
            nodes[name] = start_node(name, node, head=index == 0, temp=temp)
        ids = wait_for_nodes(list(spec["nodes"]))
        steps = [run_step(step, nodes, spec) for step in spec["steps"]]
    finally:
        for node in reversed(nodes.values()):  # each node by the PIDs of its processes, the head last
            kill_tree(node.pid)
    return {"nodes": ids, "steps": steps}


def launch(spec: dict[str, Any], folder: Path, *, timeout: float = 1800) -> dict[str, Any]:
    """Run ``spec`` on a fresh cluster in its own namespaces (this file as a program, under ``unshare``);
    what it printed. Called from outside: the tests and benchmarks/ray_cluster.py."""
    (folder / "spec.json").write_text(json.dumps(spec))
    done = subprocess.run(
        [
            "unshare",
            "-n",
            "-p",
            "-f",
            "-m",
            "--mount-proc",
            sys.executable,
            __file__,
            str(folder / "spec.json"),
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the test cluster failed (exit {done.returncode}): {done.stderr[-4000:]}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def start_node(name: str, node: dict[str, Any], *, head: bool, temp: Path) -> subprocess.Popen[bytes]:
    """``ray start --block`` for one node: its process and its children are the node."""
    env = {k: v for k, v in os.environ.items() if k not in node.get("drop_env", ())}
    env.update(node.get("env", {}), RAY_TMPDIR=str(temp), SKILLGYM_TEST_NODE=name)
    where = ["--head", f"--port={PORT}", "--include-dashboard=false"] if head else [f"--address={ADDRESS}"]
    argv = [
        str(BIN / "ray"),
        "start",
        "--block",
        *where,
        f"--num-cpus={node['cpus']}",
        f"--resources={json.dumps({name: 1})}",
        "--disable-usage-stats",
    ]
    log = open(temp / f"node-{name}.log", "wb")  # noqa: SIM115 - open for the node's life
    child = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    if head:  # another node that joins before the head is all up is refused (an "auth token" error)
        _until(lambda: b"Ray runtime started" in (temp / f"node-{name}.log").read_bytes(), 90, "the head")
    return child


def wait_for_nodes(names: list[str]) -> dict[str, str]:
    """Each node's Ray id, once every node has joined."""
    script = (
        f"import json, ray; ray.init(address={ADDRESS!r}, logging_level='ERROR'); "
        "print(json.dumps({r: n['NodeID'] for n in ray.nodes() if n['Alive'] "
        f"for r in n['Resources'] if r in {names!r}}}))"
    )

    def joined() -> dict[str, str] | None:
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
        found = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else {}
        return found if set(found) == set(names) else None

    return _until(joined, 90, "every node to join")


def run_step(step: dict[str, Any], nodes: dict[str, subprocess.Popen[bytes]], spec: dict[str, Any]) -> Any:
    """One skillgym command (``args``), or several at once (``parallel``: a list of them, for shards)."""
    for stale in Path(step.get("clear", "/nonexistent")).glob("*"):  # what earlier steps' agents left
        stale.unlink()
    if "parallel" in step:
        started = time.time()
        children = [_start(args, spec) for args in step["parallel"]]
        outs = [child.communicate(timeout=600) for child in children]
        return {
            "rc": [child.returncode for child in children],
            "stderr": [err for _, err in outs],
            "seconds": round(time.time() - started, 2),
        }
    started = time.time()
    child = _start(step["args"], spec)
    killed: list[int] = []
    when = step.get("when")
    if when is not None:
        _until(lambda: _seen(when) or child.poll() is not None, 240, f"{when['glob']} to appear")
        if child.poll() is None:
            if when["kill"] == "driver":
                killed = [child.pid]
                child.send_signal(signal.SIGKILL)
            else:
                killed = kill_tree(nodes[when["kill"]].pid)
    out, err = child.communicate(timeout=600)
    return {
        "rc": child.returncode,
        "stdout": out,
        "stderr": err,
        "killed": killed,
        "seconds": round(time.time() - started, 2),
    }


def _start(args: list[str], spec: dict[str, Any]) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "skillgym", *map(_resolved, args)]
    env = {**os.environ, "NO_COLOR": "1", "RAY_ADDRESS": ADDRESS, **spec.get("env", {})}
    return subprocess.Popen(
        argv, cwd=spec["cwd"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _resolved(arg: str) -> str:
    """``@run:FOLDER`` is the one run folder in FOLDER (a step resumes what an earlier step left)."""
    if not arg.startswith("@run:"):
        return arg
    (found,) = [p for p in Path(arg[5:]).iterdir() if p.is_dir() and not p.is_symlink()]
    return str(found)


def _seen(when: dict[str, Any]) -> bool:
    return len(list(Path(when["root"]).glob(when["glob"]))) >= when.get("count", 1)


def kill_tree(pid: int) -> list[int]:
    """SIGKILL ``pid`` and every process below it (a node: ray start, its raylet, its workers)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo += [child for child, parent in parents.items() if parent == current]
    for member in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(member, signal.SIGKILL)
    return tree


def _until(found: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError(f"waited {timeout:g}s for {what}")


if __name__ == "__main__":
    print(json.dumps(main(json.loads(Path(sys.argv[1]).read_text()))))
