"""A small suite and helpers to run ``skillgym run`` against a real agent CLI and read what it wrote."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO, run_dirs, write_suite

from .model_server import Usage

# Fake credentials: real enough for the CLIs to send, checked to never land in any file a run writes.
ANTHROPIC_KEY = "sk-ant-scripted-0123456789abcdef"
OPENAI_KEY = "sk-openai-scripted-0123456789abcdef"
GEMINI_KEY = "AIza-gemini-scripted-0123456789abcdef"
# One scripted conversation's token counts, given to every CLI in its API's own shape: each must be
# recorded as the same figures, every token counted once (total = input + cache read + cache write +
# output; reasoning is part of output, and only some APIs report it apart).
SCRIPTED_USAGE = (
    Usage(input=1200, output=85, cache_read=300, cache_write=40, reasoning=20),
    Usage(input=1400, output=15, cache_read=1500, cache_write=2, reasoning=5),
)
RECORDED_USAGE = {"input": 2600, "output": 100, "cache_read": 1800, "cache_write": 42, "total": 4542}
# Whatever the developer or CI has set for their own agents must not reach these runs.
_FOREIGN = ("ANTHROPIC_", "OPENAI_", "CLAUDE_", "CODEX_", "GEMINI_", "GOOGLE_", "SKILLGYM_")

SUITE = {
    "suite.py": """
        from skillgym import skill

        skill("greeter", "skills/greeter")
    """,
    "skills/greeter/SKILL.md": """
        ---
        name: greeter
        description: Greets people the house way. Use it whenever someone asks you to greet somebody.
        ---
        Greet with HELLO in capital letters.
    """,
    "cases.py": """
        from skillgym import execution_case, prompt_case

        with prompt_case("plain") as c:
            c.category("answer")
            c.prompt("Say hello to the team")
            c.expect_skill(None)
            with c.step("greets") as s:
                s.must_mention("hello")

        with prompt_case("greet") as c:
            c.category("trigger")
            c.prompt("Greet the new colleague")
            c.expect_skill("greeter")
            with c.step("greets") as s:
                s.must_mention("hello")

        with execution_case("make-file") as c:
            c.category("files")
            c.task("Write hello to out.txt")
            with c.assertions() as a:
                a.file_contains("out.txt", r"^hello$")
            c.budget(timeout_s=120)

        with execution_case("short-leash") as c:
            c.category("files")
            c.task("Write hello to out.txt, then check it")
            with c.assertions() as a:
                a.file_exists("out.txt")
            c.budget(timeout_s=120, max_turns=1)
    """,
}


def write_integration_suite(root: Path) -> Path:
    return write_suite(root / "evals", SUITE)


def agent_env(**extra: str) -> dict[str, str]:
    """This process's environment without any agent settings of the developer's, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN)}
    return {**env, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **extra}


def skillgym(
    *args: str, cwd: Path, env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m skillgym ARGS`` as a user would run it."""
    return subprocess.run(
        [sys.executable, "-m", "skillgym", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run(
    suite: Path,
    output: Path,
    env: dict[str, str],
    *,
    provider: str,
    case: str,
    condition: str,
    more: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """One trial of ``case`` under ``condition``, run alone so the scripted replies stay in order."""
    args = ["run", "--suite", str(suite), "--provider", provider, "--case", case, "--condition", condition]
    args += ["--output", str(output), "--concurrency", "1", *more]
    return skillgym(*args, cwd=suite.parent, env=env)


def only_trial(output: Path) -> tuple[dict[str, Any], dict[str, Any], Path]:
    """result.json and trace.json of the single trial under ``output``, and its trial dir."""
    (run_dir,) = run_dirs(output)
    (result_path,) = run_dir.glob("trials/**/result.json")
    trace = json.loads((result_path.parent / "trace.json").read_text())
    return json.loads(result_path.read_text()), trace, result_path.parent


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()]


def leaked(secret: str, *roots: Path) -> list[Path]:
    """Files under ``roots`` whose bytes contain ``secret``."""
    needle = secret.encode()
    return [p for p in files_under(*roots) if needle in p.read_bytes()]


def dead_endpoint() -> str:
    """``http://127.0.0.1:PORT``, a port nothing listens on: a connection to it is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"
