"""Gemini CLI itself (the pinned npm release), headless through `skillgym run`, against a scripted server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from skillgym.providers.gemini import MAX_ATTEMPTS

from .model_server import Fail, ModelServer, Say, Shell, Usage, UseTool
from .support import GEMINI_KEY, agent_env, leaked, only_trial, run, write_integration_suite

pytestmark = pytest.mark.integration

# A model the CLI knows, so that it sends one request per turn (its default, `auto`, first asks a router).
MODEL = "gemini-2.5-flash"
STREAM_PATH = f"/v1beta/models/{MODEL}:streamGenerateContent"


@pytest.fixture
def env(gemini_cli: Path, model_server: ModelServer) -> dict[str, str]:
    return agent_env(
        SKILLGYM_GEMINI=str(gemini_cli), GOOGLE_GEMINI_BASE_URL=model_server.url, GEMINI_API_KEY=GEMINI_KEY
    )


def _run(tmp_path: Path, env: dict[str, str], case: str, condition: str = "none", *more: str) -> Path:
    suite = write_integration_suite(tmp_path)
    output = tmp_path / "runs"
    done = run(
        suite, output, env, provider="gemini", case=case, condition=condition, more=("--model", MODEL, *more)
    )
    assert done.returncode in (0, 1), done.stderr
    return output


def test_a_plain_answer_passes_with_exact_token_usage(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    usage = Usage(input=1200, output=85, cache_read=300, reasoning=20)
    model_server.script([Say(text="Hello, team!", usage=usage)])
    output = _run(tmp_path, env, "plain", "none", "--keep-workspaces")
    result, trace, trial_dir = only_trial(output)
    assert result["status"] == "passed", result
    assert trace["final_text"] == "Hello, team!"  # two deltas, one message
    assert [m["text"] for m in trace["messages"]] == ["Hello, team!"]
    assert trace["model"] == result["model"] == MODEL and trace["session_id"]
    # The CLI reports thoughts only inside its total; output holds them, as every provider's does.
    expected = {
        "input": 1200,
        "output": 105,
        "cache_read": 300,
        "cache_write": None,
        "reasoning": 20,
        "total": 1605,
    }
    assert result["usage"] == expected
    written = json.loads((trial_dir / "token-usage.json").read_text())
    assert {key: written[key] for key in expected} == expected
    (request,) = model_server.requests
    assert request.path == STREAM_PATH
    assert request.headers.get("x-goog-api-key") == GEMINI_KEY
    assert "Say hello to the team" in json.dumps(request.body["contents"])
    settings = json.loads((trial_dir / "home/.gemini/settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["general"]["maxAttempts"] == MAX_ATTEMPTS
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert leaked(GEMINI_KEY, output) == []


def test_a_shell_call_really_runs_in_the_workspace_with_its_exit_code(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script(
        [
            Shell(command="echo hello > out.txt && cat out.txt"),
            Shell(command="echo checking; cat missing.txt"),
            Say(text="Wrote out.txt"),
        ]
    )
    output = _run(tmp_path, env, "make-file", "none", "--keep-workspaces")
    result, trace, trial_dir = only_trial(output)
    assert result["status"] == "passed", result
    assert (trial_dir / "workspace/out.txt").read_text() == "hello\n"
    first, second = trace["tool_calls"]
    assert first["name"] == "run_shell_command"
    assert first["command"] == "echo hello > out.txt && cat out.txt"
    assert (first["output"], first["exit_code"], first["is_error"]) == ("hello", 0, False)
    assert second["command"] == "echo checking; cat missing.txt"
    assert second["output"] == "checking\ncat: missing.txt: No such file or directory"
    assert (second["exit_code"], second["is_error"]) == (1, True)
    # The CLI sent the command's real output back to the model as the function response.
    assert "hello" in json.dumps(model_server.requests[1].body["contents"][-1])
    assert "Exit Code: 1" in json.dumps(model_server.requests[2].body["contents"][-1])
    assert trace["final_text"] == "Wrote out.txt"
    assert leaked(GEMINI_KEY, output) == []


def test_a_self_loaded_skill_is_found_at_its_native_path_and_absent_under_none(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    script = [UseTool(name="activate_skill", input={"name": "greeter"}), Say(text="HELLO, new colleague!")]
    model_server.script(script)
    loaded, trace, trial_dir = only_trial(
        _run(tmp_path / "self", env, "greet", "self-load", "--keep-workspaces")
    )
    assert (trial_dir / "workspace/.gemini/skills/greeter/SKILL.md").is_file()
    assert "greeter" in json.dumps(model_server.requests[0].body)  # listed to the model by the CLI itself
    (evidence,) = [s for s in trace["skills"] if s["skill"] == "greeter"]
    assert (evidence["source"], evidence["confidence"]) == ("skill-tool", "high")
    (call,) = trace["tool_calls"]
    assert call["name"] == "activate_skill" and call["is_error"] is False
    # The CLI answered the model with the skill's body.
    assert "Greet with HELLO in capital letters" in json.dumps(model_server.requests[1].body["contents"][-1])
    assert loaded["status"] == "passed", loaded
    assert loaded["grade"]["selected_skills"] == ["greeter"]

    model_server.script(script)
    baseline, trace, trial_dir = only_trial(
        _run(tmp_path / "none", env, "greet", "none", "--keep-workspaces")
    )
    assert not (trial_dir / "workspace/.gemini/skills").exists()
    assert "greeter" not in json.dumps(model_server.requests[0].body)
    (call,) = trace["tool_calls"]
    assert call["is_error"] is True  # no such skill to activate
    assert [s for s in trace["skills"] if s["skill"] == "greeter"] == []
    assert baseline["status"] == "failed"
    assert baseline["grade"]["selected_skills"] == []


def test_a_bad_key_is_a_provider_error_at_once(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Fail(status=401, message="API key not valid. Please pass a valid API key.")] * 3)
    started = time.monotonic()
    output = _run(tmp_path, env, "plain")
    result, trace, _ = only_trial(output)
    assert result["status"] == "errored"
    assert result["error_class"] == "provider-error"
    assert result["error_message"].startswith("gemini could not authenticate (HTTP 401): ")
    assert "API key not valid" in result["error_message"]
    assert result["error_message"].endswith("check GEMINI_API_KEY")
    assert trace["is_error"] is True
    assert len(model_server.requests) == 1  # an auth failure is not retried
    assert time.monotonic() - started < 60
    assert leaked(GEMINI_KEY, output) == []


def test_an_unknown_model_is_named_as_such(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    message = f"models/{MODEL} is not found for API version v1beta, or is not supported for generateContent."
    model_server.script([Fail(status=404, message=message)] * 3)
    result, _, _ = only_trial(_run(tmp_path, env, "plain"))
    assert result["error_class"] == "provider-error"
    assert result["error_message"].startswith(f"unknown model '{MODEL}' (HTTP 404): ")
    assert message in result["error_message"]
    assert len(model_server.requests) == 1


def test_a_failing_endpoint_is_retried_a_bounded_number_of_times(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Fail(status=500, message="backend exploded", kind="api_error")] * 10)
    result, _, _ = only_trial(_run(tmp_path, env, "plain"))
    assert result["error_class"] == "provider-error"
    assert result["error_message"].startswith(
        f"gemini's API request failed with HTTP 500 (after up to {MAX_ATTEMPTS} attempts): "
    )
    assert "backend exploded" in result["error_message"]
    assert len(model_server.requests) == MAX_ATTEMPTS  # settings.json caps the CLI's default of 10


def test_the_turn_limit_is_the_cli_s_own_and_a_provider_error(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Shell(command="echo hello > out.txt"), Shell(command="cat out.txt"), Say(text="ok")])
    result, trace, trial_dir = only_trial(_run(tmp_path, env, "short-leash", "none", "--keep-workspaces"))
    assert result["status"] == "errored"
    assert result["error_class"] == "provider-error"
    assert "gemini reached its turn limit (max_turns 1" in result["error_message"]
    assert [c["command"] for c in trace["tool_calls"]] == ["echo hello > out.txt"]
    assert len(model_server.requests) == 1  # the CLI stopped before asking for a second turn
    settings = json.loads((trial_dir / "home/.gemini/settings.json").read_text())
    assert settings["model"]["maxSessionTurns"] == 1


def test_record_then_replay_gives_the_same_graded_result(
    tmp_path: Path, env: dict[str, str], model_server: ModelServer
) -> None:
    model_server.script([Shell(command="echo hello > out.txt && cat out.txt"), Say(text="Wrote out.txt")])
    suite = write_integration_suite(tmp_path)
    live = run(
        suite,
        tmp_path / "live",
        env,
        provider="gemini",
        case="make-file",
        condition="none",
        more=("--model", MODEL, "--record"),
    )
    assert live.returncode == 0, live.stderr
    recorded, recorded_trace, _ = only_trial(tmp_path / "live")
    cassette = suite / "cassettes/gemini" / MODEL / "execution/make-file/none/trial-1.jsonl"
    assert json.loads(cassette.read_text().splitlines()[0])["format"] == "gemini-stream-json"
    assert leaked(GEMINI_KEY, suite / "cassettes", tmp_path / "live") == []

    replay = run(suite, tmp_path / "replayed", env, provider="replay", case="make-file", condition="none")
    assert replay.returncode == 0, replay.stderr
    replayed, replayed_trace, _ = only_trial(tmp_path / "replayed")
    assert replayed["status"] == recorded["status"] == "passed"
    assert replayed["grade"] == recorded["grade"]
    assert replayed["usage"] == recorded["usage"]
    # Replay re-ran the command in a fresh workspace: same calls and exit codes, with that run's own
    # output (the CLI showed it without its last newline).
    replayed_calls, recorded_calls = replayed_trace.pop("tool_calls"), recorded_trace.pop("tool_calls")
    assert [(c["command"], c["exit_code"]) for c in replayed_calls] == [
        (c["command"], c["exit_code"]) for c in recorded_calls
    ]
    assert [c["output"] for c in replayed_calls] == ["hello\n"]
    assert replayed_trace == recorded_trace
    assert len(model_server.requests) == 2
