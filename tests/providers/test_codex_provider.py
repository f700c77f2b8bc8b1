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
from skillgym.providers.codex import (
    DEFAULT_BASE_URL,
    codex_argv,
    codex_config,
    error_message,
    http_status,
    turn_limit_reason,
    write_codex_config,
)
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


def test_judge_mode_turns_off_the_tools_that_act(tmp_path: Path) -> None:
    req = request(tmp_path, prompt="Grade it", text_only=True)
    argv, _ = codex_argv("codex", req)
    disabled = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--disable"]
    assert disabled == ["shell_tool", "unified_exec", "view_image", "multi_agent", "goals"]
    assert argv[argv.index("--sandbox") + 1] == "read-only" and 'web_search="disabled"' in argv
    assert argv[-3:] == ["-C", req.workspace, "Grade it"]
    assert "--disable" not in codex_argv("codex", request(tmp_path, prompt="Fix it"))[0]


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
    # Without this codex retries a refused connection for ever, whatever the bounds above say.
    assert config["features"] == {"plugins": False, "unbounded_connection_retries": False}
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


ENDPOINT = "http://127.0.0.1:9/v1"
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
            "codex turn failed at http://127.0.0.1:9/v1: stream disconnected",
        ),
        ([*THREAD, turn_completed(1, 0, 1)], 2, "codex exited with code 2: it broke"),
        (THREAD, 0, "codex exited 0 without completing a turn"),
    ],
)
async def test_infrastructure_failures_are_provider_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[bytes], exit_code: int, expected: str
) -> None:
    monkeypatch.delenv("SKILLGYM_CODEX_BASE_URL", raising=False)
    env = {"FAKE_EXIT": str(exit_code), "FAKE_STDERR": "it broke", "OPENAI_BASE_URL": ENDPOINT}
    outcome = await _invoke(tmp_path, lines, model="gpt-nope", env_extra=env)
    assert outcome.error_class == "provider-error"
    assert expected in outcome.error_message


# What codex 0.171 prints, retries first, when its endpoint answers 500 or 429 or is not there at all.
HIGH_DEMAND = "We\u2019re currently experiencing high demand, which may cause temporary errors."
RATE_LIMITED = "exceeded retry limit, last status: 429 Too Many Requests"
REFUSED = "Connection failed: error sending request"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            HIGH_DEMAND,
            f"codex's API request to {ENDPOINT} failed with HTTP 500 after 2 retries: {HIGH_DEMAND}",
        ),
        (
            RATE_LIMITED,
            f"codex's API request to {ENDPOINT} failed with HTTP 429 after 2 retries: {RATE_LIMITED}",
        ),
        (
            REFUSED,
            f"codex could not connect to {ENDPOINT} after 2 retries: {REFUSED}; check that the endpoint",
        ),
    ],
)
async def test_an_api_failure_names_its_http_status_and_the_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, message: str, expected: str
) -> None:
    monkeypatch.delenv("SKILLGYM_CODEX_BASE_URL", raising=False)
    retries = [line("error", message=f"Reconnecting... {n}/2 ({message})") for n in (1, 2)]
    lines = [
        *THREAD,
        *retries,
        line("error", message=message),
        line("turn.failed", error={"message": message}),
    ]
    outcome = await _invoke(tmp_path, lines, env_extra={"FAKE_EXIT": "1", "OPENAI_BASE_URL": ENDPOINT})
    assert outcome.error_class == "provider-error"
    assert outcome.error_message.startswith(expected)


@pytest.mark.parametrize(
    ("message", "status"),
    [
        ("unexpected status 404 Not Found: no such route, url: http://h/v1/responses", 404),
        (RATE_LIMITED, 429),
        ("HTTP error: 503 Service Unavailable", 503),
        (HIGH_DEMAND, 500),
        (REFUSED, None),
        ("request id: req_5000abc, status unknown", None),
    ],
)
def test_the_http_status_is_read_from_each_shape_codex_prints(message: str, status: int | None) -> None:
    assert http_status(message) == status


async def test_a_run_that_recovers_after_a_retry_passes_with_the_retry_as_a_warning(tmp_path: Path) -> None:
    retry = f"Reconnecting... 1/2 ({HIGH_DEMAND})"
    lines = [
        *THREAD,
        line("error", message=retry),
        item("agent_message", "item_1", text="hi"),
        turn_completed(1, 0, 1),
    ]
    outcome = await _invoke(tmp_path, lines)
    assert outcome.ok, outcome.error_message
    assert outcome.trace.is_error is False
    assert outcome.warnings == (f"codex: {retry}",)


def test_an_unknown_model_and_a_bad_key_name_the_endpoint_too(tmp_path: Path) -> None:
    req = request(tmp_path, model="gpt-nope")
    assert error_message(MODEL_400, req, ENDPOINT).startswith(f"unknown model 'gpt-nope' at {ENDPOINT}: ")
    assert error_message(AUTH, req, ENDPOINT).startswith(
        f"codex could not authenticate to {ENDPOINT} (HTTP 401)"
    )


async def test_the_turn_budget_stops_codex_when_its_last_allowed_tool_call_finishes(tmp_path: Path) -> None:
    lines = [*THREAD, *(command(f"item_{n}", f"echo {n}") for n in range(3)), turn_completed(1, 0, 1)]
    outcome = await _invoke(tmp_path, lines, max_turns=2, env_extra={"FAKE_SLEEP": "30"})
    assert outcome.error_class == "provider-error"
    assert outcome.error_message.startswith(
        "codex reached the turn limit (max_turns 2, counted in tool calls): its tool call 2 finished, so "
        "skillgym stopped it before the model's next step"
    )
    assert [c.command for c in outcome.trace.tool_calls] == ["echo 0", "echo 1"]


@pytest.mark.parametrize(
    ("started", "finished", "limit", "expected"),
    [
        (0, 0, None, None),
        (5, 5, None, None),
        (1, 0, 1, None),  # the one allowed call is still running
        (1, 1, 1, "its tool call 1 finished"),
        (2, 1, 1, "it started tool call 2 of at most 1"),  # two calls made at once
        (2, 1, 3, None),
    ],
)
def test_the_turn_limit_counts_tool_calls(
    started: int, finished: int, limit: int | None, expected: str | None
) -> None:
    reason = turn_limit_reason(started, finished, limit)
    assert reason is None if expected is None else reason is not None and expected in reason


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
