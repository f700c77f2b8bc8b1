"""The Codex provider: ``codex exec --json`` headless in the trial workspace, its events parsed live.

Each trial's ``CODEX_HOME/config.toml`` (inside the trial's private home) is written here: a custom
model provider on the Responses API that reads its key from ``OPENAI_API_KEY`` (so no key is ever written
to disk), bounded retries (connection failures included), and every startup lookup off (update check,
analytics, plugins).

Codex has no turn limit of its own. skillgym counts its tool calls in the stream and stops it as soon as
the ``max_turns``-th has finished, before the model's next step can start another: like Claude's
``--max-turns``, which runs the tool calls of its last allowed turn and then ends, except that each tool
call counts as a turn (calls made in parallel count one each).
"""

from __future__ import annotations

import os
import re
from typing import Any, Final

import msgspec
import tomli_w

from ..files import write_atomic
from ..plugins import provider
from ..trace import Trace
from .agent_cli import (
    AgentCliProvider,
    CliRun,
    Failure,
    cli_failure,
    exit_how,
    prompt_needs_stdin,
    stderr_tail,
)
from .base import ProviderRequest, ProviderSettings
from .codex_stream import CODEX_FORMAT, CodexRun, CodexStreamParser

CODEX_ENV_VAR: Final = "SKILLGYM_CODEX"
CODEX_BASE_URL_VAR: Final = "SKILLGYM_CODEX_BASE_URL"
CODEX_INSTALL: Final = "npm install -g @openai/codex"
CODEX_KEY_VAR: Final = "OPENAI_API_KEY"
DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
# The model provider id in config.toml; a custom one, because the built-in `openai` provider wants a
# `codex login` session that the trial's private home does not have.
PROVIDER_ID: Final = "skillgym"
# Enough to ride out a blip, few enough that a dead endpoint fails the trial instead of its budget.
MAX_RETRIES: Final = 2
_STATUS = re.compile(r"\b(?:status:?|HTTP(?: error:?)?) (\d{3})\b")
# Codex prints its own sentence in place of the status of an HTTP 500 answer.
_HTTP_500 = re.compile(r"currently experiencing high demand", re.I)
_CONNECT = re.compile(
    r"connection failed|error sending request|connection refused|dns error|failed to lookup address", re.I
)
_UNKNOWN_MODEL = re.compile(
    r"model[^\n]{0,80}\b(does not exist|not found|not supported|unknown|unsupported)|model_not_found", re.I
)
_AUTH = re.compile(r"unauthori[sz]ed|incorrect api key|invalid api key|invalid_api_key|forbidden", re.I)


@provider
class CodexProvider(AgentCliProvider):
    """Runs Codex headless with approvals off and full access inside the trial's workspace.

    ``base_url`` (else ``SKILLGYM_CODEX_BASE_URL``, else the trial's ``OPENAI_BASE_URL``, else OpenAI's
    own endpoint) is where the Responses API is served.
    """

    name = "codex"
    program = "codex"
    env_var = CODEX_ENV_VAR
    install = CODEX_INSTALL
    credentials = (CODEX_KEY_VAR,)
    login = "a `codex login` session"
    stream_format = CODEX_FORMAT
    skill_dirs = (".agents/skills",)
    passthrough_env = (CODEX_KEY_VAR, "OPENAI_BASE_URL")
    home_env = {"CODEX_HOME": ".codex"}
    text_only = True

    def __init__(self, executable: str | None = None, base_url: str | None = None) -> None:
        super().__init__(executable)
        self.base_url = base_url or os.environ.get(CODEX_BASE_URL_VAR) or None

    @classmethod
    def from_settings(cls, settings: ProviderSettings) -> CodexProvider:
        return cls()

    def argv(self, executable: str, request: ProviderRequest) -> tuple[list[str], bytes | None]:
        return codex_argv(executable, request)

    def parser(self) -> CodexStreamParser:
        return CodexStreamParser()

    def endpoint(self, request: ProviderRequest) -> str:
        """Where this trial's codex sends its model requests (the provider's ``base_url``)."""
        return self.base_url or request.env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL

    def prepare(self, request: ProviderRequest) -> str | None:
        home = request.env.get("CODEX_HOME")
        if not home:
            return "the trial env has no CODEX_HOME; codex would read the user's own config"
        try:
            write_codex_config(home, base_url=self.endpoint(request))
        except OSError as exc:
            return f"cannot write codex's config.toml into the trial home {home}: {exc}"
        return None

    def stop_reason(self, parser: CodexStreamParser, request: ProviderRequest) -> str | None:
        return turn_limit_reason(parser.tools_started, parser.tools_finished, request.max_turns)

    def classify(self, ran: CliRun, parser: CodexStreamParser, request: ProviderRequest) -> Failure | None:
        return _classify(ran, parser.run(), request, self.endpoint(request))

    def finish_trace(self, trace: Trace, request: ProviderRequest) -> Trace:
        # The stream never names the model; the replay of a cassette takes it from the header the same way.
        return msgspec.structs.replace(trace, model=request.model)

    def warnings(self, parser: CodexStreamParser) -> tuple[str, ...]:
        return tuple(f"codex: {w}" for w in parser.run().warnings)


# Judge mode: no shell, no file edits, no images, no web, no sub-agents, no goals; the model's text is
# what is left (codex still offers request_user_input, which headless exec cannot act on).
CODEX_TEXT_ONLY: Final = (
    "--sandbox",
    "read-only",
    *(
        arg
        for feature in ("shell_tool", "unified_exec", "view_image", "multi_agent", "goals")
        for arg in ("--disable", feature)
    ),
    "-c",
    'web_search="disabled"',
)


def codex_argv(executable: str, request: ProviderRequest) -> tuple[list[str], bytes | None]:
    """The argv for one trial and the bytes to send on stdin (the prompt, when argv cannot carry it)."""
    on_stdin = prompt_needs_stdin(request.prompt)
    argv = [executable, "exec", "--json", "--skip-git-repo-check", "--color", "never"]
    if request.model:
        argv += ["-m", request.model]
    if request.text_only:
        argv += [*CODEX_TEXT_ONLY]
    argv += ["-C", request.workspace, "-" if on_stdin else request.prompt]
    return argv, request.prompt.encode("utf-8") if on_stdin else None


def codex_config(*, base_url: str) -> dict[str, Any]:
    """The trial's config.toml as data: no secret in it, only the name of the variable holding the key."""
    return {
        "model_provider": PROVIDER_ID,
        # The trial directory is the sandbox: the agent must reach its TMUX_TMPDIR and fixture logs,
        # which sit beside the workspace, so Codex's own sandbox (workspace writes only) would break it.
        "approval_policy": "never",
        "sandbox_mode": "danger-full-access",
        "check_for_update_on_startup": False,
        "analytics": {"enabled": False},
        # On by default, this feature retries a failed connection for ever ("Reconnecting... waiting for
        # network"), past the retry bounds below: a dead endpoint would end only at the case budget.
        "features": {"plugins": False, "unbounded_connection_retries": False},
        "model_providers": {
            PROVIDER_ID: {
                "name": PROVIDER_ID,
                "base_url": base_url,
                "env_key": CODEX_KEY_VAR,
                "wire_api": "responses",
                # HTTP-level retries of one request, and retries of the whole streamed request. The
                # stream's idle timeout (stream_idle_timeout_ms) keeps codex's default of five minutes:
                # a reasoning model may stream nothing for minutes, and the case budget bounds a hang.
                "request_max_retries": MAX_RETRIES,
                "stream_max_retries": MAX_RETRIES,
            }
        },
    }


def write_codex_config(codex_home: str, *, base_url: str) -> str:
    """Write ``config.toml`` into the trial's ``CODEX_HOME`` and return its path."""
    path = os.path.join(codex_home, "config.toml")
    os.makedirs(codex_home, exist_ok=True)
    write_atomic(path, tomli_w.dumps(codex_config(base_url=base_url)))
    return path


def turn_limit_reason(started: int, finished: int, limit: int | None) -> str | None:
    """Why codex must stop now under ``max_turns`` ``limit``, given its tool calls so far; None to go on.

    It stops once the ``limit``-th tool call has finished, so the model's next step never runs another;
    a call started past the limit (one of several made at once) stops it too.
    """
    if limit is None or (finished < limit and started <= limit):
        return None
    if started > limit:
        done = f"it started tool call {started} of at most {limit}"
    else:
        done = f"its tool call {finished} finished, so skillgym stopped it before the model's next step"
    return (
        f"codex reached the turn limit (max_turns {limit}, counted in tool calls): {done}; raise the "
        "case's max_turns budget if the task needs more"
    )


def _classify(ran: CliRun, run: CodexRun, request: ProviderRequest, endpoint: str) -> Failure | None:
    common = cli_failure(ran, request, cli="codex")
    if common is not None:
        return common
    process = ran.process
    assert process is not None
    if run.errors:
        return "provider-error", error_message(run.errors[-1], request, endpoint, retries=run.retries)
    if process.exit_code != 0:
        return "provider-error", f"codex {exit_how(process)}: {stderr_tail(request)}"
    if run.turns_completed == 0:
        return (
            "provider-error",
            f"codex exited 0 without completing a turn; see {request.stdout_path} and {request.stderr_path}",
        )
    return None


def error_message(message: str, request: ProviderRequest, endpoint: str, *, retries: int = 0) -> str:
    """The trial's error message for codex's last fatal error: what failed, its HTTP status, where."""
    text = message[:400]
    status = http_status(message)
    named = f" (HTTP {status})" if status is not None else ""
    after = f" after {retries} retries" if retries else ""
    if _UNKNOWN_MODEL.search(message):
        model = request.model or "default"
        return f"unknown model {model!r} at {endpoint}{named}: {text}; pass one the endpoint serves"
    if status in (401, 403) or _AUTH.search(message):
        return f"codex could not authenticate to {endpoint}{named}: {text}; check {CODEX_KEY_VAR}"
    if status is not None:
        return f"codex's API request to {endpoint} failed with HTTP {status}{after}: {text}"
    if _CONNECT.search(message):
        return (
            f"codex could not connect to {endpoint}{after}: {text}; check that the endpoint is up (set by "
            f"{CODEX_BASE_URL_VAR} or OPENAI_BASE_URL)"
        )
    return f"codex turn failed at {endpoint}{after}: {text}"


def http_status(message: str) -> int | None:
    """The HTTP status a codex error message names, or None when it names none."""
    found = _STATUS.search(message)
    if found:
        return int(found[1])
    return 500 if _HTTP_500.search(message) else None
