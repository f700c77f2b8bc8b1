"""The runtime every agent CLI provider shares: find and detect the CLI, run it headless in the trial
workspace with a live stream parser, classify the failures all CLIs share, and record its raw stream.

A provider for a new CLI subclasses ``AgentCliProvider`` and writes only what differs: its argv, the
environment and config files it needs, its stream parser and how it reports its own errors.
"""

from __future__ import annotations

import abc
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol, Self, TypeAlias

import msgspec

from ..errors import SkillgymError
from ..process import ProcessResult, ProcessStartError, run_process
from ..redact import REDACTED, scrub, with_secrets
from ..results import ErrorClass
from ..sandboxes.base import Network
from ..trace import Trace
from .base import Detection, ProviderRequest, ProviderResult, ProviderSettings
from .cassette import CASSETTE_VERSION, DEFAULT_MODEL, CassetteMeta, write_cassette
from .tracefmt import StreamParseError

Failure: TypeAlias = tuple[ErrorClass, str]

# Longer prompts (or ones that look like an option) go on stdin: one argv string is capped at 128 KiB.
MAX_ARGV_PROMPT: Final = 100_000
# The in-memory copy of the raw output is only for error messages; the parser reads lines as they come.
CAPTURE_BYTES: Final = 256 * 1024
_VERSION_TIMEOUT_S: Final = 30.0
_TAIL_BYTES: Final = 600
_VERSION = re.compile(r"\d+\.\d+\.\d+\S*")


class AgentStopped(SkillgymError, RuntimeError):
    """Raised from a line callback to stop the agent early (a turn budget it cannot enforce itself)."""


class CliRun(msgspec.Struct, frozen=True, kw_only=True):
    """What running an agent CLI produced; exactly one of ``process``, ``start_error``, ``stopped`` is set.

    ``parse_error`` is the first stream line the parser rejected (later lines were not parsed); ``lines``
    counts the stdout lines the CLI printed, so a run that timed out without one is told from one that worked.
    """

    process: ProcessResult | None = None
    start_error: str | None = None
    stopped: str | None = None
    parse_error: str | None = None
    lines: int = 0


class CliFound(msgspec.Struct, frozen=True, kw_only=True):
    """An agent CLI that runs here: its absolute path and the version it reports."""

    path: str
    version: str


class LiveParser(Protocol):
    """A CLI's stream parser fed one stdout line at a time while the agent runs."""

    def feed(self, raw: bytes) -> None: ...

    def trace(self) -> Trace: ...


class AgentCliProvider(abc.ABC):
    """A real agent CLI run headless in the trial workspace; subclasses say what differs.

    Required: ``argv``, ``parser``, ``classify`` and the class attributes. The executable is the one
    given, else ``$<env_var>``, else ``program`` on PATH.
    """

    name: str
    program: str  # the executable's usual name on PATH
    env_var: str  # points at another executable (SKILLGYM_CLAUDE=/opt/claude)
    install: str  # how to install it, for the "not found" problem
    credentials: tuple[str, ...] = ()  # any one of these must be set; () when none is needed
    login: str = "a login session of your own"  # what the private home hides from the CLI
    stream_format: str | None = None
    skill_dirs: tuple[str, ...] = ()
    passthrough_env: tuple[str, ...] = ()
    home_env: Mapping[str, str] = {}
    runs_agent: bool = True
    network: Network = "host"  # the model's API
    # Its argv honours ``ProviderRequest.text_only`` (every tool off), so it may serve as a judge.
    text_only: bool = False

    def __init__(self, executable: str | None = None) -> None:
        self.executable = executable or os.environ.get(self.env_var) or self.program
        self._resolved: str | None = None

    @property
    def sandbox_readable(self) -> tuple[str, ...]:
        return (self._resolved,) if self._resolved else ()

    @classmethod
    def from_settings(cls, settings: ProviderSettings) -> Self:
        return cls()

    # ---- what a CLI provider writes ----------------------------------------------------------------

    @abc.abstractmethod
    def argv(self, executable: str, request: ProviderRequest) -> tuple[list[str], bytes | None]:
        """The argv for one trial and the bytes to send on stdin (the prompt, when argv cannot carry it)."""

    @abc.abstractmethod
    def parser(self) -> Any:
        """A fresh ``LiveParser`` for one trial (typed ``Any`` so ``classify`` sees the concrete class)."""

    @abc.abstractmethod
    def classify(self, ran: CliRun, parser: Any, request: ProviderRequest) -> Failure | None:
        """The trial's failure, or None; start with ``cli_failure`` for the failures every CLI shares."""

    def env(self, request: ProviderRequest) -> dict[str, str]:
        """The process environment: the trial's, plus what this CLI needs headless."""
        return dict(request.env)

    def prepare(self, request: ProviderRequest) -> str | None:
        """Write what the CLI reads before it starts (config in the trial home); a message on failure."""
        return None

    def stop_reason(self, parser: Any, request: ProviderRequest) -> str | None:
        """Checked after every stdout line: a reason ends the agent early (a turn limit it lacks)."""
        return None

    def finish_trace(self, trace: Trace, request: ProviderRequest) -> Trace:
        """The trace as the provider returns it (the model filled in when the stream never names it)."""
        return trace

    def warnings(self, parser: Any) -> tuple[str, ...]:
        """What the stream said that is worth showing, though not a failure."""
        return ()

    # ---- shared -------------------------------------------------------------------------------------

    async def detect(self) -> Detection:
        found = await detect_cli(
            self.executable,
            provider=self.name,
            env_var=self.env_var,
            install=self.install,
            home_env=self.home_env,
        )
        if isinstance(found, str):
            return Detection(provider=self.name, available=False, problem=found)
        # Trials run with a private home, so a login session of the user's own is never seen there.
        if self.credentials and not any(os.environ.get(key) for key in self.credentials):
            *others, last = self.credentials
            names = f"{', '.join(others)} or {last}" if others else last
            return Detection(
                provider=self.name,
                available=False,
                version=found.version,
                problem=(
                    f"no credentials for {self.name}: set {names} (trials run in a private home, so "
                    f"{self.login} is not used)"
                ),
            )
        self._resolved = found.path
        return Detection(provider=self.name, available=True, version=found.version)

    async def invoke(self, request: ProviderRequest) -> ProviderResult:
        started = time.time()
        parser = self.parser()
        problem = self.prepare(request)
        if problem is not None:
            return ProviderResult(
                ok=False, trace=parser.trace(), error_class="environment-error", error_message=problem
            )

        def feed(line: bytes) -> None:
            parser.feed(line)
            reason = self.stop_reason(parser, request)
            if reason is not None:
                raise AgentStopped(reason)

        argv, stdin = self.argv(self._resolved or self.executable, request)
        ran = await run_cli(argv, request, feed, env=self.env(request), stdin=stdin)
        trace = self.finish_trace(parser.trace(), request)
        failure = self.classify(ran, parser, request)
        cassette = None
        if request.record_path is not None and self.stream_format is not None:
            record_stream(
                request, provider=self.name, fmt=self.stream_format, started=started, failure=failure
            )
            cassette = request.record_path
        return ProviderResult(
            ok=failure is None,
            trace=trace,
            model=trace.model or request.model,
            exit_code=ran.process.exit_code if ran.process else None,
            error_class=failure[0] if failure else None,
            error_message=failure[1] if failure else None,
            cassette=cassette,
            warnings=(*self.warnings(parser), *stream_warnings(ran, request)),
        )


def prompt_needs_stdin(prompt: str) -> bool:
    """True when the prompt is too long for one argument or would be read as an option."""
    return prompt.startswith("-") or len(prompt.encode("utf-8")) > MAX_ARGV_PROMPT


def resolve_executable(program: str) -> str | None:
    """``program`` as an absolute path: looked up on PATH when it has no slash; None if not runnable."""
    if "/" not in program:
        return shutil.which(program)
    path = os.path.abspath(os.path.expanduser(program))
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


async def detect_cli(
    program: str, *, provider: str, env_var: str, install: str, home_env: Mapping[str, str] = {}
) -> CliFound | str:
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
        dirs = {key: os.path.join(home, sub) for key, sub in home_env.items()}
        for folder in dirs.values():  # some CLIs refuse a config dir that does not exist
            os.makedirs(folder, exist_ok=True)
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": home, **dirs, "DISABLE_AUTOUPDATER": "1"}
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
    seen = [0]

    def on_line(line: bytes) -> None:
        seen[0] += 1
        if failed:
            return
        try:
            feed(line)
        except StreamParseError as exc:
            failed.append(exc)

    try:
        process = await request.sandbox.run(
            argv,
            cwd=Path(request.workspace),
            env=env,
            timeout_s=request.timeout_s,
            stdout_path=Path(request.stdout_path),
            stderr_path=Path(request.stderr_path),
            stdin_data=stdin,
            max_capture_bytes=CAPTURE_BYTES,
            on_stdout_line=on_line,
            # Never on disk, however long the stream: the trial's secrets and what the CLI's env adds.
            secrets=with_secrets(request.secrets, env),
        )
    except ProcessStartError as exc:
        return CliRun(start_error=str(exc))
    except AgentStopped as exc:
        return CliRun(stopped=str(exc), parse_error=str(failed[0]) if failed else None, lines=seen[0])
    return CliRun(process=process, parse_error=str(failed[0]) if failed else None, lines=seen[0])


def cli_failure(ran: CliRun, request: ProviderRequest, *, cli: str) -> tuple[ErrorClass, str] | None:
    """The failures every agent CLI shares: not started, stopped, timed out, unreadable output."""
    if ran.start_error is not None:
        return "provider-unavailable", ran.start_error
    if ran.stopped is not None:
        return "provider-error", ran.stopped
    process = ran.process
    assert process is not None
    if process.timed_out and not ran.lines:
        # Every supported CLI streams an event as soon as it starts a session: silence for the whole
        # budget is a provider that never answered (a connection stall), not an agent that ran long.
        return (
            "provider-unavailable",
            f"{cli} printed nothing within the case budget of {request.timeout_s:g}s: the provider never "
            "answered (a connection stall or a hung CLI); its process group was killed",
        )
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
    # Cassettes are committed with the suite, so a credential the agent echoed must not reach one.
    known = with_secrets(request.secrets, request.env)
    secrets = [s.encode() for s in known]
    meta = CassetteMeta(
        cassette=CASSETTE_VERSION,
        provider=provider,
        model=request.model or DEFAULT_MODEL,
        format=fmt,
        lane=request.id.lane,
        case=request.id.case_id,
        condition=request.id.condition,
        trial=request.id.trial,
        fingerprint=request.id.fingerprint,
        recorded_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        error_class=failure[0] if failure else None,
        error_message=scrub(failure[1], known) if failure else None,
    )
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
