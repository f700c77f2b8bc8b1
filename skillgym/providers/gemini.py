"""The Gemini CLI provider: ``gemini -p`` headless in the trial workspace, its stream-json parsed live.

Each trial's ``settings.json`` is written into the trial's private home (``GEMINI_CLI_HOME``): API-key
auth (the key itself stays in ``GEMINI_API_KEY``, never on disk), bounded retries, the case's turn
limit as the CLI's own ``maxSessionTurns``, and usage statistics, telemetry and update checks off.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Final

from ..files import write_atomic
from ..plugins import provider
from .agent_cli import (
    AgentCliProvider,
    CliRun,
    Failure,
    cli_failure,
    exit_how,
    prompt_needs_stdin,
    stderr_tail,
)
from .base import ProviderRequest
from .gemini_stream import GEMINI_FORMAT, GeminiRun, GeminiStreamParser

GEMINI_ENV_VAR: Final = "SKILLGYM_GEMINI"
GEMINI_INSTALL: Final = "npm install -g @google/gemini-cli"
GEMINI_KEY_VAR: Final = "GEMINI_API_KEY"
GEMINI_BASE_URL_VAR: Final = "GOOGLE_GEMINI_BASE_URL"
GEMINI_HOME_VAR: Final = "GEMINI_CLI_HOME"
# Attempts per model request, the first included: enough to ride out a blip, few enough that a dead
# endpoint fails the trial instead of its budget (the CLI's default of 10 backs off for minutes).
MAX_ATTEMPTS: Final = 3
# Set for every invocation: one process (the CLI otherwise re-launches itself as a child to raise its
# heap limit), so what skillgym starts is the agent itself.
GEMINI_FIXED_ENV: Final = {"GEMINI_CLI_NO_RELAUNCH": "true"}


@provider
class GeminiProvider(AgentCliProvider):
    """Runs Gemini CLI headless in yolo mode (every tool call approved) inside the trial's workspace."""

    name = "gemini"
    program = "gemini"
    env_var = GEMINI_ENV_VAR
    install = GEMINI_INSTALL
    credentials = (GEMINI_KEY_VAR,)
    login = "a `gemini` Google login"
    stream_format = GEMINI_FORMAT
    # Gemini CLI also reads .agents/skills; one folder, so a skill is never listed twice.
    skill_dirs = (".gemini/skills",)
    passthrough_env = (GEMINI_KEY_VAR, GEMINI_BASE_URL_VAR)
    # The CLI keeps settings, sessions and its trust list under $GEMINI_CLI_HOME/.gemini: in the trial's
    # private home (its error reports go to the trial's TMPDIR, like every trial's temp files).
    home_env = {GEMINI_HOME_VAR: ""}

    def argv(self, executable: str, request: ProviderRequest) -> tuple[list[str], bytes | None]:
        return gemini_argv(executable, request)

    def env(self, request: ProviderRequest) -> dict[str, str]:
        return {**request.env, **GEMINI_FIXED_ENV}

    def parser(self) -> GeminiStreamParser:
        return GeminiStreamParser()

    def prepare(self, request: ProviderRequest) -> str | None:
        home = request.env.get(GEMINI_HOME_VAR)
        if not home:
            return f"the trial env has no {GEMINI_HOME_VAR}; gemini would read the user's own settings"
        try:
            write_gemini_settings(home, max_turns=request.max_turns)
        except OSError as exc:
            return f"cannot write gemini's settings.json into the trial home {home}: {exc}"
        return None

    def classify(self, ran: CliRun, parser: GeminiStreamParser, request: ProviderRequest) -> Failure | None:
        return _classify(ran, parser.run(), request)

    def warnings(self, parser: GeminiStreamParser) -> tuple[str, ...]:
        run = parser.run()
        # Error lines of severity "error" that the run finished after anyway are worth showing too.
        late = run.errors if run.status == "success" else ()
        return tuple(f"gemini: {w}" for w in (*run.warnings, *late))


def gemini_argv(executable: str, request: ProviderRequest) -> tuple[list[str], bytes | None]:
    """The argv for one trial and the bytes to send on stdin (the prompt, when argv cannot carry it).

    ``--debug`` makes each shell result show its exit code (see ``gemini_stream``); ``--skip-trust``
    trusts the workspace for this run only, which is what loads its skills.
    """
    on_stdin = prompt_needs_stdin(request.prompt)
    # With -p "" the prompt is what stdin holds, exactly.
    argv = [executable, "-p", "" if on_stdin else request.prompt]
    argv += ["--output-format", "stream-json", "--approval-mode", "yolo", "--skip-trust", "--debug"]
    if request.model:
        argv += ["--model", request.model]
    return argv, request.prompt.encode("utf-8") if on_stdin else None


def gemini_settings(*, max_turns: int | None) -> dict[str, Any]:
    """The trial's settings.json as data: no secret in it, only which kind of credential to use."""
    settings: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {
            "maxAttempts": MAX_ATTEMPTS,
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
        },
        # Nothing but model requests should leave the machine during a measured run.
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    if max_turns is not None:
        # Model requests in the session, tool-result follow-ups included: what --max-turns counts.
        settings["model"] = {"maxSessionTurns": max_turns}
    return settings


def write_gemini_settings(gemini_home: str, *, max_turns: int | None) -> str:
    """Write ``.gemini/settings.json`` under the trial's ``GEMINI_CLI_HOME`` and return its path."""
    folder = os.path.join(gemini_home, ".gemini")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "settings.json")
    write_atomic(path, json.dumps(gemini_settings(max_turns=max_turns), indent=2, sort_keys=True) + "\n")
    return path


# The API's own error body inside the CLI's message: {"error":{"code":401,...,"status":"UNAUTHENTICATED"}}.
_CODE = re.compile(r'"code"\s*:\s*(\d{3})\b')
_RPC_STATUS = re.compile(r"\b(UNAUTHENTICATED|PERMISSION_DENIED|NOT_FOUND|RESOURCE_EXHAUSTED)\b")
_RPC_CODES: Final = {
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "RESOURCE_EXHAUSTED": 429,
}
# How the API says a model does not exist: "models/x is not found for API version v1beta, or is not ...".
_UNKNOWN_MODEL = re.compile(r"models/\S+ is not found|model[^\n]{0,80}\b(not found|does not exist)", re.I)
_AUTH = re.compile(r"api key not valid|invalid api key|unauthenticated|permission denied", re.I)


def _classify(ran: CliRun, run: GeminiRun, request: ProviderRequest) -> Failure | None:
    common = cli_failure(ran, request, cli="gemini")
    if common is not None:
        return common
    process = ran.process
    assert process is not None
    if run.status == "error":
        return "provider-error", _error_message(run, request)
    if not run.result_seen:
        if process.exit_code != 0:
            return (
                "provider-error",
                f"gemini {exit_how(process)} without a result line: {stderr_tail(request)}",
            )
        return (
            "provider-error",
            f"gemini exited 0 without a result line, so no turn was taken; see {request.stdout_path}",
        )
    if process.exit_code != 0:
        return "provider-error", f"gemini {exit_how(process)} after reporting success: {stderr_tail(request)}"
    return None


def _error_message(run: GeminiRun, request: ProviderRequest) -> str:
    message = run.error_message or "; ".join(run.errors) or run.error_type or "no detail"
    text = message[:400]
    if run.error_type == "FatalTurnLimitedError":
        return (
            f"gemini reached its turn limit (max_turns {request.max_turns}: model requests in the session) "
            "without finishing; raise the case's max_turns budget if the task needs more"
        )
    status = _status(message)
    if status == 404 or _UNKNOWN_MODEL.search(message):
        return (
            f"unknown model {request.model or 'default'!r} (HTTP 404): {text}; pass one the endpoint serves"
        )
    if status in (401, 403) or run.error_type == "FatalAuthenticationError" or _AUTH.search(message):
        shown = f" (HTTP {status})" if status else ""
        return f"gemini could not authenticate{shown}: {text}; check {GEMINI_KEY_VAR}"
    if status is not None:
        return f"gemini's API request failed with HTTP {status} (after up to {MAX_ATTEMPTS} attempts): {text}"
    kind = f" ({run.error_type})" if run.error_type and run.error_type != "unknown" else ""
    return f"gemini reported an error{kind}: {text}"


def _status(message: str) -> int | None:
    code = _CODE.search(message)
    if code:
        return int(code[1])
    rpc = _RPC_STATUS.search(message)
    return _RPC_CODES[rpc[1]] if rpc else None
