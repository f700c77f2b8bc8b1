"""Tests for skillgym.providers.gemini: argv against the pinned CLI's help, env, settings, failure classes.

The fake executable of the Claude provider's tests stands in for ``gemini``, printing streams recorded
from Gemini CLI 0.61.0 itself (``data/gemini``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from skillgym.plugins import PROVIDERS
from skillgym.providers import make_provider
from skillgym.providers.agent_cli import MAX_ARGV_PROMPT
from skillgym.providers.cassette import read_cassette
from skillgym.providers.gemini import (
    GEMINI_FIXED_ENV,
    MAX_ATTEMPTS,
    GeminiProvider,
    gemini_argv,
    gemini_settings,
    write_gemini_settings,
)
from skillgym.providers.replay import ReplayProvider
from skillgym.redact import REDACTED

from .support import request
from .test_claude_provider import fake_cli, fake_log, fake_request
from .test_gemini_stream import DATA, line, recorded

pytestmark = pytest.mark.anyio

HELP = (DATA / "help.txt").read_text()  # `gemini --help` of the pinned 0.61.0


# ---- argv against the real CLI's flags -------------------------------------------------------------


def test_argv_is_a_list_with_the_prompt_and_model(tmp_path: Path) -> None:
    argv, stdin = gemini_argv("/opt/gemini", request(tmp_path, prompt="Fix it", model="gemini-2.5-pro"))
    assert argv == [
        "/opt/gemini",
        "-p",
        "Fix it",
        "--output-format",
        "stream-json",
        "--approval-mode",
        "yolo",
        "--skip-trust",
        "--debug",
        "--model",
        "gemini-2.5-pro",
    ]
    assert stdin is None
    argv, _ = gemini_argv("gemini", request(tmp_path, prompt="Fix it", max_turns=3))
    assert "--model" not in argv
    assert not any("turn" in arg for arg in argv)  # the turn limit is a setting, not a flag


@pytest.mark.parametrize("prompt", ["--help me", "x" * (MAX_ARGV_PROMPT + 1)])
def test_a_prompt_argv_cannot_carry_goes_on_stdin_with_an_empty_p(tmp_path: Path, prompt: str) -> None:
    argv, stdin = gemini_argv("gemini", request(tmp_path, prompt=prompt))
    assert prompt not in argv
    assert argv[:3] == ["gemini", "-p", ""]
    assert stdin == prompt.encode()


def _help_option(flag: str) -> str:
    """The help line of ``flag`` (``--model`` or ``-p``), which must be there."""
    for text in HELP.splitlines():
        if re.search(rf"(^|[\s,]){re.escape(flag)}(\s|,|$)", text.strip()):
            return text
    raise AssertionError(f"{flag} is not in the recorded `gemini --help`")


def test_every_flag_the_provider_passes_is_in_the_pinned_cli_s_help(tmp_path: Path) -> None:
    assert "-p/--prompt for non-interactive (headless) mode" in HELP
    argv, _ = gemini_argv("gemini", request(tmp_path, prompt="hi", model="m"))
    flags = [arg for arg in argv[1:] if arg.startswith("-")]
    assert flags == ["-p", "--output-format", "--approval-mode", "--skip-trust", "--debug", "--model"]
    for flag in flags:
        _help_option(flag)
    # The values given are among the choices the help lists.
    assert '"stream-json"' in _help_option("--output-format")
    assert '"yolo"' in _help_option("--approval-mode")
    assert "Run in non-interactive (headless) mode" in _help_option("-p")


# ---- the provider, its env and its settings ----------------------------------------------------------


def test_the_provider_declares_its_skill_dir_home_and_credentials() -> None:
    provider = GeminiProvider("gemini")
    assert PROVIDERS.get("gemini") is GeminiProvider
    assert provider.skill_dirs == (".gemini/skills",)
    assert provider.runs_agent is True
    assert provider.stream_format == "gemini-stream-json"
    assert set(provider.passthrough_env) == {"GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"}
    assert provider.credentials == ("GEMINI_API_KEY",)
    assert dict(provider.home_env) == {"GEMINI_CLI_HOME": ""}


def test_make_provider_builds_it_with_the_executable_from_the_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLGYM_GEMINI", "/opt/gemini")
    built = make_provider("gemini", suite_root=tmp_path)
    assert isinstance(built, GeminiProvider) and built.executable == "/opt/gemini"
    monkeypatch.delenv("SKILLGYM_GEMINI")
    assert GeminiProvider().executable == "gemini"


def test_env_runs_one_process_and_keeps_the_harness_variables(tmp_path: Path) -> None:
    env = {"HOME": "/trial/home", "GEMINI_CLI_HOME": "/trial/home", "GEMINI_API_KEY": "k"}
    merged = GeminiProvider("gemini").env(request(tmp_path, env=env))
    assert merged == {**env, **GEMINI_FIXED_ENV}
    assert merged["GEMINI_CLI_NO_RELAUNCH"] == "true"


def test_the_settings_pick_api_key_auth_bound_retries_and_send_nothing_else() -> None:
    settings = gemini_settings(max_turns=None)
    assert settings == {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {
            "maxAttempts": MAX_ATTEMPTS,
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
        },
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    assert gemini_settings(max_turns=4)["model"] == {"maxSessionTurns": 4}


def test_write_gemini_settings_puts_them_where_the_cli_reads_them(tmp_path: Path) -> None:
    path = write_gemini_settings(str(tmp_path), max_turns=2)
    assert path == str(tmp_path / ".gemini/settings.json")
    assert json.loads(Path(path).read_text()) == gemini_settings(max_turns=2)


# ---- detection -------------------------------------------------------------------------------------


async def test_detect_reports_the_version_when_the_key_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-123456")
    detection = await GeminiProvider(str(fake_cli(tmp_path, "gemini", version="0.61.0"))).detect()
    assert detection.available, detection.problem
    assert detection.version == "0.61.0"


async def test_detect_without_a_key_says_which_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    detection = await GeminiProvider(str(fake_cli(tmp_path, "gemini", version="0.61.0"))).detect()
    assert not detection.available
    assert detection.problem is not None and "set GEMINI_API_KEY" in detection.problem
    assert "private home" in detection.problem


async def test_a_missing_cli_says_how_to_install_it(tmp_path: Path) -> None:
    detection = await GeminiProvider(str(tmp_path / "nowhere/gemini")).detect()
    assert detection.problem is not None
    assert "npm install -g @google/gemini-cli" in detection.problem and "SKILLGYM_GEMINI" in detection.problem


# ---- invocation and failure classes -----------------------------------------------------------------


def _request(tmp_path: Path, lines: Sequence[bytes], **overrides: Any) -> Any:
    home = tmp_path / "trial/home"
    extra = {"GEMINI_CLI_HOME": str(home), **overrides.pop("env_extra", {})}
    return fake_request(tmp_path, lines, env_extra=extra, **overrides)


async def _invoke(tmp_path: Path, lines: Sequence[bytes], **overrides: Any) -> Any:
    fake = fake_cli(tmp_path / "bin", "gemini", version="0.61.0")
    return await GeminiProvider(str(fake)).invoke(_request(tmp_path, lines, **overrides))


async def test_a_run_writes_its_settings_and_is_parsed_live(tmp_path: Path) -> None:
    req = _request(tmp_path, recorded("tools"), model="gemini-2.5-flash", max_turns=5, prompt="Greet them")
    outcome = await GeminiProvider(str(fake_cli(tmp_path / "bin", "gemini"))).invoke(req)
    assert outcome.ok, outcome.error_message
    assert outcome.trace.final_text == "HELLO, new colleague!"
    assert outcome.model == "gemini-2.5-flash" and outcome.exit_code == 0
    assert [s.source for s in outcome.trace.skills] == ["skill-tool", "read-skill-md"]
    logged = fake_log(tmp_path)
    assert logged["argv"][:2] == ["-p", "Greet them"]
    assert logged["cwd"] == req.workspace
    assert logged["env"]["GEMINI_CLI_NO_RELAUNCH"] == "true"
    settings = json.loads((tmp_path / "trial/home/.gemini/settings.json").read_text())
    assert settings["model"] == {"maxSessionTurns": 5}


async def test_a_trial_env_without_its_home_is_an_environment_error(tmp_path: Path) -> None:
    fake = fake_cli(tmp_path / "bin", "gemini")
    outcome = await GeminiProvider(str(fake)).invoke(fake_request(tmp_path, recorded("answer")))
    assert outcome.error_class == "environment-error"
    assert "no GEMINI_CLI_HOME" in (outcome.error_message or "")
    assert not (tmp_path / "fake-log.json").exists()  # the CLI never ran


def _result_error(message: str, kind: str = "unknown") -> bytes:
    return line(type="result", status="error", error={"type": kind, "message": message}, stats={})


@pytest.mark.parametrize(
    ("lines", "exit_code", "expected"),
    [
        (
            recorded("auth-401"),
            145,
            "gemini could not authenticate (HTTP 401): [API Error: "
            '{"error":{"code":401,"message":"API key not valid. Please pass a valid API key.",'
            '"status":"UNAUTHENTICATED"}}]; check GEMINI_API_KEY',
        ),
        (
            [
                _result_error(
                    '[API Error: {"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}]'
                )
            ],
            147,
            "gemini could not authenticate (HTTP 403)",
        ),
        (
            recorded("model-404"),
            1,
            "unknown model 'gemini-9' (HTTP 404): [API Error: models/gemini-2.5-flash is not found for API "
            "version v1beta",
        ),
        (
            recorded("turn-limit"),
            53,
            "gemini reached its turn limit (max_turns 1: model requests in the session) without finishing",
        ),
        (
            [_result_error('[API Error: {"error":{"code":500,"message":"boom","status":"INTERNAL"}}]')],
            244,
            f"gemini's API request failed with HTTP 500 (after up to {MAX_ATTEMPTS} attempts): ",
        ),
        (
            [_result_error("Error executing tool write_file: no space", "FatalToolExecutionError")],
            54,
            "gemini reported an error (FatalToolExecutionError): Error executing tool write_file: no space",
        ),
        (recorded("answer")[:2], 0, "gemini exited 0 without a result line, so no turn was taken"),
        (recorded("answer")[:2], 41, "gemini exited with code 41 without a result line: it broke"),
        (recorded("answer"), 3, "gemini exited with code 3 after reporting success: it broke"),
    ],
)
async def test_failures_are_provider_errors_that_say_what_to_fix(
    tmp_path: Path, lines: list[bytes], exit_code: int, expected: str
) -> None:
    outcome = await _invoke(
        tmp_path,
        lines,
        model="gemini-9",
        max_turns=1,
        env_extra={"FAKE_EXIT": str(exit_code), "FAKE_STDERR": "it broke"},
    )
    assert not outcome.ok
    assert outcome.error_class == "provider-error"
    assert expected in (outcome.error_message or "")


async def test_running_past_the_budget_is_a_timeout_and_keeps_the_partial_trace(tmp_path: Path) -> None:
    lines = recorded("tools")[:5]  # ends with a shell call still running
    outcome = await _invoke(tmp_path, lines, timeout_s=1.0, env_extra={"FAKE_SLEEP": "60"})
    assert outcome.error_class == "timeout"
    assert "gemini ran past the case budget of 1s" in (outcome.error_message or "")
    assert outcome.trace.tool_calls[-1].command == "echo hello > out.txt && cat out.txt"


async def test_printing_nothing_within_the_budget_is_a_provider_that_never_answered(tmp_path: Path) -> None:
    outcome = await _invoke(tmp_path, [], timeout_s=1.0, env_extra={"FAKE_SLEEP": "60"})
    assert outcome.error_class == "provider-unavailable"
    assert "gemini printed nothing within the case budget of 1s: the provider never answered" in (
        outcome.error_message or ""
    )


async def test_warning_lines_are_result_warnings(tmp_path: Path) -> None:
    warned = line(type="error", severity="warning", message="Agent execution blocked: policy")
    lines = recorded("answer")
    outcome = await _invoke(tmp_path, [*lines[:-1], warned, lines[-1]])
    assert outcome.ok, outcome.error_message
    assert outcome.warnings == ("gemini: Agent execution blocked: policy",)


# ---- recording ------------------------------------------------------------------------------------


async def test_record_writes_a_cassette_that_replays_to_the_same_trace(
    tmp_path: Path, suite_root: Path
) -> None:
    cassette = suite_root / "cassettes/gemini/gemini-2.5-flash/execution/hello-prompt/none/trial-1.jsonl"
    secret = "AIza-live-abcdef123"
    answer = recorded("answer")
    echoed = line(type="message", role="assistant", content=f"key is {secret}", delta=True)
    req = _request(
        tmp_path,
        [*answer[:-1], echoed, answer[-1]],
        model="gemini-2.5-flash",
        record_path=str(cassette),
        env_extra={"GEMINI_API_KEY": secret},
    )
    live = await GeminiProvider(str(fake_cli(tmp_path / "bin", "gemini"))).invoke(req)
    assert live.ok and live.cassette == str(cassette)
    meta = read_cassette(cassette)
    assert (meta.provider, meta.model, meta.format, meta.error_class) == (
        "gemini",
        "gemini-2.5-flash",
        "gemini-stream-json",
        None,
    )
    body = cassette.read_text()
    assert secret not in body and REDACTED in body
    replayed = await ReplayProvider(suite_root).invoke(_request(tmp_path / "again", []))
    assert replayed.ok, replayed.error_message
    assert replayed.trace.usage == live.trace.usage
    assert replayed.trace.final_text == f"Hello, team!key is {REDACTED}"
    assert live.trace.final_text == f"Hello, team!key is {secret}"
