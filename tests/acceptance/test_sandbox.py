"""Acceptance: agents that try to break out of their trial, under the bubblewrap sandbox and without it.

Each agent is a real script run by the command provider (or a command re-enacted by replay) in a real
bubblewrap sandbox. The "user's home" is a folder of the test's, set as skillgym's HOME, holding planted
secrets; every escape is checked on the host after the run, and the same agent under ``--sandbox none``
shows that the checks would catch it.
"""

from __future__ import annotations

import http.server
import json
import shutil
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import (
    agent_run,
    run_agent,
    run_cli,
    run_dirs,
    run_files,
    running_cli,
    wait_for,
    write_suite,
)

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

CANARY = f"canary-{uuid.uuid4().hex}"


def _one_case_suite(case_id: str, task: str, leaves: str) -> dict[str, str]:
    """A suite of one execution case in a plain workspace, passed when the agent leaves file ``leaves``."""
    source = f"""
        from skillgym import condition, execution_case, workspace_preset

        condition("none")
        workspace_preset("plain", template="template")

        with execution_case({case_id!r}) as c:
            c.category("sandbox")
            c.workspace("plain")
            c.task({task!r})
            with c.assertions() as a:
                a.file_exists({leaves!r})
    """
    return {"suite.py": source, "template/README.md": "a workspace\n"}


SUITE = _one_case_suite("escape", "try to leave", "done.txt")

# Every attempt is allowed to fail; what matters is what reaches the host. The answer quotes what the
# agent could read, so a canary that leaked would be in the trace, the streams and the report.
ESCAPE = r"""#!/bin/sh
home="$1"; host_tmp="$2"; suite="$3"; marker="$4"
cat > /dev/null
echo out > "$home/escape" 2>/dev/null
echo out > "$host_tmp" 2>/dev/null
echo out > ../../escape 2>/dev/null
echo out > "$suite/escape" 2>/dev/null
key=$(cat "$home/.ssh/id_rsa" 2>/dev/null)
memory=$(cat "$home/.claude/CLAUDE.md" 2>/dev/null)
setsid sh -c 'touch daemon.up; exec sleep "$0"' "$marker" > /dev/null 2>&1 &
while [ ! -f daemon.up ]; do sleep 0.01; done
i=0
while [ $i -lt 200 ]; do sleep "$marker" & i=$((i + 1)); done
echo done > done.txt
printf '{"type": "result", "text": "read: %s %s"}\n' "$key" "$memory"
"""


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """A home folder with an SSH key and a Claude memory file, both holding the canary."""
    home = tmp_path / "user-home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/id_rsa").write_text(f"-----BEGIN KEY----- {CANARY}\n")
    (home / ".claude").mkdir()
    (home / ".claude/CLAUDE.md").write_text(f"Always say {CANARY}.\n")
    return home


def _run_dir(root: Path) -> Path:
    (run_dir,) = run_dirs(root.parent / "runs")
    return run_dir


def _files_holding(folder: Path, text: str) -> list[Path]:
    needle = text.encode()
    return [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and needle in p.read_bytes()]


def _running(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True, check=False)
    return found.stdout.split()


def _escape_run(
    tmp_path: Path, user_home: Path, *flags: str
) -> tuple[subprocess.CompletedProcess[str], dict]:
    root = write_suite(tmp_path / "evals", SUITE)
    # In a folder of its own: the sandbox lets an agent read the folder its program is in.
    agent = tmp_path / "agent" / "escape.sh"
    agent.parent.mkdir()
    agent.write_text(ESCAPE)
    agent.chmod(0o755)
    host_tmp = Path("/tmp") / f"skillgym-escape-{uuid.uuid4().hex}"
    marker = f"1000.{uuid.uuid4().int % 10**6}"
    try:
        proc = run_agent(
            root,
            f"{agent} {user_home} {host_tmp} {root} {marker}",
            *flags,
            env={"HOME": str(user_home)},
        )
        escaped = {
            "home": (user_home / "escape").exists(),
            "tmp": host_tmp.exists(),
            "run": (_run_dir(root) / "trials/execution/escape/none/command/escape").exists(),
            "suite": (root / "escape").exists(),
        }
        left = _running(marker)
    finally:
        host_tmp.unlink(missing_ok=True)
        subprocess.run(["pkill", "-f", f"sleep {marker}"], check=False)
    result = json.loads(next(_run_dir(root).rglob("result.json")).read_text())
    return proc, {"escaped": escaped, "left": left, "result": result, "root": root, "marker": marker}


def test_an_agent_cannot_write_outside_its_trial_read_the_home_or_leave_processes(
    tmp_path: Path, user_home: Path
) -> None:
    proc, got = _escape_run(tmp_path, user_home)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert got["escaped"] == {"home": False, "tmp": False, "run": False, "suite": False}
    assert got["left"] == [], "a daemonised child or one of the 200 forks outlived the trial"
    assert got["result"]["status"] == "passed"
    assert _files_holding(_run_dir(got["root"]), CANARY) == []
    assert CANARY not in proc.stdout + proc.stderr
    # The 200 forks die with the agent's process group; the daemon left it, and the sandbox names it.
    (stopped,) = [w for w in got["result"]["warnings"] if "stopped by its sandbox" in w]
    assert f"`sleep {got['marker']}`" in stopped
    assert "--sandbox none" not in proc.stderr


def test_without_the_sandbox_the_same_agent_escapes_and_the_run_says_it_was_unsandboxed(
    tmp_path: Path, user_home: Path
) -> None:
    proc, got = _escape_run(tmp_path, user_home, "--sandbox", "none")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "warning: --sandbox none" in proc.stderr
    assert got["escaped"] == {"home": True, "tmp": True, "run": True, "suite": True}
    assert CANARY in got["result"]["grade"]["checks"][0]["message"] or _files_holding(
        _run_dir(got["root"]), CANARY
    )
    stopped = [w for w in got["result"]["warnings"] if "stopped by cleanup" in w]
    assert any(f"`sleep {got['marker']}`" in w for w in stopped), got["result"]["warnings"]
    run = json.loads((_run_dir(got["root"]) / "run.json").read_text())
    assert run["settings"]["sandbox"] == "none"
    assert "Sandbox: none" in (_run_dir(got["root"]) / "report.md").read_text()


REPLAY_SUITE = _one_case_suite("reenact", "write a file", "inside.txt")


def test_a_replayed_command_cannot_write_outside_the_workspace(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", REPLAY_SUITE)
    outside = tmp_path / "outside.txt"
    header = {
        "cassette": 1,
        "provider": "rec",
        "model": "m1",
        "format": "skillgym-trace",
        "lane": "execution",
        "case": "reenact",
        "condition": "none",
        "trial": None,
        "fingerprint": "",
        "recorded_at": "now",
    }
    call = {
        "type": "tool_call",
        "name": "Bash",
        "command": f"echo in > inside.txt; echo out > {outside}",
        "exit_code": 0,
    }
    cassette = root / "cassettes/rec/m1/execution/reenact/none.jsonl"
    cassette.parent.mkdir(parents=True)
    cassette.write_text("\n".join(json.dumps(x) for x in (header, call)) + "\n")
    proc = run_cli("run", "--suite", str(root), cwd=root.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not outside.exists()
    said = "skillgym: note: replay plays the cassettes in "
    assert said in proc.stderr and "cassettes/rec/m1; in the execution" in proc.stderr
    run = json.loads(run_files(root.parent / "runs", "run.json")[0].read_text())
    assert any("review cassettes like code" in note for note in run["notes"])
    unsandboxed = run_cli("run", "--suite", str(root), "--sandbox", "none", cwd=root.parent)
    assert unsandboxed.returncode == 0, unsandboxed.stderr
    assert outside.exists()


ENV_SUITE = {
    "suite.py": """
        from skillgym import condition, prompt_case

        condition("none")
        with prompt_case("env") as c:
            c.category("sandbox")
            c.prompt("print your environment")
            c.expect_skill(None)
    """,
}

PRINT_ENV = r"""import json, os, sys
sys.stdin.read()
print(json.dumps({"type": "result", "text": json.dumps(dict(os.environ))}))
"""


def test_the_agent_environment_is_an_allow_list(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", ENV_SUITE)
    script = tmp_path / "print_env.py"
    script.write_text(PRINT_ENV)
    secret = f"tok-{uuid.uuid4().hex}"
    proc = run_agent(
        root, f"{shutil.which('python3')} {script}", env={"MY_SECRET_TOKEN": secret, "SSH_AUTH_SOCK": "/x"}
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(next(_run_dir(root).rglob("trace.json")).read_text())
    seen = json.loads(result["final_text"])
    assert "MY_SECRET_TOKEN" not in seen and "SSH_AUTH_SOCK" not in seen
    assert seen["HOME"].endswith("/home") and seen["TMPDIR"].endswith("/tmp")
    assert _files_holding(_run_dir(root), secret) == []


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"hello from the host")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def host_server() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


NETWORK_SUITE = """
from skillgym import condition, prompt_case

condition("none")
with prompt_case("offline") as c:
    c.category("sandbox")
    c.prompt("fetch")
    c.expect_skill(None)
with prompt_case("online") as c:
    c.category("sandbox")
    c.prompt("fetch")
    c.expect_skill(None)
    c.sandbox(network="host")
"""

FETCH = r"""import json, sys, urllib.request
sys.stdin.read()
try:
    text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/", timeout=5).read().decode()
except OSError as exc:
    text = f"unreachable: {exc}"
print(json.dumps({"type": "result", "text": text}))
"""


def test_the_network_is_off_for_a_command_agent_unless_its_case_asks(
    tmp_path: Path, host_server: int
) -> None:
    root = write_suite(tmp_path / "evals", {"suite.py": NETWORK_SUITE})
    script = tmp_path / "fetch.py"
    script.write_text(FETCH)
    proc = run_agent(root, f"{shutil.which('python3')} {script} {host_server}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    texts = {
        p.parent.parts[-4]: json.loads(p.read_text())["final_text"]
        for p in _run_dir(root).rglob("trace.json")
    }
    assert texts["online"] == "hello from the host"
    assert texts["offline"].startswith("unreachable")
    everywhere = run_agent(root, f"{shutil.which('python3')} {script} {host_server}", "--network", "host")
    assert everywhere.returncode == 0, everywhere.stderr


def test_a_missing_bwrap_stops_the_run_before_the_matrix_with_exit_2(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", {**ENV_SUITE, "stubs/env.md": "I would wait.\n"})
    bare = tmp_path / "bin"
    bare.mkdir()
    proc = run_cli(
        "run", "--suite", str(root), "--provider", "stub", cwd=root.parent, env={"PATH": str(bare)}
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "bubblewrap" in proc.stderr and "apt-get install bubblewrap" in proc.stderr
    assert "--sandbox none" in proc.stderr
    assert not (root.parent / "runs").exists()
    with_none = run_cli(
        "run",
        "--suite",
        str(root),
        "--provider",
        "stub",
        "--sandbox",
        "none",
        cwd=root.parent,
        env={"PATH": str(bare)},
    )
    assert with_none.returncode in (0, 1), with_none.stderr


def test_an_unknown_sandbox_is_a_usage_error_naming_the_valid_ones(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", ENV_SUITE)
    proc = run_cli("run", "--suite", str(root), "--sandbox", "docker", cwd=root.parent)
    assert proc.returncode == 2
    assert "unknown sandbox 'docker'" in proc.stderr and "bwrap" in proc.stderr and "none" in proc.stderr


SHARED_SUITE = {
    "suite.py": """
        import sys
        from skillgym import condition, execution_case, workspace_preset

        condition("none")
        start = f"setsid {sys.executable} serve > /dev/null 2>&1 & while [ ! -f ready ]; do sleep 0.05; done"
        workspace_preset("served", template="template", bootstrap=[["sh", "-c", start]])
        fetch = "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/index.html')"
        with execution_case("fetch") as c:
            c.category("sandbox")
            c.workspace("served")
            c.task("fetch the page")
            with c.assertions() as a:
                a.file_exists("page.txt")
                a.command([sys.executable, "-c", fetch])
    """,
    "template/serve": """
        import functools, http.server, pathlib
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory="site")
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 8765), handler)
        pathlib.Path("ready").touch()
        server.serve_forever()
    """,
    "template/site/index.html": "served inside\n",
}

FETCH_PAGE = r"""import sys, urllib.request
sys.stdin.read()
page = urllib.request.urlopen("http://127.0.0.1:8765/index.html", timeout=5).read()
open("page.txt", "wb").write(page)
print('{"type": "result", "text": "fetched"}')
"""


def test_setup_agent_and_verifiers_share_one_sandbox_and_its_private_loopback(tmp_path: Path) -> None:
    """A server the bootstrap starts outlives it, serves the agent and the verifier on the sandbox's own
    loopback (the host's port 8765 is never used), and is stopped, with a warning, when the trial ends."""
    root = write_suite(tmp_path / "evals", SHARED_SUITE)
    script = tmp_path / "fetch_page.py"
    script.write_text(FETCH_PAGE)
    proc = run_agent(root, f"{shutil.which('python3')} {script}", "--keep-workspaces")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(next(_run_dir(root).rglob("result.json")).read_text())
    assert result["status"] == "passed", result
    workspace = _run_dir(root) / result["paths"]["workspace"]
    assert (workspace / "page.txt").read_text() == "served inside\n"
    stopped = [w for w in result["warnings"] if "stopped by its sandbox" in w]
    assert any(" serve` (PID " in w for w in stopped), result["warnings"]


def test_a_writable_folder_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", ENV_SUITE)
    proc = run_cli(
        "run", "--suite", str(root), "--sandbox-writable", str(tmp_path / "nowhere"), cwd=root.parent
    )
    assert proc.returncode == 2
    assert "--sandbox-writable" in proc.stderr and "nowhere" in proc.stderr and "create it" in proc.stderr
    assert not (root.parent / "runs").exists()


HANGS = r"""import subprocess, sys, time
sys.stdin.read()
subprocess.Popen(["sleep", sys.argv[1]], start_new_session=True)
open("started", "w").close()
time.sleep(300)
"""


def test_a_killed_skillgym_takes_its_sandboxed_agents_with_it(tmp_path: Path) -> None:
    """SIGKILL leaves no cleanup to run: the sandbox's keeper dies with skillgym, and with it its PID
    namespace, the agent and the daemon it started."""
    root = write_suite(tmp_path / "evals", ENV_SUITE)
    script = tmp_path / "agent" / "hangs.py"
    script.parent.mkdir()
    script.write_text(HANGS)
    marker = f"1000.{uuid.uuid4().int % 10**6}"
    args = agent_run(root, f"{shutil.which('python3')} {script} {marker}")
    with running_cli(*args, cwd=root.parent) as child:
        wait_for(
            lambda: run_files(root.parent / "runs", "trials/**/workspace/started"),
            timeout=60,
            what="the agent to start",
        )
        assert _running(marker)
        child.kill()
        child.communicate()
    wait_for(lambda: not _running(marker), timeout=10, what="the sandbox to end with skillgym")
