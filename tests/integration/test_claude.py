"""Claude Code itself (the pinned npm release), headless through `skillgym run`, against a scripted server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from .model_server import Fail, ModelServer, Say, Shell, UseTool
from .support import (
    ANTHROPIC_KEY,
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

MODEL = "claude-scripted"


@pytest.fixture
def env(claude_cli: Path, model_server: ModelServer) -> dict[str, str]:
    return agent_env(
        SKILLGYM_CLAUDE=str(claude_cli), ANTHROPIC_BASE_URL=model_server.url, ANTHROPIC_API_KEY=ANTHROPIC_KEY
    )


def _run(tmp_path: Path, env: dict[str, str], case: str, condition: str = "none", *more: str) -> Path:
    suite = write_integration_suite(tmp_path)
    output = tmp_path / "runs"
    done = run(
        suite, output, env, provider="claude", case=case, condition=condition, more=("--model", MODEL, *more)
    )
    assert done.returncode in (0, 1), done.stderr
    return output


def test_a_plain_answer_passes_with_the_cli_s_own_trace(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Say(text="Hello, team!")])
    result, trace, _ = only_trial(_run(tmp_path, env, "plain"))
    assert result["status"] == "passed", result
    assert trace["final_text"] == "Hello, team!"
    assert trace["model"] == MODEL and trace["num_turns"] == 1
    (request,) = model_server.requests
    assert request.body["model"] == MODEL
    assert "Say hello to the team" in json.dumps(request.body["messages"])
    assert request.headers.get("x-api-key") == ANTHROPIC_KEY


def test_a_shell_call_really_runs_in_the_workspace_and_is_answered(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Shell(command="echo hello > out.txt && cat out.txt"), Say(text="Wrote out.txt")])
    output = _run(tmp_path, env, "make-file")
    result, trace, _trial_dir = only_trial(output)
    assert result["status"] == "passed", result
    (call,) = trace["tool_calls"]
    assert call["name"] == "Bash"
    assert call["command"] == "echo hello > out.txt && cat out.txt"
    assert call["output"] == "hello" and call["exit_code"] == 0
    # The CLI sent the command's real output back to the model as the tool result.
    assert "hello" in json.dumps(model_server.requests[1].body["messages"][-1])
    assert trace["final_text"] == "Wrote out.txt"
    assert leaked(ANTHROPIC_KEY, output) == []


def test_a_self_loaded_skill_is_found_at_its_native_path_and_absent_under_none(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    script = [UseTool(name="Skill", input={"skill": "greeter"}), Say(text="HELLO, new colleague!")]
    model_server.script(script)
    loaded, trace, trial_dir = only_trial(
        _run(tmp_path / "self", env, "greet", "self-load", "--keep-workspaces")
    )
    assert (trial_dir / "workspace/.claude/skills/greeter/SKILL.md").is_file()
    assert "greeter" in json.dumps(model_server.requests[0].body)  # listed to the model by the CLI itself
    assert {
        "skill": "greeter",
        "source": "skill-tool",
        "confidence": "high",
        "detail": "Skill tool call",
    } in trace["skills"]
    assert any(s["skill"] == "greeter" and s["source"] == "init-listed" for s in trace["skills"])
    assert loaded["status"] == "passed", loaded
    assert loaded["grade"]["selected_skills"] == ["greeter"]

    model_server.script(script)
    baseline, trace, trial_dir = only_trial(
        _run(tmp_path / "none", env, "greet", "none", "--keep-workspaces")
    )
    assert not (trial_dir / "workspace/.claude/skills").exists()
    assert "greeter" not in json.dumps(model_server.requests[0].body)
    assert [s for s in trace["skills"] if s["skill"] == "greeter"] == []
    assert baseline["status"] == "failed"
    assert baseline["grade"]["selected_skills"] == []


def test_an_http_error_is_a_provider_error_not_a_failed_task(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Fail(status=401, message="invalid x-api-key", kind="authentication_error")] * 3)
    result, trace, _ = only_trial(_run(tmp_path, env, "plain"))
    assert result["status"] == "errored"
    assert result["error_class"] == "provider-error"
    assert f"could not authenticate to {model_server.url} (HTTP 401)" in result["error_message"]
    assert "ANTHROPIC_API_KEY" in result["error_message"]  # says what to fix
    assert trace["is_error"] is True
    # Retries are bounded (CLAUDE_CODE_MAX_RETRIES=2), so a bad key costs seconds, not the whole budget.
    assert len(model_server.requests) == 3


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (500, "the scripted server broke", "api_error"),
        (429, "Number of request tokens has exceeded your per-minute rate limit", "rate_limit_error"),
    ],
)
def test_an_api_failure_names_its_http_status_and_the_endpoint(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer, status: int, message: str, kind: str
) -> None:
    model_server.script([Fail(status=status, message=message, kind=kind)] * 3)
    result, _, _ = only_trial(_run(tmp_path, env, "plain"))
    assert (result["status"], result["error_class"]) == ("errored", "provider-error")
    expected = f"claude's API request to {model_server.url} failed with HTTP {status} after 2 retries: "
    assert result["error_message"].startswith(expected), result["error_message"]
    assert message in result["error_message"]


def test_a_dead_endpoint_is_a_provider_error_within_seconds(tmp_path: Path, env: dict[str, str]) -> None:
    endpoint = dead_endpoint()
    started = time.monotonic()
    result, _, _ = only_trial(_run(tmp_path, {**env, "ANTHROPIC_BASE_URL": endpoint}, "plain"))
    took = time.monotonic() - started
    assert (result["status"], result["error_class"]) == ("errored", "provider-error"), result
    assert result["error_message"].startswith(f"claude could not connect to {endpoint} after 2 retries: ")
    assert "ECONNREFUSED" in result["error_message"]
    assert result["duration_s"] < 15, result["duration_s"]
    assert took < 30, took
    print(f"dead endpoint: trial {result['duration_s']:.1f}s, whole run {took:.1f}s")


def test_token_usage_counts_each_token_once_as_for_every_provider(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    first, second = SCRIPTED_USAGE
    model_server.script([Shell(command="echo hello > out.txt", usage=first), Say(text="Done", usage=second)])
    result, _trace, trial_dir = only_trial(_run(tmp_path, env, "make-file"))
    assert result["status"] == "passed", result
    # Exactly the CLI's result line; the Messages API reports no thinking count apart here.
    expected = {**RECORDED_USAGE, "reasoning": 0}
    assert result["usage"] == expected
    written = json.loads((trial_dir / "token-usage.json").read_text())
    assert {key: written[key] for key in expected} == expected


def test_the_turn_limit_is_the_cli_s_own_and_runs_the_last_turn_s_tool_call(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script(
        [Shell(command="echo hello > out.txt"), Shell(command="touch second-call-ran"), Say(text="ok")]
    )
    result, trace, trial_dir = only_trial(_run(tmp_path, env, "short-leash", "none", "--keep-workspaces"))
    assert (result["status"], result["error_class"]) == ("errored", "provider-error")
    assert "turn limit (--max-turns 1)" in result["error_message"]
    # The one allowed turn's tool call ran; the model was not asked for a second turn.
    assert [c["command"] for c in trace["tool_calls"]] == ["echo hello > out.txt"]
    assert (trial_dir / "workspace/out.txt").is_file()
    assert not (trial_dir / "workspace/second-call-ran").exists()
    assert len(model_server.requests) == 1


def test_record_then_replay_gives_the_same_graded_result(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Shell(command="echo hello > out.txt && cat out.txt"), Say(text="Wrote out.txt")])
    suite = write_integration_suite(tmp_path)
    live = run(
        suite,
        tmp_path / "live",
        env,
        provider="claude",
        case="make-file",
        condition="none",
        more=("--model", MODEL, "--record"),
    )
    assert live.returncode == 0, live.stderr
    recorded, recorded_trace, _ = only_trial(tmp_path / "live")
    cassette = suite / "cassettes/claude" / MODEL / "execution/make-file/none/trial-1.jsonl"
    assert json.loads(cassette.read_text().splitlines()[0])["format"] == "claude-stream-json"
    assert leaked(ANTHROPIC_KEY, suite / "cassettes") == []

    replay = run(suite, tmp_path / "replayed", env, provider="replay", case="make-file", condition="none")
    assert replay.returncode == 0, replay.stderr
    replayed, replayed_trace, _ = only_trial(tmp_path / "replayed")
    assert replayed["status"] == recorded["status"] == "passed"
    assert replayed["grade"] == recorded["grade"]
    assert replayed["usage"] == recorded["usage"]
    # Replay re-ran the command in a fresh workspace: same calls, with that run's own output.
    assert [c["command"] for c in replayed_trace.pop("tool_calls")] == [
        c["command"] for c in recorded_trace.pop("tool_calls")
    ]
    assert replayed_trace == recorded_trace
    assert len(model_server.requests) == 2  # the replay asked the model nothing
