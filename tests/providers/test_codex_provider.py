"""Tests for skillgym.providers.codex: argv, the hermetic config.toml, detection, failures, recording.

The stand-in ``codex`` executable is the same small program the Claude provider tests use.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from skillgym.providers import CodexProvider
from skillgym.providers.cassette import read_cassette
from skillgym.providers.codex import DEFAULT_BASE_URL, codex_argv, codex_config, write_codex_config
from skillgym.providers.replay import ReplayProvider

from .support import request
from .test_claude_provider import fake_cli, fake_log, fake_request
from .test_codex_stream import RUN, command, item, line, turn_completed

pytestmark = pytest.mark.anyio

THREAD = [line("thread.started", thread_id="t-1"), line("turn.started")]


def test_argv_is_a_list_with_model_workspace_and_prompt(tmp_path: Path) -> None:
    req = request(tmp_path, prompt="Fix it", model="gpt-5")
    argv, stdin = codex_argv("/opt/codex", req)
    assert argv == [
        "/opt/codex",
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--color",
        "never",
        "-m",
        "gpt-5",
        "-C",
        req.workspace,
        "Fix it",
    ]
    assert stdin is None


def test_a_prompt_that_looks_like_an_option_goes_on_stdin(tmp_path: Path) -> None:
    argv, stdin = codex_argv("codex", request(tmp_path, prompt="-rf everything"))
    assert argv[-1] == "-" and "-m" not in argv
    assert stdin == b"-rf everything"


def test_the_config_names_the_key_variable_and_turns_outside_lookups_off() -> None:
    config = codex_config(base_url="http://127.0.0.1:9/v1")
    assert config["model_provider"] == "skillgym"
    assert config["model_providers"]["skillgym"] == {
        "name": "skillgym",
        "base_url": "http://127.0.0.1:9/v1",
        "env_key": "OPENAI_API_KEY",
        "wire_api": "responses",
        "request_max_retries": 2,
        "stream_max_retries": 2,
    }
    assert config["check_for_update_on_startup"] is False
    assert config["analytics"] == {"enabled": False}
    assert config["features"] == {"plugins": False}
    assert (config["approval_policy"], config["sandbox_mode"]) == ("never", "danger-full-access")


async def test_invoke_writes_the_config_into_the_trial_home_without_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLGYM_CODEX_BASE_URL", raising=False)
    req = fake_request(
        tmp_path,
        RUN,
        env_extra={"OPENAI_API_KEY": "sk-live-abcdef123", "OPENAI_BASE_URL": "http://proxy:8/v1"},
    )
    outcome = await CodexProvider(str(fake_cli(tmp_path / "bin", "codex"))).invoke(req)
    assert outcome.ok, outcome.error_message
    written = Path(req.env["CODEX_HOME"]) / "config.toml"
    assert "sk-live-abcdef123" not in written.read_text()
    assert (
        tomllib.loads(written.read_text())["model_providers"]["skillgym"]["base_url"] == "http://proxy:8/v1"
    )
    assert fake_log(tmp_path)["env"]["OPENAI_API_KEY"] == "sk-live-abcdef123"  # the CLI reads it from env


@pytest.mark.parametrize(
    ("setting", "env_var", "trial_env", "expected"),
    [
        ("http://setting/v1", "http://var/v1", "http://trial/v1", "http://setting/v1"),
        (None, "http://var/v1", "http://trial/v1", "http://var/v1"),
        (None, None, "http://trial/v1", "http://trial/v1"),
        (None, None, None, DEFAULT_BASE_URL),
    ],
)
async def test_the_base_url_comes_from_the_first_place_that_sets_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    setting: str | None,
    env_var: str | None,
    trial_env: str | None,
    expected: str,
) -> None:
    if env_var is None:
        monkeypatch.delenv("SKILLGYM_CODEX_BASE_URL", raising=False)
    else:
        monkeypatch.setenv("SKILLGYM_CODEX_BASE_URL", env_var)
    extra = {"OPENAI_BASE_URL": trial_env} if trial_env else {}
    req = fake_request(tmp_path, RUN, env_extra=extra)
    await CodexProvider(str(fake_cli(tmp_path / "bin", "codex")), setting).invoke(req)
    config = tomllib.loads((Path(req.env["CODEX_HOME"]) / "config.toml").read_text())
    assert config["model_providers"]["skillgym"]["base_url"] == expected


def test_write_codex_config_returns_the_file(tmp_path: Path) -> None:
    path = write_codex_config(str(tmp_path), base_url="http://h/v1")
    assert path == str(tmp_path / "config.toml")
    assert tomllib.loads(Path(path).read_text())["model_provider"] == "skillgym"


def test_the_provider_declares_its_skill_dir_and_credentials() -> None:
    provider = CodexProvider("codex")
    assert provider.skill_dirs == (".agents/skills",)
    assert provider.runs_agent is True
    assert provider.passthrough_env == ("OPENAI_API_KEY", "OPENAI_BASE_URL")


async def test_a_missing_cli_is_unavailable_with_how_to_install_or_point_to_it(tmp_path: Path) -> None:
    detection = await CodexProvider(str(tmp_path / "codex")).detect()
    assert not detection.available
    assert detection.problem is not None
    assert "npm install -g @openai/codex" in detection.problem and "SKILLGYM_CODEX" in detection.problem


async def test_detect_needs_the_key_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = fake_cli(tmp_path, "codex", version="codex-cli 0.171.0")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    detection = await CodexProvider(str(fake)).detect()
    assert not detection.available and detection.version == "0.171.0"
    assert detection.problem is not None and "OPENAI_API_KEY" in detection.problem
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123456")
    detection = await CodexProvider(str(fake)).detect()
    assert detection.available and detection.version == "0.171.0"


async def _invoke(tmp_path: Path, lines: list[bytes], **overrides: Any) -> Any:
    return await CodexProvider(str(fake_cli(tmp_path / "bin", "codex"))).invoke(
        fake_request(tmp_path, lines, **overrides)
    )


async def test_a_successful_run_is_parsed_live_and_warnings_are_kept(tmp_path: Path) -> None:
    outcome = await _invoke(tmp_path, RUN, model="gpt-5")
    assert outcome.ok, outcome.error_message
    assert outcome.trace.final_text == "HELLO, done."
    assert outcome.trace.model == outcome.model == "gpt-5"
    assert outcome.warnings == (
        "codex: Model metadata for `gpt-scripted` not found. Defaulting to fallback metadata.",
    )
    assert fake_log(tmp_path)["argv"][:2] == ["exec", "--json"]


AUTH = "unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:9/v1/responses"
MODEL_400 = '{"error": {"type": "invalid_request_error", "message": "The model `gpt-nope` does not exist"}}'


@pytest.mark.parametrize(
    ("lines", "exit_code", "expected"),
    [
        (
            [*THREAD, line("error", message=AUTH), line("turn.failed", error={"message": AUTH})],
            1,
            "codex could not authenticate",
        ),
        ([*THREAD, line("turn.failed", error={"message": MODEL_400})], 1, "unknown model 'gpt-nope'"),
        (
            [
                *THREAD,
                line("turn.failed", error={"message": "unexpected status 500 Internal Server Error: x"}),
            ],
            1,
            "failed with HTTP 500",
        ),
        (
            [*THREAD, line("turn.failed", error={"message": "stream disconnected before completion"})],
            1,
            "codex turn failed: stream disconnected",
        ),
        ([*THREAD, turn_completed(1, 0, 1)], 2, "codex exited with code 2: it broke"),
        (THREAD, 0, "codex exited 0 without completing a turn"),
    ],
)
async def test_infrastructure_failures_are_provider_errors(
    tmp_path: Path, lines: list[bytes], exit_code: int, expected: str
) -> None:
    outcome = await _invoke(
        tmp_path, lines, model="gpt-nope", env_extra={"FAKE_EXIT": str(exit_code), "FAKE_STDERR": "it broke"}
    )
    assert outcome.error_class == "provider-error"
    assert expected in outcome.error_message


async def test_the_turn_budget_stops_codex_at_the_first_tool_call_past_it(tmp_path: Path) -> None:
    lines = [*THREAD, *(command(f"item_{n}", f"echo {n}") for n in range(3)), turn_completed(1, 0, 1)]
    outcome = await _invoke(tmp_path, lines, max_turns=2, env_extra={"FAKE_SLEEP": "30"})
    assert outcome.error_class == "provider-error"
    assert "turn limit (max_turns 2): it started tool call 3" in outcome.error_message
    assert [c.command for c in outcome.trace.tool_calls] == ["echo 0", "echo 1", "echo 2"]


async def test_running_past_the_budget_is_a_timeout(tmp_path: Path) -> None:
    outcome = await _invoke(tmp_path, THREAD, timeout_s=1.0, env_extra={"FAKE_SLEEP": "60"})
    assert outcome.error_class == "timeout"


async def test_a_trial_env_without_codex_home_is_refused(tmp_path: Path) -> None:
    outcome = await CodexProvider(str(fake_cli(tmp_path, "codex"))).invoke(request(tmp_path))
    assert outcome.error_class == "environment-error"
    assert "CODEX_HOME" in outcome.error_message


async def test_record_then_replay_gives_the_same_trace(tmp_path: Path, suite_root: Path) -> None:
    cassette = suite_root / "cassettes/codex/gpt-5/prompt/hello-prompt/none/trial-1.jsonl"
    lines = [*RUN, item("agent_message", "item_9", event="item.started", text="partial")]
    live = await _invoke(tmp_path, lines, lane="prompt", model="gpt-5", record_path=str(cassette))
    assert live.ok, live.error_message
    meta = read_cassette(cassette)
    assert (meta.provider, meta.model, meta.format, meta.lane) == ("codex", "gpt-5", "codex-json", "prompt")
    replayed = await ReplayProvider(suite_root).invoke(
        fake_request(tmp_path / "again", [], lane="prompt", model="gpt-5")
    )
    assert replayed.ok, replayed.error_message
    assert replayed.trace == live.trace
