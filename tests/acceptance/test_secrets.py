"""Acceptance: secret values never reach a run's files or console, whatever their size or source."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

from tests.conftest import run_agent, write_suite

PROMPT_SUITE = {
    "suite.py": """
        from skillgym import prompt_case

        with prompt_case("loud") as c:
            c.category("trigger")
            c.prompt("say a lot")
            c.expect_skill(None)
            c.budget(timeout_s=120)
            with c.step("says") as s:
                s.must_mention("done")
    """,
}

# Prints about 20 MiB of skillgym-trace lines on stdout (above any single-read limit), with the secret
# read from argv[1] cut in half by the 4 MiB mark, again near the start and once more at the end.
LOUD_AGENT = r"""import json, sys
sys.stdin.read()
secret = open(sys.argv[1]).read()
out = sys.stdout.buffer
written = 0

def emit(text):
    global written
    line = json.dumps({"type": "message", "text": text}).encode() + b"\n"
    out.write(line)
    written += len(line)

emit("first " + secret)
head = len(json.dumps({"type": "message", "text": ""})) - 2  # the text starts this far into a line
mark = 4 * 1024 * 1024 - len(secret) // 2
while written + 70000 < mark:
    emit("x" * 65536)
emit("y" * (mark - written - head) + secret + " tail")
while written < 20 * 1024 * 1024:
    emit("z" * 65536)
emit("last " + secret)
print(json.dumps({"type": "result", "text": "done"}))
"""


def _files_holding(folder: Path, needle: str) -> list[Path]:
    raw = needle.encode()
    return [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and raw in p.read_bytes()]


def _only_run(root: Path) -> Path:
    (run_dir,) = (root.parent / "runs").iterdir()
    return run_dir


def test_a_secret_in_a_huge_stream_is_scrubbed_even_across_a_chunk_boundary(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", PROMPT_SUITE)
    secret = f"sk-fake-{uuid.uuid4().hex}"
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(secret)
    agent = tmp_path / "loud.py"
    agent.write_text(LOUD_AGENT)
    proc = run_agent(root, f"{sys.executable} {agent} {secret_file}", env={"FAKE_API_KEY": secret})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = _only_run(root)
    (stdout,) = run.rglob("stdout.txt")
    data = stdout.read_bytes()
    assert len(data) > 20 * 1024 * 1024
    # The secret astride the 4 MiB mark, replaced whole: it started half its length before the mark, less
    # what replacing the first one took off.
    cut_at = data.index(b"y<redacted> tail") + 1
    assert cut_at == 4 * 1024 * 1024 - len(secret) // 2 - (len(secret) - len("<redacted>"))
    assert data.count(b"<redacted>") == 3
    assert _files_holding(run, secret) == []
    assert secret not in proc.stdout + proc.stderr


ENV_SUITE = {
    "suite.py": """
        from skillgym import execution_case, workspace_preset

        workspace_preset("env", env={"PRESET_API_KEY": "preset-key-PLANTED", "MODE": "demo"})

        with execution_case("show-env") as c:
            c.category("session")
            c.workspace("env")
            c.env({"CASE_TOKEN": "case-token-PLANTED"})
            c.task("print your environment")
            with c.assertions() as a:
                a.file_exists("never.txt")
    """,
}

# Prints its whole environment everywhere it can: stdout, stderr, a trace event and a workspace file.
PRINT_ENV = r"""import json, os, sys
sys.stdin.read()
dump = json.dumps(dict(os.environ))
print(dump, file=sys.stderr)
open("env.json", "w").write(dump)
print(json.dumps({"type": "tool_call", "name": "Bash", "command": "env", "output": dump, "exit_code": 0}))
print(json.dumps({"type": "result", "text": dump}))
"""


def test_secret_looking_env_of_presets_and_cases_is_scrubbed_from_the_run(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", ENV_SUITE)
    agent = tmp_path / "print_env.py"
    agent.write_text(PRINT_ENV)
    proc = run_agent(
        root, f"{sys.executable} {agent}", "--progress", "--reporter", "jsonl", "--reporter-output", "-"
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # never.txt is missing
    run = _only_run(root)
    (trace,) = run.rglob("trace.json")
    assert "PRESET_API_KEY" in trace.read_text() and "CASE_TOKEN" in trace.read_text()  # the agent saw them
    assert (trace.parent / "workspace" / "env.json").is_file()  # a failed trial keeps its workspace
    for value in ("preset-key-PLANTED", "case-token-PLANTED"):
        assert _files_holding(run, value) == [], value
        assert value not in proc.stdout and value not in proc.stderr, value
