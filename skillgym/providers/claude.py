"""The Claude Code provider: ``claude -p`` headless in the trial workspace, its stream-json parsed live."""

from __future__ import annotations

from typing import Final

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
from .claude_stream import CLAUDE_FORMAT, ClaudeRun, ClaudeStreamParser

CLAUDE_ENV_VAR: Final = "SKILLGYM_CLAUDE"
CLAUDE_BASE_URL_VAR: Final = "ANTHROPIC_BASE_URL"
DEFAULT_BASE_URL: Final = "https://api.anthropic.com"
CLAUDE_INSTALL: Final = "npm install -g @anthropic-ai/claude-code"
# Any one of these lets headless Claude talk to its API (the last is what `claude setup-token` prints).
CLAUDE_CREDENTIALS: Final = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
# Set for every invocation: root may bypass permissions only in a declared sandbox (the trial is one),
# and nothing but model requests should leave the machine during a measured run.
CLAUDE_FIXED_ENV: Final = {
    "IS_SANDBOX": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
}
# Claude retries even a 401 ten times with growing pauses, which turns a bad key into a timeout; a case
# or condition env may still raise this.
CLAUDE_DEFAULT_RETRIES: Final = "2"


@provider
class ClaudeProvider(AgentCliProvider):
    """Runs Claude Code headless with permissions bypassed inside the trial's workspace."""

    name = "claude"
    program = "claude"
    env_var = CLAUDE_ENV_VAR
    install = CLAUDE_INSTALL
    credentials = CLAUDE_CREDENTIALS
    login = "a `claude login` session"
    stream_format = CLAUDE_FORMAT
    skill_dirs = (".claude/skills",)
    reports_cost = True  # its final result line carries total_cost_usd: no price table needed
    passthrough_env = (*CLAUDE_CREDENTIALS, CLAUDE_BASE_URL_VAR)
    home_env = {"CLAUDE_CONFIG_DIR": ".claude"}
    text_only = True

    def argv(self, executable: str, request: ProviderRequest) -> tuple[list[str], bytes | None]:
        return claude_argv(executable, request)

    def env(self, request: ProviderRequest) -> dict[str, str]:
        return claude_env(request.env)

    def parser(self) -> ClaudeStreamParser:
        return ClaudeStreamParser()

    def classify(self, ran: CliRun, parser: ClaudeStreamParser, request: ProviderRequest) -> Failure | None:
        return _classify(ran, parser.run(), request)


def claude_argv(executable: str, request: ProviderRequest) -> tuple[list[str], bytes | None]:
    """The argv for one trial and the bytes to send on stdin (the prompt, when argv cannot carry it)."""
    on_stdin = prompt_needs_stdin(request.prompt)
    argv = [executable, "-p"]
    if not on_stdin:
        argv.append(request.prompt)
    argv += ["--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"]
    if request.text_only:
        argv += ["--tools", ""]  # judge mode: no built-in tool at all, the answer is text
    if request.model:
        argv += ["--model", request.model]
    if request.max_turns is not None:
        argv += ["--max-turns", str(request.max_turns)]
    return argv, request.prompt.encode("utf-8") if on_stdin else None


def claude_env(env: dict[str, str]) -> dict[str, str]:
    """The trial env plus what headless Claude needs; harness variables are left as they are."""
    merged = {**env, **CLAUDE_FIXED_ENV}
    merged.setdefault("CLAUDE_CODE_MAX_RETRIES", CLAUDE_DEFAULT_RETRIES)
    return merged


def claude_endpoint(request: ProviderRequest) -> str:
    """Where this trial's claude sends its model requests."""
    return request.env.get(CLAUDE_BASE_URL_VAR) or DEFAULT_BASE_URL


def _classify(ran: CliRun, run: ClaudeRun, request: ProviderRequest) -> Failure | None:
    common = cli_failure(ran, request, cli="claude")
    if common is not None:
        return common
    process = ran.process
    assert process is not None
    if run.is_error:
        return "provider-error", _error_message(run, request)
    if not run.result_seen:
        if process.exit_code != 0:
            return (
                "provider-error",
                f"claude {exit_how(process)} without a result line: {stderr_tail(request)}",
            )
        return (
            "provider-error",
            f"claude exited 0 without a result line, so no turn was taken; see {request.stdout_path}",
        )
    if run.num_turns == 0:
        return "provider-error", f"claude finished with zero turns: {run.result_text[:400]}"
    if process.exit_code != 0:
        return "provider-error", f"claude {exit_how(process)} after reporting success: {stderr_tail(request)}"
    return None


def _error_message(run: ClaudeRun, request: ProviderRequest) -> str:
    text = (run.result_text or "; ".join(run.errors) or run.subtype or "no detail")[:400]
    status = run.api_error_status
    endpoint = claude_endpoint(request)
    retried = f" after {run.retries} retries" if run.retries else ""
    if run.subtype == "error_max_turns" or run.terminal_reason == "max_turns":
        return (
            f"claude reached its turn limit (--max-turns {request.max_turns}) after {run.num_turns} turns "
            f"without finishing; raise the case's max_turns budget if the task needs more"
        )
    if status in (401, 403) or run.api_error_type in ("authentication_error", "permission_error"):
        return (
            f"claude could not authenticate to {endpoint} (HTTP {status}): {text}; check ANTHROPIC_API_KEY, "
            "ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN"
        )
    if status == 404 or run.api_error_type == "not_found_error":
        return (
            f"unknown model {request.model or 'default'!r} at {endpoint} (HTTP 404): {text}; pass one the "
            "endpoint serves"
        )
    if status is not None:
        return f"claude's API request to {endpoint} failed with HTTP {status}{retried}: {text}"
    if run.api_error == "connection_failed":
        return (
            f"claude could not connect to {endpoint}{retried}: {text}; check that the endpoint is up (set by "
            f"{CLAUDE_BASE_URL_VAR})"
        )
    if run.api_error is not None:
        return f"claude's API request to {endpoint} failed ({run.api_error}){retried}: {text}"
    # A failed run can still end in subtype "success", which names nothing.
    kind = (run.subtype if run.subtype != "success" else None) or run.terminal_reason or "is_error"
    return f"claude reported an error ({kind}): {text}"
