"""Acceptance: secret values never reach a run's files or console, whatever their size or source."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

from tests.conftest import run_agent, run_cli, run_dirs, write_suite

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
    (run_dir,) = run_dirs(root.parent / "runs")
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


# Every kind of secret skillgym knows, each planted where the agent, a bootstrap or the suite can print it.
# The suite reads the user's own MY_API_KEY into a harmless name, and marks another value secret itself.
EVERY_KIND_SUITE = """
import os
from skillgym import Command, condition, execution_case, replace_default_conditions, secret, workspace_preset

workspace_preset(
    "env",
    env={{"PRESET_API_KEY": "{preset}", "GREETING": secret("{marked}")}},
    bootstrap=[
        Command(
            argv=("sh", "-c", "echo boot saw $BOOT_TOKEN; echo $BOOT_TOKEN > boot.txt"),
            id="boot",
            env={{"BOOT_TOKEN": "{boot}"}},
        )
    ],
)
replace_default_conditions()
condition("plain", env={{"COND_SECRET": "{cond}"}})

with execution_case("show-env") as c:
    c.category("session")
    c.workspace("env")
    c.env({{"CASE_TOKEN": "{case}", "HARMLESS": os.environ["MY_API_KEY"]}})
    c.task("print your environment, and the word {marked}")
    with c.assertions() as a:
        a.file_exists("never.txt")
"""

# Prints what it was given (argv, env, prompt) to stdout, stderr, the trace and a workspace file, then
# 17 MiB of stdout, then all of it once more: the last copy lies far past the first 16 MiB of stdout.txt.
EVERY_KIND_AGENT = r"""import json, os, sys
prompt = sys.stdin.read()
dump = json.dumps({"argv": sys.argv, "env": dict(os.environ), "prompt": prompt})
print(dump, file=sys.stderr)
open("env.json", "w").write(dump)
out = sys.stdout
out.write(json.dumps({"type": "tool_call", "name": "Bash", "command": "env", "output": dump, "exit_code": 0}))
out.write("\n")
filler = json.dumps({"type": "message", "text": "x" * 65536}) + "\n"
for _ in range(17 * 16):
    out.write(filler)
out.write(json.dumps({"type": "message", "text": dump}) + "\n")
out.write(json.dumps({"type": "result", "text": dump}) + "\n")
"""


def _planted(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def test_no_kind_of_secret_reaches_the_run_folder_or_the_console(tmp_path: Path) -> None:
    values = {
        "provider": _planted("provider-credential"),  # the user's, handed to the agent on its command line
        "preset": _planted("preset-key"),
        "boot": _planted("bootstrap-token"),
        "cond": _planted("condition-secret"),
        "case": _planted("case-token"),
        "user": _planted("user-env-key"),  # the user's MY_API_KEY, copied under the name HARMLESS
        "marked": _planted("marked"),  # skillgym.secret(...) under the name GREETING
    }
    root = write_suite(tmp_path / "evals", {"suite.py": EVERY_KIND_SUITE.format(**values)})
    agent = tmp_path / "every_kind.py"
    agent.write_text(EVERY_KIND_AGENT)
    env = {"FAKE_PROVIDER_API_KEY": values["provider"], "MY_API_KEY": values["user"]}
    command = f"{sys.executable} {agent} --api-key {values['provider']}"
    consoles: list[str] = []

    dry = run_agent(root, command, "--dry-run", "--json", env=env)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert json.loads(dry.stdout)["presets"][0]["env"]["GREETING"] == "<redacted>"
    consoles += [dry.stdout, dry.stderr]
    shown = run_agent(root, command, "--dry-run", env=env)
    assert "env       GREETING=<redacted>" in shown.stdout, shown.stdout
    consoles += [shown.stdout, shown.stderr]

    proc = run_agent(
        root,
        command,
        "--keep-workspaces",
        "--record",  # the cassette goes into the suite, to be committed
        "--progress",
        "--reporter",
        "jsonl",
        "--reporter-output",
        "-",
        "--reporter",
        "junit",
        env=env,
    )
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]  # never.txt is missing
    consoles += [proc.stdout, proc.stderr]
    run = _only_run(root)
    (stdout,) = run.rglob("stdout.txt")
    assert stdout.stat().st_size > 17 * 1024 * 1024
    (workspace,) = run.rglob("workspace")
    # The agent and the bootstrap were given every value, each under its own name, and printed it: what
    # they wrote holds the marker in its place.
    seen = json.loads((workspace / "env.json").read_text())
    for name in ("PRESET_API_KEY", "GREETING", "COND_SECRET", "CASE_TOKEN", "HARMLESS"):
        assert seen["env"][name] == "<redacted>", name
    assert seen["argv"][-2:] == ["--api-key", "<redacted>"]
    assert seen["prompt"].count("<redacted>") == 1
    assert (workspace / "boot.txt").read_text().strip() == "<redacted>"
    assert (run / "junit.xml").is_file()
    (cassette,) = (root / "cassettes").rglob("*.jsonl")

    rebuilt = run_cli("report", str(run), cwd=root.parent, env=env)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    consoles += [rebuilt.stdout, rebuilt.stderr]
    listed = run_cli("list", "--suite", str(root), "--json", cwd=root.parent, env=env)
    consoles += [listed.stdout, listed.stderr]

    for kind, value in values.items():
        assert _files_holding(run, value) == [], kind
        assert value.encode() not in cassette.read_bytes(), kind
        assert not any(value in text for text in consoles), kind
