"""Codex itself (the pinned npm release), headless through `skillgym run`, against a scripted server."""

from __future__ import annotations

import json
import time
import tomllib
from pathlib import Path

import pytest

from .model_server import Fail, ModelServer, Say, Shell
from .support import (
    OPENAI_KEY,
    RECORDED_USAGE,
    SCRIPTED_USAGE,
    agent_env,
    dead_endpoint,
    leaked,
    only_trial,
    run,
    write_integration_suite,
)

pytestmark = pytest.mark.integration

MODEL = "gpt-scripted"
READ_SKILL = "cat .agents/skills/greeter/SKILL.md"


@pytest.fixture
def env(codex_cli: Path, model_server: ModelServer) -> dict[str, str]:
    return agent_env(
        SKILLGYM_CODEX=str(codex_cli),
        SKILLGYM_CODEX_BASE_URL=f"{model_server.url}/v1",
        OPENAI_API_KEY=OPENAI_KEY,
    )


def _run(tmp_path: Path, env: dict[str, str], case: str, condition: str = "none", *more: str) -> Path:
    suite = write_integration_suite(tmp_path)
    output = tmp_path / "runs"
    done = run(
        suite, output, env, provider="codex", case=case, condition=condition, more=("--model", MODEL, *more)
    )
    assert done.returncode in (0, 1), done.stderr
    return output


def _developer_text(body: dict[str, object]) -> str:
    items = body.get("input")
    assert isinstance(items, list)
    return json.dumps([i for i in items if isinstance(i, dict) and i.get("role") == "developer"])


def test_a_plain_answer_passes_with_the_cli_s_own_trace(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Say(text="Hello, team!")])
    result, trace, _ = only_trial(_run(tmp_path, env, "plain"))
    assert result["status"] == "passed", result
    assert trace["final_text"] == "Hello, team!"
    assert trace["num_turns"] == 1 and trace["session_id"]
    assert result["model"] == MODEL
    # The CLI does not know the scripted model: a warning on the result, not a failure.
    assert any("Model metadata" in w for w in result["warnings"])
    (request,) = model_server.requests
    assert request.path == "/v1/responses"
    assert request.body["model"] == MODEL
    assert "Say hello to the team" in json.dumps(request.body["input"])
    assert request.headers.get("authorization") == f"Bearer {OPENAI_KEY}"


def test_a_shell_call_really_runs_in_the_workspace_and_is_answered(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Shell(command="echo hello > out.txt && cat out.txt"), Say(text="Wrote out.txt")])
    output = _run(tmp_path, env, "make-file", "none", "--keep-workspaces")
    result, trace, trial_dir = only_trial(output)
    assert result["status"] == "passed", result
    (call,) = trace["tool_calls"]
    assert call["name"] == "shell"
    assert call["command"] == "echo hello > out.txt && cat out.txt"  # unwrapped from `bash -lc '...'`
    assert call["output"] == "hello\n" and call["exit_code"] == 0
    assert "hello" in json.dumps(model_server.requests[1].body["input"][-1])
    assert trace["final_text"] == "Wrote out.txt"
    config = tomllib.loads((trial_dir / "home/.codex/config.toml").read_text())
    provider = config["model_providers"][config["model_provider"]]
    assert provider["base_url"] == f"{model_server.url}/v1"
    assert provider["env_key"] == "OPENAI_API_KEY"
    assert provider["wire_api"] == "responses"
    assert leaked(OPENAI_KEY, output) == []


def test_a_self_loaded_skill_is_found_at_its_native_path_and_absent_under_none(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    script = [Shell(command=READ_SKILL), Say(text="HELLO, new colleague!")]
    model_server.script(script)
    loaded, trace, trial_dir = only_trial(
        _run(tmp_path / "self", env, "greet", "self-load", "--keep-workspaces")
    )
    assert (trial_dir / "workspace/.agents/skills/greeter/SKILL.md").is_file()
    assert "greeter" in _developer_text(model_server.requests[0].body)  # listed to the model by the CLI
    (evidence,) = [s for s in trace["skills"] if s["skill"] == "greeter"]
    assert (evidence["source"], evidence["confidence"]) == ("read-skill-md", "high")
    assert loaded["status"] == "passed", loaded
    assert loaded["grade"]["selected_skills"] == ["greeter"]

    model_server.script(script)
    baseline, trace, trial_dir = only_trial(
        _run(tmp_path / "none", env, "greet", "none", "--keep-workspaces")
    )
    assert not (trial_dir / "workspace/.agents/skills").exists()
    assert "greeter" not in _developer_text(model_server.requests[0].body)
    assert trace["tool_calls"][0]["exit_code"] != 0  # nothing to read there
    assert [s for s in trace["skills"] if s["skill"] == "greeter"] == []
    assert baseline["status"] == "failed"
    assert baseline["grade"]["selected_skills"] == []


def test_an_http_error_is_a_provider_error_not_a_failed_task(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Fail(status=401, message="Incorrect API key provided")] * 3)
    result, trace, _ = only_trial(_run(tmp_path, env, "plain"))
    assert result["status"] == "errored"
    assert result["error_class"] == "provider-error"
    assert "codex could not authenticate" in result["error_message"]
    assert "Incorrect API key provided" in result["error_message"]
    assert trace["is_error"] is True
    assert 1 <= len(model_server.requests) <= 3  # retries are bounded


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (500, "the scripted server broke", "server_error"),
        (429, "Rate limit reached for requests", "rate_limit_exceeded"),
    ],
)
def test_an_api_failure_names_its_http_status_and_the_endpoint(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer, status: int, message: str, kind: str
) -> None:
    model_server.script([Fail(status=status, message=message, kind=kind)] * 12)
    result, _, _ = only_trial(_run(tmp_path, env, "plain"))
    assert (result["status"], result["error_class"]) == ("errored", "provider-error")
    assert (
        f"codex's API request to {model_server.url}/v1 failed with HTTP {status}" in result["error_message"]
    )


def test_a_dead_endpoint_is_a_provider_error_within_seconds(tmp_path: Path, env: dict[str, str]) -> None:
    endpoint = f"{dead_endpoint()}/v1"
    started = time.monotonic()
    result, _, _ = only_trial(_run(tmp_path, {**env, "SKILLGYM_CODEX_BASE_URL": endpoint}, "plain"))
    took = time.monotonic() - started
    assert (result["status"], result["error_class"]) == ("errored", "provider-error"), result
    assert result["error_message"].startswith(f"codex could not connect to {endpoint} after 2 retries: ")
    # Codex would retry a refused connection until the case budget (120 s) ran out without its config.
    assert result["duration_s"] < 15, result["duration_s"]
    assert took < 30, took
    print(f"dead endpoint: trial {result['duration_s']:.1f}s, whole run {took:.1f}s")


def test_an_unknown_model_is_named_as_such(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Fail(status=400, message=f"The model `{MODEL}` does not exist")] * 3)
    result, _, _ = only_trial(_run(tmp_path, env, "plain"))
    assert result["error_class"] == "provider-error"
    assert result["error_message"].startswith(f"unknown model '{MODEL}'")


def test_token_usage_counts_each_token_once_as_for_every_provider(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    first, second = SCRIPTED_USAGE
    model_server.script([Shell(command="echo hello > out.txt", usage=first), Say(text="Done", usage=second)])
    result, _, trial_dir = only_trial(_run(tmp_path, env, "make-file"))
    assert result["status"] == "passed", result
    # The Responses API counts cache reads and writes inside input_tokens; both come out of input here.
    expected = {**RECORDED_USAGE, "reasoning": 25}
    assert result["usage"] == expected
    written = json.loads((trial_dir / "token-usage.json").read_text())
    assert {key: written[key] for key in expected} == expected


def test_the_turn_limit_stops_codex_before_its_next_tool_call_runs(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script(
        [Shell(command="echo hello > out.txt"), Shell(command="touch second-call-ran"), Say(text="ok")]
    )
    result, trace, trial_dir = only_trial(_run(tmp_path, env, "short-leash", "none", "--keep-workspaces"))
    # One command ran, as under Claude's --max-turns 1; the model's second never started.
    assert not (trial_dir / "workspace/second-call-ran").exists()
    assert (trial_dir / "workspace/out.txt").is_file()
    assert [c["command"] for c in trace["tool_calls"]] == ["echo hello > out.txt"]
    assert (result["status"], result["error_class"]) == ("errored", "provider-error")
    assert (
        "turn limit (max_turns 1, counted in tool calls): its tool call 1 finished" in result["error_message"]
    )


def test_record_then_replay_gives_the_same_graded_result(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Shell(command="echo hello > out.txt && cat out.txt"), Say(text="Wrote out.txt")])
    suite = write_integration_suite(tmp_path)
    live = run(
        suite,
        tmp_path / "live",
        env,
        provider="codex",
        case="make-file",
        condition="none",
        more=("--model", MODEL, "--record"),
    )
    assert live.returncode == 0, live.stderr
    recorded, recorded_trace, _ = only_trial(tmp_path / "live")
    cassette = suite / "cassettes/codex" / MODEL / "execution/make-file/none/trial-1.jsonl"
    assert json.loads(cassette.read_text().splitlines()[0])["format"] == "codex-json"
    assert leaked(OPENAI_KEY, suite / "cassettes") == []

    replay = run(suite, tmp_path / "replayed", env, provider="replay", case="make-file", condition="none")
    assert replay.returncode == 0, replay.stderr
    replayed, replayed_trace, _ = only_trial(tmp_path / "replayed")
    assert replayed["status"] == recorded["status"] == "passed"
    assert replayed["grade"] == recorded["grade"]
    assert replayed["usage"] == recorded["usage"]
    assert replayed_trace == recorded_trace  # the re-run command printed exactly what it printed live
    assert len(model_server.requests) == 2
