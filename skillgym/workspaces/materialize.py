"""Building one trial's workspace: fresh dirs, template copy, skill install, injected text, bootstrap."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import anyio.lowlevel
import anyio.to_thread

from ..errors import SkillgymError
from ..model import Case, Command, Condition, Data, ExecutionCase, Suite, WorkspacePreset
from ..process import ProcessResult, ProcessStartError
from ..redact import scrub
from ..sandboxes.base import UNSANDBOXED, TrialSandbox
from .env import home_dirs, with_command_env
from .layout import TrialLayout
from .paths import UnsafePathError, check_segment, check_tree_links, resolve_inside
from .removal import remove_tree

# Bootstrap output is kept for the log, not for parsing; a runaway `npm install` must not fill memory.
_MAX_COMMAND_OUTPUT = 4 * 1024 * 1024


class EnvironmentSetupError(SkillgymError, RuntimeError):
    """A trial's workspace could not be built; the runner records it as that trial's environment-error.

    ``command``, ``returncode``, ``timed_out`` and ``log_path`` are set when a bootstrap or setup
    command failed (``exit_code`` stays the process exit code every SkillgymError carries).
    """

    def __init__(
        self,
        message: str,
        *,
        command: tuple[str, ...] | None = None,
        returncode: int | None = None,
        timed_out: bool = False,
        log_path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.command = command
        self.returncode = returncode
        self.timed_out = timed_out
        self.log_path = log_path


class Materialized(Data, frozen=True, kw_only=True):
    """A ready workspace: where the agent starts, what text to inject, which skill dirs were installed."""

    layout: TrialLayout
    cwd: str
    injected: str = ""
    installed: tuple[str, ...] = ()
    commands_run: int = 0
    bootstrap_log: str | None = None


async def materialize(
    layout: TrialLayout,
    *,
    suite: Suite,
    case: Case,
    condition: Condition,
    preset: WorkspacePreset | None,
    env: Mapping[str, str],
    skill_dirs: Sequence[str],
    home_env: Mapping[str, str] = {},
    first: Callable[[], None] | None = None,
    sandbox: TrialSandbox = UNSANDBOXED,
    secrets: tuple[str, ...] = (),
) -> Materialized:
    """Build the trial's workspace and hermetic home from scratch, then run its commands.

    ``first`` runs before anything else, in the same worker-thread call that makes the dirs (the caller's
    own files: one hand-off to a thread instead of two); what it raises propagates unchanged.

    In order: remove what an earlier attempt of this trial left and create the dirs; copy the preset's
    template (relative to the suite root) into the workspace; install each of the condition's skills at
    every one of ``skill_dirs`` (relative to the workspace; a folder is copied whole, a single file
    becomes ``SKILL.md``); read the condition's injected text; run the preset's bootstrap commands and
    then the case's setup commands, as argv lists with ``env`` (a command's own env cannot override the
    harness variables), each with its own timeout, output appended to ``<trial_dir>/bootstrap.log``
    (each of ``secrets`` replaced before it is written), inside ``sandbox``.

    Raises ``EnvironmentSetupError`` for anything that stops this one trial from starting.
    """
    suite_root = Path(suite.root)
    installed, injected = await anyio.to_thread.run_sync(
        _prepare,
        layout,
        suite_root,
        condition,
        preset,
        tuple(dict.fromkeys(skill_dirs)),
        tuple(home_dirs(home_env).values()),
        first,
        limiter=_setup_limiter(),
    )
    workspace = Path(layout.workspace)
    default_cwd = (
        _cwd_in(workspace, preset.cwd, what=f"workspace preset {preset.id!r} cwd") if preset else None
    )
    commands: list[tuple[str, Command]] = []
    if preset is not None:
        commands += [(f"workspace preset {preset.id!r} bootstrap", c) for c in preset.bootstrap]
    if isinstance(case, ExecutionCase):
        commands += [(f"case {case.id!r} setup", c) for c in case.setup]
    log = Path(layout.bootstrap_log)
    for number, (owner, command) in enumerate(commands, start=1):
        label = f"{owner} command {command.id or number}"
        cwd = _cwd_in(workspace, command.cwd, what=f"{label} cwd") if command.cwd else default_cwd
        await _run_command(
            label,
            command,
            cwd=cwd or workspace,
            env=env,
            home_env=home_env,
            log=log,
            sandbox=sandbox,
            secrets=secrets,
        )
    if preset is not None and default_cwd is not None and not default_cwd.is_dir():
        raise EnvironmentSetupError(
            f"workspace preset {preset.id!r} cwd {default_cwd} does not exist after the template copy and "
            "bootstrap; add it to the template or fix the preset's cwd"
        )
    agent_cwd = default_cwd or workspace
    return Materialized(
        layout=layout,
        cwd=str(agent_cwd),
        injected=injected,
        installed=installed,
        commands_run=len(commands),
        bootstrap_log=str(log) if commands else None,
    )


# Dirs and copies are made at most one per core at a time, in the order trials asked. Given a thread each,
# fifty setups share the interpreter and the cores and all finish late (measured: the first agent of a
# 50-agent run started after 45 ms instead of 15); in turn, each agent starts as soon as its own is done.
_SETUP_LIMITER: anyio.lowlevel.RunVar[anyio.CapacityLimiter] = anyio.lowlevel.RunVar("skillgym_setups")


def _setup_limiter() -> anyio.CapacityLimiter:
    try:
        return _SETUP_LIMITER.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(max(2, os.cpu_count() or 1))
        _SETUP_LIMITER.set(limiter)
        return limiter


def _prepare(
    layout: TrialLayout,
    suite_root: Path,
    condition: Condition,
    preset: WorkspacePreset | None,
    skill_dirs: tuple[str, ...],
    home_subdirs: tuple[str, ...],
    first: Callable[[], None] | None,
) -> tuple[tuple[str, ...], str]:
    if first is not None:
        first()
    home = Path(layout.home)
    try:
        # A retried trial (--resume) must not see files the interrupted attempt left behind.
        for stale in (layout.workspace, layout.home, layout.tmux_tmpdir, layout.fixture_log_dir, layout.tmp):
            remove_tree(Path(stale))
        Path(layout.bootstrap_log).unlink(missing_ok=True)
        for folder in (
            Path(layout.workspace),
            home,
            *(home / sub for sub in home_subdirs),
            Path(layout.fixture_log_dir),
        ):
            folder.mkdir(parents=True, exist_ok=True)
        Path(layout.tmp).mkdir(mode=0o700, exist_ok=True)
        # tmux refuses a socket dir other users can enter.
        Path(layout.tmux_tmpdir).mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise EnvironmentSetupError(
            f"cannot prepare the trial dir {layout.trial_dir}: {exc}; check its permissions and free space"
        ) from exc
    workspace = Path(layout.workspace)
    try:
        if preset is not None and preset.template:
            _copy_template(suite_root, preset, workspace)
        installed = _install_skills(suite_root, condition, workspace, skill_dirs)
        injected = injected_text(suite_root, condition)
    except UnsafePathError as exc:
        raise EnvironmentSetupError(str(exc)) from exc
    return installed, injected


def _copy_template(suite_root: Path, preset: WorkspacePreset, workspace: Path) -> None:
    what = f"workspace preset {preset.id!r} template"
    source = resolve_inside(suite_root, preset.template or "", what=what)
    if not source.is_dir():
        raise EnvironmentSetupError(
            f"{what} {source} is not a directory; create it or fix the preset's template path "
            f"(relative to the suite root {suite_root})"
        )
    check_tree_links(source, suite_root, what=f"{what} {source}")
    try:
        shutil.copytree(source, workspace, dirs_exist_ok=True)
    except (OSError, shutil.Error) as exc:
        raise EnvironmentSetupError(f"copying {what} {source} into {workspace} failed: {exc}") from exc


def _install_skills(
    suite_root: Path, condition: Condition, workspace: Path, skill_dirs: tuple[str, ...]
) -> tuple[str, ...]:
    installed: list[str] = []
    for item in condition.install:
        what = f"condition {condition.id!r} skill {item.name!r}"
        check_segment(item.name, what=f"condition {condition.id!r} skill name")
        source = resolve_inside(suite_root, item.source, what=f"{what} source")
        if source.is_dir():
            check_tree_links(source, suite_root, what=f"{what} source {source}")
        elif not source.is_file():
            raise EnvironmentSetupError(
                f"{what} source {source} does not exist; fix the path (relative to the suite root "
                f"{suite_root}) or create the skill folder"
            )
        for skill_dir in skill_dirs:
            target = resolve_inside(workspace, skill_dir, what="provider skill dir") / item.name
            try:
                if source.is_dir():
                    shutil.copytree(source, target, dirs_exist_ok=True)
                else:  # a lone file (a bootstrap stub) is what the agent finds as the skill's SKILL.md
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, target / "SKILL.md")
            except (OSError, shutil.Error) as exc:
                raise EnvironmentSetupError(
                    f"installing {what} from {source} at {target} failed: {exc}"
                ) from exc
            installed.append(str(target))
    return tuple(installed)


def injected_text(suite_root: Path, condition: Condition) -> str:
    """The condition's inject files (in order) and then its inject_text, joined by blank lines."""
    pieces: list[str] = []
    for relative in condition.inject:
        what = f"condition {condition.id!r} inject file"
        path = resolve_inside(suite_root, relative, what=what)
        try:
            pieces.append(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise EnvironmentSetupError(
                f"{what} {path} does not exist; create it or fix the path (relative to {suite_root})"
            ) from exc
        except UnicodeDecodeError as exc:
            raise EnvironmentSetupError(
                f"{what} {path} is not UTF-8 text (bad byte at offset {exc.start}); save it as UTF-8"
            ) from exc
        except OSError as exc:
            raise EnvironmentSetupError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    pieces.append(condition.inject_text)
    return "\n\n".join(piece.strip() for piece in pieces if piece.strip())


def _cwd_in(workspace: Path, relative: str | None, *, what: str) -> Path | None:
    if relative is None:
        return None
    try:
        return resolve_inside(workspace, relative, what=what)
    except UnsafePathError as exc:
        raise EnvironmentSetupError(str(exc)) from exc


async def _run_command(
    label: str,
    command: Command,
    *,
    cwd: Path,
    env: Mapping[str, str],
    home_env: Mapping[str, str],
    log: Path,
    sandbox: TrialSandbox,
    secrets: tuple[str, ...],
) -> None:
    argv = command.argv
    shown = shlex.join(argv)
    try:
        result = await sandbox.run(
            argv,
            cwd=cwd,
            env=with_command_env(env, command.env, home_env=home_env),
            timeout_s=command.timeout_s,
            max_capture_bytes=_MAX_COMMAND_OUTPUT,
        )
    except ProcessStartError as exc:
        entry = scrub(f"$ {shown}\n[could not start: {exc}]\n\n", secrets)
        await anyio.to_thread.run_sync(_append_log, log, entry)
        raise EnvironmentSetupError(
            f"{label} `{shown}` could not start: {exc}", command=argv, log_path=str(log)
        ) from exc
    await anyio.to_thread.run_sync(_append_log, log, scrub(_log_entry(shown, cwd, result), secrets))
    if result.timed_out:
        raise EnvironmentSetupError(
            f"{label} `{shown}` did not finish within its {command.timeout_s:g}s timeout and was killed; "
            f"its output so far is in {log}; raise the command's timeout_s or make it faster",
            command=argv,
            timed_out=True,
            log_path=str(log),
        )
    if result.exit_code != 0:
        how = (
            f"exited with {result.exit_code}"
            if result.exit_code is not None
            else f"died of signal {result.signal}"
        )
        raise EnvironmentSetupError(
            f"{label} `{shown}` {how} (cwd {cwd}); its output is in {log}; fix the command or what it needs",
            command=argv,
            returncode=result.exit_code,
            log_path=str(log),
        )


def _log_entry(shown: str, cwd: Path, result: ProcessResult) -> str:
    parts = [f"$ {shown}    # cwd {cwd}\n"]
    for name, data in (("stdout", result.stdout), ("stderr", result.stderr)):
        if data:
            text = data.decode("utf-8", errors="replace")
            parts.append(f"--- {name} ---\n{text}{'' if text.endswith(os.linesep) else os.linesep}")
    if result.truncated:
        parts.append(f"[output cut at {_MAX_COMMAND_OUTPUT} bytes per stream]\n")
    ended = "timed out" if result.timed_out else f"exit {result.exit_code}"
    if result.signal is not None and not result.timed_out:
        ended = f"signal {result.signal}"
    parts.append(f"[{ended} after {result.duration_s:.2f}s]\n\n")
    return "".join(parts)


def _append_log(log: Path, text: str) -> None:
    with open(log, "a", encoding="utf-8") as file:
        file.write(text)
