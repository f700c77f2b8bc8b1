"""Tests for skillgym.providers.claude: argv, env, detection, failure classes and recording.

A small Python program stands in for the ``claude`` executable: it prints canned stream-json lines,
logs the argv, env and stdin it was given, and can exit non-zero or hang.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from skillgym.providers import ClaudeProvider, CodexProvider, make_provider
from skillgym.providers.agent_cli import MAX_ARGV_PROMPT, resolve_executable
from skillgym.providers.cassette import read_cassette
from skillgym.providers.claude import CLAUDE_FIXED_ENV, claude_argv, claude_env
from skillgym.providers.replay import ReplayProvider
from skillgym.redact import REDACTED
from tests.conftest import run_cli, write_suite

from .support import request
from .test_claude_stream import RUN, assistant, init, line, result, tool_result, tool_use

pytestmark = pytest.mark.anyio

_FAKE = """#!{python}
import json, os, sys, time
if sys.argv[1:] == ["--version"]:
    print({version!r})
    sys.exit({version_exit})
stdin = sys.stdin.read()
if os.environ.get("FAKE_LOG"):
    with open(os.environ["FAKE_LOG"], "w") as log:
        json.dump({{"argv": sys.argv[1:], "env": dict(os.environ), "stdin": stdin, "cwd": os.getcwd()}}, log)
with open(os.environ["FAKE_LINES"], "rb") as lines:
    sys.stdout.buffer.write(lines.read())
sys.stdout.flush()
sys.stderr.write(os.environ.get("FAKE_STDERR", ""))
time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
"""


def fake_cli(
    folder: Path, name: str, *, version: str = "2.1.332 (Claude Code)", version_exit: int = 0
) -> Path:
    """An executable called ``name`` in ``folder`` that behaves as described in this module's docstring."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(_FAKE.format(python=sys.executable, version=version, version_exit=version_exit))
    path.chmod(0o755)
    return path


def fake_request(tmp_path: Path, lines: Sequence[bytes], **overrides: Any) -> Any:
    """A trial request whose env tells the fake CLI what to print; ``env_extra`` adds variables."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    stream = tmp_path / "canned.jsonl"
    stream.write_bytes(b"".join(raw + b"\n" for raw in lines))
    home = tmp_path / "trial/home"
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(home / ".codex"),
        "FAKE_LINES": str(stream),
        "FAKE_LOG": str(tmp_path / "fake-log.json"),
        **overrides.pop("env_extra", {}),
    }
    return request(tmp_path, env=env, **overrides)


def fake_log(tmp_path: Path) -> dict[str, Any]:
    logged: dict[str, Any] = json.loads((tmp_path / "fake-log.json").read_text())
    return logged


# ---- argv and env ----------------------------------------------------------------------------------


def test_argv_is_a_list_with_the_prompt_model_and_turn_limit(tmp_path: Path) -> None:
    argv, stdin = claude_argv("/opt/claude", request(tmp_path, prompt="Fix it", model="sonnet", max_turns=7))
    assert argv == [
        "/opt/claude",
        "-p",
        "Fix it",
        "--output-format",
        "stream-json",
        "--verbose",
        "--dangerously-skip-permissions",
        "--model",
        "sonnet",
        "--max-turns",
        "7",
    ]
    assert stdin is None
    argv, _ = claude_argv("claude", request(tmp_path, prompt="Fix it"))
    assert "--model" not in argv and "--max-turns" not in argv


def test_judge_mode_turns_every_tool_off(tmp_path: Path) -> None:
    argv, _ = claude_argv("claude", request(tmp_path, prompt="Grade it", max_turns=1, text_only=True))
    assert argv[argv.index("--tools") + 1] == "" and argv[-2:] == ["--max-turns", "1"]
    assert "--tools" not in claude_argv("claude", request(tmp_path, prompt="Fix it"))[0]


@pytest.mark.parametrize("prompt", ["--help me", "x" * (MAX_ARGV_PROMPT + 1)])
def test_a_prompt_argv_cannot_carry_goes_on_stdin(tmp_path: Path, prompt: str) -> None:
    argv, stdin = claude_argv("claude", request(tmp_path, prompt=prompt))
    assert prompt not in argv
    assert argv[:3] == ["claude", "-p", "--output-format"]
    assert stdin == prompt.encode()


def test_env_adds_the_headless_settings_and_keeps_the_harness_variables() -> None:
    env = claude_env({"HOME": "/trial/home", "CLAUDE_CONFIG_DIR": "/trial/home/.claude", "IS_SANDBOX": "0"})
    assert env["HOME"] == "/trial/home" and env["CLAUDE_CONFIG_DIR"] == "/trial/home/.claude"
    for key, value in CLAUDE_FIXED_ENV.items():
        assert env[key] == value
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "2"
    assert claude_env({"CLAUDE_CODE_MAX_RETRIES": "8"})["CLAUDE_CODE_MAX_RETRIES"] == "8"


def test_the_provider_declares_its_skill_dir_and_credentials() -> None:
    provider = ClaudeProvider("claude")
    assert provider.skill_dirs == (".claude/skills",)
    assert provider.runs_agent is True
    assert set(provider.passthrough_env) == {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CODE_OAUTH_TOKEN",
    }


def test_make_provider_builds_the_agent_providers_with_their_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLGYM_CLAUDE", "/opt/claude")
    monkeypatch.setenv("SKILLGYM_CODEX", "/opt/codex")
    monkeypatch.setenv("SKILLGYM_CODEX_BASE_URL", "http://h/v1")
    claude = make_provider("claude", suite_root=tmp_path)
    codex = make_provider("codex", suite_root=tmp_path)
    assert isinstance(claude, ClaudeProvider) and claude.executable == "/opt/claude"
    assert isinstance(codex, CodexProvider) and (codex.executable, codex.base_url) == (
        "/opt/codex",
        "http://h/v1",
    )
    assert ClaudeProvider("/given/claude").executable == "/given/claude"
    monkeypatch.setenv("SKILLGYM_CLAUDE", "/env/claude")
    assert ClaudeProvider().executable == "/env/claude"
    monkeypatch.delenv("SKILLGYM_CLAUDE")
    assert ClaudeProvider().executable == "claude"


# ---- detection -------------------------------------------------------------------------------------


async def test_a_missing_cli_is_unavailable_with_how_to_install_or_point_to_it(tmp_path: Path) -> None:
    detection = await ClaudeProvider(str(tmp_path / "nowhere/claude")).detect()
    assert not detection.available
    assert detection.problem is not None
    assert "was not found at that path" in detection.problem
    assert "npm install -g @anthropic-ai/claude-code" in detection.problem
    assert "SKILLGYM_CLAUDE" in detection.problem
    detection = await ClaudeProvider("skillgym-no-such-claude").detect()
    assert detection.problem is not None and "not found on PATH" in detection.problem


async def test_detect_reports_the_version_when_credentials_are_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-123456")
    detection = await ClaudeProvider(str(fake_cli(tmp_path, "claude"))).detect()
    assert detection.available, detection.problem
    assert detection.version == "2.1.332"


async def test_detect_without_credentials_says_which_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    detection = await ClaudeProvider(str(fake_cli(tmp_path, "claude"))).detect()
    assert not detection.available
    assert detection.problem is not None and "ANTHROPIC_API_KEY" in detection.problem
    assert "private home" in detection.problem


async def test_a_cli_that_cannot_tell_its_version_is_unavailable(tmp_path: Path) -> None:
    broken = fake_cli(tmp_path, "claude", version="segfault", version_exit=3)
    detection = await ClaudeProvider(str(broken)).detect()
    assert not detection.available
    assert detection.problem is not None and "exited with code 3" in detection.problem


def test_resolve_executable_follows_path_and_checks_files(tmp_path: Path) -> None:
    fake = fake_cli(tmp_path, "claude")
    assert resolve_executable(str(fake)) == str(fake)
    (tmp_path / "plain.txt").write_text("x")
    assert resolve_executable(str(tmp_path / "plain.txt")) is None
    assert resolve_executable("python3") is not None


def test_a_missing_cli_stops_the_run_before_the_matrix_with_exit_2(tmp_path: Path) -> None:
    root = write_suite(
        tmp_path / "evals",
        {
            "cases.py": """
                from skillgym import prompt_case

                for n in range(3):
                    with prompt_case(f"ask-{n}") as c:
                        c.category("trigger")
                        c.prompt("hello")
                        c.expect_skill(None)
            """
        },
    )
    done = run_cli(
        "run",
        "--suite",
        str(root),
        "--provider",
        "claude",
        cwd=tmp_path,
        env={"SKILLGYM_CLAUDE": str(tmp_path / "missing/claude")},
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("npm install -g @anthropic-ai/claude-code") == 1
    assert not list(tmp_path.glob("runs/*/trials"))


# ---- invocation and failure classes -----------------------------------------------------------------


async def test_a_successful_run_is_parsed_live_with_the_trial_env(tmp_path: Path) -> None:
    fake = fake_cli(tmp_path / "bin", "claude")
    req = fake_request(tmp_path, RUN, model="sonnet", max_turns=5, prompt="Greet them")
    outcome = await ClaudeProvider(str(fake)).invoke(req)
    assert outcome.ok, outcome.error_message
    assert outcome.trace.final_text == "Greeted the colleague."
    assert outcome.model == "claude-sonnet-4-5"
    assert outcome.exit_code == 0
    logged = fake_log(tmp_path)
    assert logged["argv"][:2] == ["-p", "Greet them"]
    assert logged["cwd"] == req.workspace
    assert logged["env"]["IS_SANDBOX"] == "1"
    assert logged["env"]["HOME"] == req.env["HOME"]
    assert Path(req.stdout_path).read_bytes() == b"".join(raw + b"\n" for raw in RUN)


async def test_a_long_prompt_arrives_on_stdin(tmp_path: Path) -> None:
    prompt = "y" * (MAX_ARGV_PROMPT + 5)
    outcome = await ClaudeProvider(str(fake_cli(tmp_path, "claude"))).invoke(
        fake_request(tmp_path, RUN, prompt=prompt)
    )
    assert outcome.ok, outcome.error_message
    assert fake_log(tmp_path)["stdin"] == prompt


async def _invoke(tmp_path: Path, lines: Sequence[bytes], **overrides: Any) -> Any:
    return await ClaudeProvider(str(fake_cli(tmp_path / "bin", "claude"))).invoke(
        fake_request(tmp_path, lines, **overrides)
    )


# What Claude Code 2.1.332 prints when its endpoint refuses the connection, after its retries.
REFUSED = "API Error: Connection refused \u2014 a firewall or proxy may be blocking it (ECONNREFUSED)"
RETRIES = [
    line(type="system", subtype="api_retry", attempt=n, max_retries=2, error_status=None) for n in (1, 2)
]


@pytest.mark.parametrize(
    ("lines", "exit_code", "expected"),
    [
        (
            [init([]), result(is_error=True, api_error_status=401, result="Invalid API key", num_turns=1)],
            1,
            "claude could not authenticate to http://127.0.0.1:9 (HTTP 401): Invalid API key; check "
            "ANTHROPIC_API_KEY",
        ),
        (
            [
                init([]),
                result(is_error=True, api_error_status=404, api_error_type="not_found_error", result="no"),
            ],
            1,
            "unknown model 'sonnet-9' at http://127.0.0.1:9 (HTTP 404)",
        ),
        (
            [init([]), result(is_error=True, api_error_status=529, result="Overloaded")],
            1,
            "claude's API request to http://127.0.0.1:9 failed with HTTP 529: Overloaded",
        ),
        (
            [init([]), *RETRIES, result(is_error=True, api_error_status=500, result="API Error: 500 boom")],
            1,
            "claude's API request to http://127.0.0.1:9 failed with HTTP 500 after 2 retries: API Error: "
            "500 boom",
        ),
        (
            [
                init([]),
                *RETRIES,
                result(is_error=True, api_error_status=429, result="Request rejected (429)"),
            ],
            1,
            "claude's API request to http://127.0.0.1:9 failed with HTTP 429 after 2 retries",
        ),
        (
            [init([]), *RETRIES, result(is_error=True, api_error="connection_failed", result=REFUSED)],
            1,
            f"claude could not connect to http://127.0.0.1:9 after 2 retries: {REFUSED}; check that the "
            "endpoint is up (set by ANTHROPIC_BASE_URL)",
        ),
        (
            [init([]), result(is_error=True, api_error="stream_failed", result="API Error: cut off")],
            1,
            "claude's API request to http://127.0.0.1:9 failed (stream_failed): API Error: cut off",
        ),
        (
            [init([]), result(is_error=True, terminal_reason="api_error", result="API Error: ?")],
            1,
            "claude reported an error (api_error): API Error: ?",
        ),
        (
            [init([]), result(subtype="error_max_turns", is_error=True, num_turns=3, result=None)],
            1,
            "claude reached its turn limit (--max-turns 2) after 3 turns",
        ),
        (
            [init([]), result(subtype="error_during_execution", is_error=True, result=None, errors=["boom"])],
            1,
            "claude reported an error (error_during_execution): boom",
        ),
        ([init([])], 0, "claude exited 0 without a result line, so no turn was taken"),
        ([init([])], 1, "claude exited with code 1 without a result line: it broke"),
        ([init([]), result(num_turns=0)], 0, "claude finished with zero turns"),
        ([init([]), result()], 3, "claude exited with code 3 after reporting success: it broke"),
    ],
)
async def test_infrastructure_failures_are_provider_errors(
    tmp_path: Path, lines: list[bytes], exit_code: int, expected: str
) -> None:
    outcome = await _invoke(
        tmp_path,
        lines,
        model="sonnet-9",
        max_turns=2,
        env_extra={
            "FAKE_EXIT": str(exit_code),
            "FAKE_STDERR": "it broke",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        },
    )
    assert not outcome.ok
    assert outcome.error_class == "provider-error"
    assert expected in outcome.error_message


async def test_running_past_the_budget_is_a_timeout_and_keeps_the_partial_trace(tmp_path: Path) -> None:
    lines = [init(["greeter"]), assistant(tool_use("t1", "Bash", command="sleep 60"))]
    outcome = await _invoke(tmp_path, lines, timeout_s=1.0, env_extra={"FAKE_SLEEP": "60"})
    assert outcome.error_class == "timeout"
    assert "case budget of 1s" in outcome.error_message
    assert outcome.trace.tool_calls[0].command == "sleep 60"


async def test_an_unreadable_line_is_a_provider_error_naming_stdout(tmp_path: Path) -> None:
    outcome = await _invoke(tmp_path, [init([]), b"Segmentation fault", result()])
    assert outcome.error_class == "provider-error"
    assert "unreadable claude output" in outcome.error_message and "line 2" in outcome.error_message


async def test_an_executable_that_vanished_is_provider_unavailable(tmp_path: Path) -> None:
    outcome = await ClaudeProvider(str(tmp_path / "gone")).invoke(fake_request(tmp_path, RUN))
    assert outcome.error_class == "provider-unavailable"


# ---- recording ------------------------------------------------------------------------------------


def _cassette_path(suite_root: Path, provider: str = "claude") -> Path:
    return suite_root / f"cassettes/{provider}/default/prompt/hello-prompt/none/trial-1.jsonl"


async def test_record_writes_a_cassette_that_replays_to_the_same_trace(
    tmp_path: Path, suite_root: Path
) -> None:
    cassette = _cassette_path(suite_root)
    lines = [*RUN[:-1], result(result=f"key is {'sk-live-abcdef123'}")]
    req = fake_request(
        tmp_path,
        lines,
        lane="prompt",
        record_path=str(cassette),
        env_extra={"ANTHROPIC_API_KEY": "sk-live-abcdef123"},
    )
    live = await ClaudeProvider(str(fake_cli(tmp_path / "bin", "claude"))).invoke(req)
    assert live.ok and live.cassette == str(cassette)
    meta = read_cassette(cassette)
    assert (meta.provider, meta.model, meta.format, meta.error_class) == (
        "claude",
        "default",
        "claude-stream-json",
        None,
    )
    body = cassette.read_text()
    assert "sk-live-abcdef123" not in body and REDACTED in body
    replayed = await ReplayProvider(suite_root).invoke(fake_request(tmp_path / "again", [], lane="prompt"))
    assert replayed.ok, replayed.error_message
    # The same trace, except for the credential the agent echoed: the cassette never held it.
    assert replayed.trace == msgspec.structs.replace(live.trace, final_text=f"key is {REDACTED}")


async def test_a_failed_run_is_recorded_as_failed_and_replays_as_failed(
    tmp_path: Path, suite_root: Path
) -> None:
    cassette = _cassette_path(suite_root)
    lines = [init([]), result(is_error=True, api_error_status=401, result="Invalid API key")]
    live = await _invoke(
        tmp_path, lines, lane="prompt", record_path=str(cassette), env_extra={"FAKE_EXIT": "1"}
    )
    assert live.error_class == "provider-error"
    meta = read_cassette(cassette)
    assert meta.error_class == "provider-error" and meta.error_message == live.error_message
    replayed = await ReplayProvider(suite_root).invoke(fake_request(tmp_path / "again", [], lane="prompt"))
    assert replayed.error_class == "provider-error"
    assert live.error_message in (replayed.error_message or "")


async def test_tool_results_feed_the_trace_in_call_order(tmp_path: Path) -> None:
    lines = [
        assistant(tool_use("a", "Bash", command="echo 1"), tool_use("b", "Bash", command="echo 2")),
        tool_result("b", "2"),
        tool_result("a", "1"),
        result(),
    ]
    outcome = await _invoke(tmp_path, lines)
    assert [(c.command, c.output) for c in outcome.trace.tool_calls] == [("echo 1", "1"), ("echo 2", "2")]
