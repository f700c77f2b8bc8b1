"""The Claude Code provider: ``claude -p`` headless in the trial workspace, its stream-json parsed live.

The helpers that find an agent CLI, ask its version, run it with a streaming parser and record its raw
stream as a cassette are shared with the Codex provider.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Final

import msgspec

from ..process import ProcessResult, ProcessStartError, run_process
from ..redact import REDACTED, secret_values
from ..results import ErrorClass
from .base import Detection, ProviderRequest, ProviderResult
from .cassette import CASSETTE_VERSION, DEFAULT_MODEL, CassetteMeta, write_cassette
from .claude_stream import CLAUDE_FORMAT, ClaudeRun, ClaudeStreamParser
from .tracefmt import StreamParseError

CLAUDE_ENV_VAR: Final = "SKILLGYM_CLAUDE"
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
# Longer prompts (or ones that look like an option) go on stdin: one argv string is capped at 128 KiB.
MAX_ARGV_PROMPT: Final = 100_000
# The in-memory copy of the raw output is only for error messages; the parser reads lines as they come.
CAPTURE_BYTES: Final = 256 * 1024
_VERSION_TIMEOUT_S: Final = 30.0
_TAIL_BYTES: Final = 600
_VERSION = re.compile(r"\d+\.\d+\.\d+\S*")


class AgentStopped(Exception):
    """Raised from a line callback to stop the agent early (a turn budget it cannot enforce itself)."""


class CliRun(msgspec.Struct, frozen=True, kw_only=True):
    """What running an agent CLI produced; exactly one of ``process``, ``start_error``, ``stopped`` is set.

    ``parse_error`` is the first stream line the parser rejected (later lines were not parsed).
    """

    process: ProcessResult | None = None
    start_error: str | None = None
    stopped: str | None = None
    parse_error: str | None = None


class CliFound(msgspec.Struct, frozen=True, kw_only=True):
    """An agent CLI that runs here: its absolute path and the version it reports."""

    path: str
    version: str


class ClaudeProvider:
    """Runs Claude Code headless with permissions bypassed inside the trial's workspace."""

    name: str = "claude"
    skill_dirs: tuple[str, ...] = (".claude/skills",)
    runs_agent: bool = True
    passthrough_env: tuple[str, ...] = (*CLAUDE_CREDENTIALS, "ANTHROPIC_BASE_URL")

    def __init__(self, executable: str | None = None) -> None:
        self.executable = executable or os.environ.get(CLAUDE_ENV_VAR) or "claude"
        self._resolved: str | None = None

    async def detect(self) -> Detection:
        found = await detect_cli(
            self.executable, provider=self.name, env_var=CLAUDE_ENV_VAR, install=CLAUDE_INSTALL
        )
        if isinstance(found, str):
            return Detection(provider=self.name, available=False, problem=found)
        # Trials run with a private home, so a `claude login` session is never seen there.
        if not any(os.environ.get(key) for key in CLAUDE_CREDENTIALS):
            return Detection(
                provider=self.name,
                available=False,
                version=found.version,
                problem=(
                    f"no credentials for claude: set {', '.join(CLAUDE_CREDENTIALS[:-1])} or "
                    f"{CLAUDE_CREDENTIALS[-1]} "
                    "(trials run in a private home, so a `claude login` session is not used)"
                ),
            )
        self._resolved = found.path
        return Detection(provider=self.name, available=True, version=found.version)

    async def invoke(self, request: ProviderRequest) -> ProviderResult:
        started = time.time()
        parser = ClaudeStreamParser()
        argv, stdin = claude_argv(self._resolved or self.executable, request)
        ran = await run_cli(argv, request, parser.feed, env=claude_env(request.env), stdin=stdin)
        trace = parser.trace()
        failure = _classify(ran, parser.run(), request)
        cassette = None
        if request.record_path is not None:
            record_stream(request, provider=self.name, fmt=CLAUDE_FORMAT, started=started, failure=failure)
            cassette = request.record_path
        return ProviderResult(
            ok=failure is None,
            trace=trace,
            model=trace.model or request.model,
            exit_code=ran.process.exit_code if ran.process else None,
            error_class=failure[0] if failure else None,
            error_message=failure[1] if failure else None,
            cassette=cassette,
            warnings=stream_warnings(ran, request),
        )


def claude_argv(executable: str, request: ProviderRequest) -> tuple[list[str], bytes | None]:
    """The argv for one trial and the bytes to send on stdin (the prompt, when argv cannot carry it)."""
    on_stdin = prompt_needs_stdin(request.prompt)
    argv = [executable, "-p"]
    if not on_stdin:
        argv.append(request.prompt)
    argv += ["--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"]
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


def prompt_needs_stdin(prompt: str) -> bool:
    """True when the prompt is too long for one argument or would be read as an option."""
    return prompt.startswith("-") or len(prompt.encode("utf-8")) > MAX_ARGV_PROMPT


def _classify(ran: CliRun, run: ClaudeRun, request: ProviderRequest) -> tuple[ErrorClass, str] | None:
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
    if run.subtype == "error_max_turns" or run.terminal_reason == "max_turns":
        return (
            f"claude reached its turn limit (--max-turns {request.max_turns}) after {run.num_turns} turns "
            f"without finishing; raise the case's max_turns budget if the task needs more"
        )
    if status in (401, 403) or run.api_error_type in ("authentication_error", "permission_error"):
        return (
            f"claude could not authenticate (HTTP {status}): {text}; check ANTHROPIC_API_KEY, "
            "ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN"
        )
    if status == 404 or run.api_error_type == "not_found_error":
        return (
            f"unknown model {request.model or 'default'!r} (HTTP 404): {text}; pass one the endpoint serves"
        )
    if status is not None:
        retried = f" after {run.retries} retries" if run.retries else ""
        return f"claude's API request failed with HTTP {status}{retried}: {text}"
    return f"claude reported an error ({run.subtype or 'error'}): {text}"


# ---- shared with the Codex provider -------------------------------------------------------------------


def resolve_executable(program: str) -> str | None:
    """``program`` as an absolute path: looked up on PATH when it has no slash; None if not runnable."""
    if "/" not in program:
        return shutil.which(program)
    path = os.path.abspath(os.path.expanduser(program))
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


async def detect_cli(program: str, *, provider: str, env_var: str, install: str) -> CliFound | str:
    """The CLI when ``program --version`` runs and prints a version, else what is wrong and how to fix it."""
    path = resolve_executable(program)
    where = "on PATH" if "/" not in program else "at that path"
    if path is None:
        return (
            f"the {provider} CLI {program!r} was not found {where}; install it ({install}) or point "
            f"{env_var} at the executable"
        )
    # Asked in a throwaway home so that even --version cannot touch the user's own settings.
    with tempfile.TemporaryDirectory(prefix="skillgym-detect-") as home:
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": home,
            "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
            "CODEX_HOME": home,
            "DISABLE_AUTOUPDATER": "1",
        }
        try:
            result = await run_process(
                [path, "--version"], cwd=Path(home), env=env, timeout_s=_VERSION_TIMEOUT_S
            )
        except ProcessStartError as exc:
            return f"the {provider} CLI at {path} cannot start: {exc}; reinstall it ({install})"
    output = (result.stdout + result.stderr).decode("utf-8", errors="replace").strip()
    version = _VERSION.search(output)
    if result.timed_out or result.exit_code != 0 or version is None:
        how = "timed out" if result.timed_out else exit_how(result)
        return (
            f"`{path} --version` {how} without printing a version ({output[:200]!r}); reinstall it "
            f"({install}) or point {env_var} at a working executable"
        )
    return CliFound(path=path, version=version[0])


async def run_cli(
    argv: Sequence[str],
    request: ProviderRequest,
    feed: Callable[[bytes], None],
    *,
    env: dict[str, str],
    stdin: bytes | None,
) -> CliRun:
    """Run an agent CLI in the trial workspace, handing each stdout line to ``feed`` as it arrives.

    The first line ``feed`` rejects is kept as the parse error and later lines are ignored, so the run
    still ends normally; ``AgentStopped`` from ``feed`` kills the process group and ends the run early.
    """
    failed: list[StreamParseError] = []

    def on_line(line: bytes) -> None:
        if failed:
            return
        try:
            feed(line)
        except StreamParseError as exc:
            failed.append(exc)

    try:
        process = await run_process(
            argv,
            cwd=Path(request.workspace),
            env=env,
            timeout_s=request.timeout_s,
            stdout_path=Path(request.stdout_path),
            stderr_path=Path(request.stderr_path),
            stdin_data=stdin,
            max_capture_bytes=CAPTURE_BYTES,
            on_stdout_line=on_line,
        )
    except ProcessStartError as exc:
        return CliRun(start_error=str(exc))
    except AgentStopped as exc:
        return CliRun(stopped=str(exc), parse_error=str(failed[0]) if failed else None)
    return CliRun(process=process, parse_error=str(failed[0]) if failed else None)


def cli_failure(ran: CliRun, request: ProviderRequest, *, cli: str) -> tuple[ErrorClass, str] | None:
    """The failures every agent CLI shares: not started, stopped, timed out, unreadable output."""
    if ran.start_error is not None:
        return "provider-unavailable", ran.start_error
    if ran.stopped is not None:
        return "provider-error", ran.stopped
    process = ran.process
    assert process is not None
    if process.timed_out:
        return (
            "timeout",
            f"{cli} ran past the case budget of {request.timeout_s:g}s; its process group was killed",
        )
    if ran.parse_error is not None:
        return "provider-error", f"unreadable {cli} output in {request.stdout_path}: {ran.parse_error}"
    return None


def record_stream(
    request: ProviderRequest,
    *,
    provider: str,
    fmt: str,
    started: float,
    failure: tuple[ErrorClass, str] | None,
) -> None:
    """--record: the raw stream (from stdout.txt) as a cassette; a failed run is recorded as failed."""
    assert request.record_path is not None
    meta = CassetteMeta(
        cassette=CASSETTE_VERSION,
        provider=provider,
        model=request.model or DEFAULT_MODEL,
        format=fmt,
        lane=request.lane,
        case=request.case_id,
        condition=request.condition,
        trial=request.trial,
        fingerprint=request.fingerprint,
        recorded_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        error_class=failure[0] if failure else None,
        error_message=failure[1] if failure else None,
    )
    # Cassettes are committed with the suite, so a credential the agent echoed must not reach one.
    secrets = [s.encode() for s in secret_values(request.env)]
    write_cassette(Path(request.record_path), meta, _scrubbed(Path(request.stdout_path), secrets))


def _scrubbed(path: Path, secrets: list[bytes]) -> Iterator[bytes]:
    if not path.exists():
        return
    with open(path, "rb") as file:
        for line in file:
            for secret in secrets:
                line = line.replace(secret, REDACTED.encode())
            yield line.rstrip(b"\r\n")


def stream_warnings(ran: CliRun, request: ProviderRequest) -> tuple[str, ...]:
    """Worth saying though not a failure: the raw stream was too big to keep whole."""
    process = ran.process
    if process is None or not process.truncated:
        return ()
    return (
        f"the agent printed {process.stdout_bytes} bytes on stdout; {request.stdout_path} (and a recorded "
        "cassette) hold only the first part, though the trace was parsed from all of it",
    )


def exit_how(process: ProcessResult) -> str:
    """'exited with code N' or 'was ended by signal N'."""
    if process.signal is not None:
        return f"was ended by signal {process.signal}"
    return f"exited with code {process.exit_code}"


def stderr_tail(request: ProviderRequest) -> str:
    """The end of the trial's stderr.txt (the CLI's last words), for an error message."""
    try:
        with open(request.stderr_path, "rb") as file:
            file.seek(max(os.fstat(file.fileno()).st_size - _TAIL_BYTES, 0))
            tail = file.read()
    except OSError:
        return "(no stderr.txt)"
    return tail.decode("utf-8", errors="replace").strip() or "(nothing on stderr)"
