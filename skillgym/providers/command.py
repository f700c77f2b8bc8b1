"""The command provider: any agent program that reads the prompt on stdin and prints a skillgym-trace.

It is how a user plugs in an agent skillgym has no adapter for, and how the harness's own fault tests
drive a real process that hangs, crashes or prints garbage.
"""

from __future__ import annotations

import os
import shlex
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from ..errors import UsageError
from ..plugins import provider
from ..process import ProcessResult, ProcessStartError
from ..results import ErrorClass
from ..sandboxes.base import Network
from ..trace import Trace
from .agent_cli import Failure, record_stream
from .base import Detection, ProviderRequest, ProviderResult, ProviderSettings
from .tracefmt import TRACE_FORMAT, StreamParseError, parse_trace_stream

# Raw output kept in memory for parsing; beyond it the stream is still saved to stdout.txt (capped).
MAX_STREAM_BYTES = 32 * 1024 * 1024


def parse_agent_command(text: str | None) -> tuple[str, ...]:
    """``--agent-command`` split like a shell would split it (it is never run through a shell)."""
    if not text or not text.strip():
        raise UsageError(
            "the command provider needs --agent-command 'PROGRAM ARGS...' (a program that reads the prompt "
            "on stdin and prints skillgym-trace JSON lines on stdout)"
        )
    try:
        return tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"--agent-command {text!r} cannot be split into arguments: {exc}") from exc


def absolute_program(argv: Sequence[str]) -> tuple[str, ...]:
    """``argv`` with a relative program path (``./agent.sh``) made absolute from the current directory.

    The agent runs in each trial's workspace, so ``./agent.sh`` has to mean the one beside the user; a bare
    name (``my-agent``) is left for PATH.
    """
    program, *args = argv
    return (os.path.abspath(program) if "/" in program else program, *args)


def with_absolute_program(text: str | None) -> str | None:
    """``--agent-command`` as the run records it, its program made absolute (see ``absolute_program``): a
    ``--resume`` started in another directory must run the same program."""
    if text is None or not text.strip():
        return text
    argv = parse_agent_command(text)
    absolute = absolute_program(argv)
    return text if absolute == argv else shlex.join(absolute)


@provider
class CommandProvider:
    """Runs ``argv`` in the trial workspace with the trial's hermetic env and deadline."""

    name = "command"
    skill_dirs: tuple[str, ...] = (".claude/skills", ".agents/skills")
    runs_agent: bool = True
    network: Network = "none"  # a scripted agent needs no network unless its case asks for one
    passthrough_env: tuple[str, ...] = ()
    home_env: dict[str, str] = {}
    stream_format: str | None = TRACE_FORMAT

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = absolute_program(argv)
        # The program and the scripts it is given, wherever they live (a sandbox hides the user's home).
        self.sandbox_readable = tuple(arg for arg in self.argv if os.path.isabs(arg) and os.path.exists(arg))

    @classmethod
    def from_settings(cls, settings: ProviderSettings) -> CommandProvider:
        return cls(parse_agent_command(settings.agent_command))

    async def detect(self) -> Detection:
        program = self.argv[0]
        problem = None
        if "/" not in program:
            if shutil.which(program) is None:
                problem = f"agent command {program!r} was not found on PATH; check --agent-command"
        elif os.path.isdir(program):
            problem = (
                f"agent command {program} is a directory; --agent-command expects a program: "
                "name the executable file inside it"
            )
        elif not os.path.isfile(program):
            problem = f"agent command {program} does not exist; check --agent-command"
        elif not os.access(program, os.X_OK):
            problem = (
                f"agent command {program} is not executable: chmod +x it, or name its interpreter "
                f"(--agent-command 'sh {program}')"
            )
        if problem is not None:
            return Detection(provider=self.name, available=False, problem=problem)
        return Detection(provider=self.name, available=True, version=None, default_model=None)

    async def invoke(self, request: ProviderRequest) -> ProviderResult:
        started = time.time()
        try:
            proc = await request.sandbox.run(
                self.argv,
                cwd=Path(request.workspace),
                env=request.env,
                timeout_s=request.timeout_s,
                stdout_path=Path(request.stdout_path),
                stderr_path=Path(request.stderr_path),
                stdin_data=request.prompt.encode("utf-8"),
                max_capture_bytes=MAX_STREAM_BYTES,
                secrets=request.secrets,  # never on disk, however long the stream
            )
        except ProcessStartError as exc:
            return _failed("provider-unavailable", str(exc))
        trace, failure = _outcome(proc, request)
        cassette = None
        if request.record_path is not None:
            # A failed invocation is recorded as failed, so replaying it fails the same way.
            record_stream(request, provider=self.name, fmt=TRACE_FORMAT, started=started, failure=failure)
            cassette = request.record_path
        if failure is not None:
            return _failed(*failure, trace=trace)
        assert trace is not None  # every run that did not fail printed one
        return ProviderResult(
            ok=True, trace=trace, model=trace.model, exit_code=proc.exit_code, cassette=cassette
        )


def _outcome(proc: ProcessResult, request: ProviderRequest) -> tuple[Trace | None, Failure | None]:
    """The trace the agent printed and how the run failed, if it did."""
    if proc.timed_out:
        return None, ("timeout", f"agent command ran past the case budget of {request.timeout_s:g}s; killed")
    if proc.stdout_bytes > len(proc.stdout):
        return None, (
            "provider-error",
            f"agent printed {proc.stdout_bytes} bytes, more than the {MAX_STREAM_BYTES} skillgym parses; "
            f"the first part is in {request.stdout_path}",
        )
    try:
        trace = parse_trace_stream(proc.stdout.splitlines())
    except StreamParseError as exc:
        return None, ("provider-error", f"unparseable agent output in {request.stdout_path}: {exc}")
    if proc.exit_code != 0:
        how = f"signal {proc.signal}" if proc.signal else f"exit code {proc.exit_code}"
        tail = proc.stderr[-400:].decode("utf-8", errors="replace").strip()
        return trace, ("provider-error", f"agent command failed with {how}: {tail}")
    if trace.is_error:
        return trace, ("provider-error", f"agent reported an error: {trace.final_text[:400]}")
    return trace, None


def _failed(error_class: ErrorClass, message: str, *, trace: Trace | None = None) -> ProviderResult:
    return ProviderResult(ok=False, trace=trace or Trace(), error_class=error_class, error_message=message)
