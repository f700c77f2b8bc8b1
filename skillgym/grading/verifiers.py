"""Verifiers judge real effects (files, fixture logs, exit codes, tmux servers).

A verifier that cannot give a verdict (it raised, exited, cannot be imported or returned nonsense) is the
suite's bug, not the agent's failure: it raises ``VerifierError`` and the trial becomes a grader-error.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import os
import shlex
import stat
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import anyio.to_thread
import msgspec

from ..custom_verifier import verifier_context
from ..errors import SkillgymError
from ..model import (
    ArtifactExists,
    CommandCheck,
    CustomVerifier,
    FileContains,
    FileExists,
    FixtureLogContains,
    NoLiveSessions,
    Verifier,
)
from ..plugins import VERIFIER_KINDS, verifier_kind
from ..process import ProcessStartError, run_process
from ..results import CheckOutcome
from ..workspaces.paths import UnsafePathError, resolve_inside
from .artifacts import find_artifacts, judge_artifacts
from .context import GradeContext
from .patterns import compile_pattern, show_pattern

__all__ = ("VerifierError", "run_verifier", "run_verifiers")

# Larger files are judged on their first part: a verifier reads evidence, not bulk data.
MAX_READ_BYTES: Final = 16 * 1024 * 1024
TMUX_QUERY_TIMEOUT_S: Final = 10.0
# What tmux prints when a socket has no server behind it: a leftover socket file, not a live session.
_NO_SERVER: Final = (
    "no server running",
    "error connecting",
    "no such file or directory",
    "connection refused",
)

_Verdict = tuple[bool, str]


class VerifierError(SkillgymError, RuntimeError):
    """A verifier gave no verdict; the message names it and says what went wrong."""


class _LogRecord(msgspec.Struct):
    """One line of a fixture's ground-truth log; other fields are ignored."""

    event: str
    text: str = ""


def _read_text(path: Path) -> str:
    with path.open("rb") as file:
        return file.read(MAX_READ_BYTES).decode("utf-8", errors="replace")


def _unresolvable(exc: OSError | RuntimeError) -> str:
    """Why a path the agent left cannot be followed: a symlink loop (RuntimeError) or an OS error."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return str(exc) or type(exc).__name__


def _workspace_file(ctx: GradeContext, relative: str) -> tuple[Path | None, str]:
    """The file ``relative`` in the workspace, or None and why not.

    What the agent left there (a symlink loop, a folder it cannot enter) is a failed check, not the
    verifier's error.
    """
    try:
        path = resolve_inside(Path(ctx.workspace), relative, within="the workspace")
        if not path.exists():
            return None, f"{relative} does not exist in the workspace"
        if not path.is_file():
            return None, f"{relative} is not a regular file"
    except UnsafePathError as exc:
        return None, str(exc)
    except (OSError, RuntimeError) as exc:
        return None, f"cannot resolve {relative} in the workspace ({_unresolvable(exc)})"
    return path, ""


@verifier_kind("file-exists")
async def _file_exists(v: FileExists, ctx: GradeContext) -> _Verdict:
    path, problem = _workspace_file(ctx, v.path)
    return (True, f"{v.path} exists") if path is not None else (False, problem)


@verifier_kind("file-contains")
async def _file_contains(v: FileContains, ctx: GradeContext) -> _Verdict:
    path, problem = _workspace_file(ctx, v.path)
    if path is None:
        return False, problem
    try:  # what the agent left may be unreadable: its doing, so a failed check, not a broken verifier
        text = await anyio.to_thread.run_sync(_read_text, path)
    except (OSError, RuntimeError) as exc:
        return False, f"cannot read {v.path}: {_unresolvable(exc)}"
    match = compile_pattern(v.pattern).search(text)
    if match is None:
        return False, f"{v.path} does not contain {show_pattern(v.pattern)}"
    line = text.count("\n", 0, match.start()) + 1
    return True, f"{v.path} contains {show_pattern(v.pattern)} (line {line})"


def _clip(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


@verifier_kind("fixture-log")
async def _fixture_log(v: FixtureLogContains, ctx: GradeContext) -> _Verdict:
    if not v.fixture or Path(v.fixture).name != v.fixture or v.fixture in {".", ".."}:
        return False, f"fixture name {v.fixture!r} is not a plain name, so it has no log file"
    path = Path(ctx.fixture_log_dir) / f"{v.fixture}.jsonl"
    if not path.is_file():
        return False, f"the fixture never ran (no log at {path})"
    try:
        text = await anyio.to_thread.run_sync(_read_text, path)
    except OSError as exc:
        return False, f"cannot read the {v.fixture} log {path}: {exc.strerror or exc}"
    records: list[_LogRecord] = []
    broken = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            records.append(msgspec.json.decode(line, type=_LogRecord))
        except msgspec.DecodeError:
            broken += 1  # a line cut short by a killed fixture; the rest still counts
    events = [r for r in records if r.event == v.event]
    if v.pattern is None:
        matching = events
        wanted = f"{v.event!r} event(s)"
    else:
        regex = compile_pattern(v.pattern)
        matching = [r for r in events if regex.search(r.text)]
        wanted = f"{v.event!r} event(s) matching {show_pattern(v.pattern)}"
    note = f" ({broken} unreadable line(s) skipped)" if broken else ""
    if len(matching) >= v.min_count:
        return True, f"the {v.fixture} log has {len(matching)} {wanted}{note}"
    seen = ", ".join(_clip(r.text) for r in events[:5]) + (", ..." if len(events) > 5 else "")
    saw = f"; its {v.event!r} events: {seen}" if events else f"; it logged no {v.event!r} event"
    return False, f"the {v.fixture} log has {len(matching)} {wanted}, need {v.min_count}{saw}{note}"


def _tail(data: bytes, limit: int = 300) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def _env(ctx: GradeContext, **extra: str) -> dict[str, str]:
    env = dict(ctx.env)
    # Without a PATH nothing resolves; a context built without the trial env still deserves a clear check.
    env.setdefault("PATH", os.environ.get("PATH", os.defpath))
    env.update(extra)
    return env


@verifier_kind("command")
async def _command(v: CommandCheck, ctx: GradeContext) -> _Verdict:
    shown = shlex.join(v.argv)
    try:
        result = await ctx.sandbox.run(v.argv, cwd=Path(ctx.workspace), env=_env(ctx), timeout_s=v.timeout_s)
    except ProcessStartError as exc:
        return False, str(exc)
    if result.timed_out:
        return False, f"`{shown}` did not finish within {v.timeout_s:g} s"
    if result.exit_code != v.exit_code:
        how = (
            f"exited {result.exit_code}"
            if result.exit_code is not None
            else f"was killed by signal {result.signal}"
        )
        stderr = _tail(result.stderr)
        return False, f"`{shown}` {how}, expected {v.exit_code}" + (f"; stderr: {stderr}" if stderr else "")
    if v.stdout_pattern is not None:
        stdout = result.stdout.decode("utf-8", errors="replace")
        if compile_pattern(v.stdout_pattern).search(stdout) is None:
            return (
                False,
                f"`{shown}` printed nothing matching {show_pattern(v.stdout_pattern)}; "
                f"stdout: {_tail(result.stdout)!r}",
            )
        return True, f"`{shown}` exited {v.exit_code} and printed {show_pattern(v.stdout_pattern)}"
    return True, f"`{shown}` exited {v.exit_code}"


def _sockets(tmux_tmpdir: Path) -> list[Path]:
    found: list[Path] = []
    for folder in sorted(tmux_tmpdir.glob("tmux-*")):
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir()):
            try:
                if stat.S_ISSOCK(entry.lstat().st_mode):
                    found.append(entry)
            except OSError:
                continue
    return found


@verifier_kind("no-live-sessions")
async def _no_live_sessions(v: NoLiveSessions, ctx: GradeContext) -> _Verdict:
    root = Path(ctx.tmux_tmpdir)
    sockets = _sockets(root) if root.is_dir() else []
    if not sockets:
        return True, f"no tmux server socket under {root}"
    env = _env(ctx, TMUX_TMPDIR=ctx.tmux_tmpdir)
    env.pop("TMUX", None)  # inside a tmux pane, this would point tmux at the grader's own server
    live: list[str] = []
    for socket in sockets:
        argv = ["tmux", "-S", str(socket), "list-sessions", "-F", "#{session_name}"]
        try:
            result = await run_process(argv, cwd=root, env=env, timeout_s=TMUX_QUERY_TIMEOUT_S)
        except ProcessStartError as exc:
            return False, f"cannot ask tmux about {socket}: {exc}"
        if result.timed_out:
            return False, f"the tmux server on {socket} did not answer within {TMUX_QUERY_TIMEOUT_S:g} s"
        if result.exit_code == 0:
            names = [n for n in result.stdout.decode("utf-8", errors="replace").splitlines() if n.strip()]
            live.extend(f"{name!r} (socket {socket})" for name in names)
            continue
        stderr = _tail(result.stderr)
        if not any(marker in stderr.lower() for marker in _NO_SERVER):
            return (
                False,
                f"cannot tell whether {socket} has live sessions: tmux exited {result.exit_code}: {stderr}",
            )
    if live:
        return False, f"tmux session{'s' if len(live) > 1 else ''} still running: {', '.join(live)}"
    return True, f"no live tmux session on {len(sockets)} socket(s) under {root}"


@verifier_kind("artifact-exists")
async def _artifact_exists(v: ArtifactExists, ctx: GradeContext) -> _Verdict:
    workspace = Path(ctx.workspace)
    if not workspace.is_dir():
        return False, f"the workspace {workspace} does not exist"
    try:
        found = await anyio.to_thread.run_sync(
            lambda: find_artifacts(
                workspace,
                v.artifact,
                v.path_patterns,
                workspace=workspace,
                not_before=ctx.agent_started_at,
                skip=(Path(ctx.fixture_log_dir),),
            )
        )
    except (OSError, RuntimeError) as exc:  # a path the agent left cannot be followed: its doing
        return False, f"cannot search the workspace for {v.artifact} files: {_unresolvable(exc)}"
    return judge_artifacts(found, v.artifact, v.min_count, v.path_patterns)


def _interpret(target: str, result: object) -> _Verdict:
    if isinstance(result, bool):
        return result, f"{target} returned {result}"
    if isinstance(result, CheckOutcome):
        return result.passed, result.message or f"{target} returned passed={result.passed}"
    if (
        isinstance(result, tuple)
        and len(result) == 2
        and isinstance(result[0], bool)
        and isinstance(result[1], str)
    ):
        return result[0], result[1] or f"{target} returned {result[0]}"
    raise VerifierError(
        f"custom verifier {target} returned {type(result).__name__} {_clip(repr(result))}; "
        "return a bool, a (bool, message) tuple or a CheckOutcome"
    )


def _import_from_suite(module_name: str, suite_root: str) -> Any:
    # Verifier modules usually live in the suite (``_checks.py`` beside the cases), like the helpers a
    # case file imports while the suite loads: look there first, then wherever Python looks.
    if suite_root and suite_root not in sys.path:
        sys.path.insert(0, suite_root)
        try:
            return importlib.import_module(module_name)
        finally:
            with contextlib.suppress(ValueError):
                sys.path.remove(suite_root)
    return importlib.import_module(module_name)


@verifier_kind("custom")
async def _custom(v: CustomVerifier, ctx: GradeContext) -> _Verdict:
    module_name, _, function_name = v.target.partition(":")
    try:
        module = _import_from_suite(module_name, ctx.suite_root)
    except Exception as exc:
        raise VerifierError(
            f"cannot import module {module_name!r} of custom verifier {v.target!r}: "
            f"{type(exc).__name__}: {exc}; make it importable (a module beside the suite's case files is)"
        ) from exc
    function = getattr(module, function_name, None)
    if not callable(function):
        raise VerifierError(
            f"module {module_name!r} has no function {function_name!r} (custom verifier {v.target!r})"
        )
    config: dict[str, Any] = dict(v.config)  # a copy: the function must not change the case
    view = verifier_context(ctx)
    try:
        if inspect.iscoroutinefunction(function):
            result = await function(view, config)
        else:
            result = await _in_own_thread(function, view, config)
        if inspect.isawaitable(result):
            result = await result
    except SystemExit as exc:  # user code must not end the run
        raise VerifierError(f"custom verifier {v.target!r} called sys.exit({exc.code!r})") from exc
    return _interpret(v.target, result)


async def _in_own_thread(function: Callable[..., object], *args: object) -> object:
    """``function(*args)`` in a daemon thread of its own, abandoned if the trial is cancelled or times out.

    A slow synchronous check must not stall other trials, and one that blocks for good must neither hold
    its trial past the case's wall-clock limit nor keep skillgym from exiting (a worker thread can be
    neither interrupted nor left behind at exit).
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[object] = loop.create_future()

    def settle(outcome: object, error: BaseException | None) -> None:
        if done.done():  # abandoned meanwhile
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(outcome)

    def body() -> None:
        error: BaseException | None = None
        outcome: object = None
        try:
            outcome = function(*args)
        except BaseException as exc:  # SystemExit included: it is reported, not obeyed
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits for this verdict
            loop.call_soon_threadsafe(settle, outcome, error)

    threading.Thread(target=body, name="skillgym custom verifier", daemon=True).start()
    return await done


async def _judge(verifier: Verifier, ctx: GradeContext) -> _Verdict:
    judge = VERIFIER_KINDS.get(verifier_tag(verifier))
    verdict: _Verdict = await judge(verifier, ctx)
    return verdict


def verifier_tag(verifier: object) -> str:
    """The tag a verifier Struct is registered under (``file-exists``, ``custom``, ...)."""
    config = getattr(type(verifier), "__struct_config__", None)
    tag = getattr(config, "tag", None)
    if not isinstance(tag, str):
        raise TypeError(f"{type(verifier).__name__} is not a tagged verifier Struct")
    return tag


async def run_verifier(verifier: Verifier, ctx: GradeContext) -> CheckOutcome:
    """Judge one verifier; raises ``VerifierError`` (naming it) when it gives no verdict."""
    try:
        passed, message = await _judge(verifier, ctx)
    except VerifierError as exc:
        raise VerifierError(f"verifier {verifier.id!r}: {exc}") from exc
    except Exception as exc:
        raise VerifierError(f"verifier {verifier.id!r} crashed: {type(exc).__name__}: {exc}") from exc
    return CheckOutcome(
        id=verifier.id, kind="verifier", required=verifier.required, passed=passed, message=message
    )


async def run_verifiers(verifiers: Sequence[Verifier], ctx: GradeContext) -> tuple[CheckOutcome, ...]:
    """Judge each verifier in order (one at a time, so command checks never race each other)."""
    return tuple([await run_verifier(v, ctx) for v in verifiers])
