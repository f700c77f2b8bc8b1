"""One trial, start to finish: workspace, provider, grade, files — every failure becomes data."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec

from .files import write_atomic
from .grading import GradeContext, grade
from .model import Case, Suite
from .plan import WorkItem
from .prompts import build_prompt
from .providers.base import Provider, ProviderRequest, ProviderResult
from .redact import redact_env, scrub
from .results import ErrorClass, Grade, Status, TrialPaths, TrialResult
from .trace import Trace, with_total
from .workspaces import EnvironmentSetupError, TrialLayout, cleanup, hermetic_env, layout_for, materialize

# Extra time the harness allows past the case budget before it abandons a provider that ignores its own
# deadline: the provider kills its process group at the budget; this only guards against a stuck adapter.
DEADLINE_GRACE_S = 10.0

_json = msgspec.json.Encoder()


class TrialSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Run-wide knobs a trial needs."""

    run_dir: str
    run_id: str
    keep_workspaces: bool = False
    record: bool = False
    passthrough: dict[str, str] = {}
    secrets: tuple[str, ...] = ()


def trial_dir(settings: TrialSettings, item: WorkItem) -> Path:
    return Path(settings.run_dir) / "trials" / item.key


def workspace_plan(suite: Suite, case: Case, item: WorkItem, settings: TrialSettings) -> dict[str, Any]:
    """The resolved workspace of a trial, as shown in ``trial.start`` (secret values redacted)."""
    layout = layout_for(trial_dir(settings, item))
    preset = next((p for p in suite.presets if p.id == case.workspace), None)
    return {
        "preset": case.workspace,
        "workspace": layout.workspace,
        "template": preset.template if preset else None,
        "bootstrap": [list(c.argv) for c in preset.bootstrap] if preset else [],
        "env": redact_env({**(preset.env if preset else {}), **case.env}),
    }


async def run_trial(
    suite: Suite,
    case: Case,
    item: WorkItem,
    provider: Provider,
    settings: TrialSettings,
    *,
    clock: Callable[[], float] = time.time,
) -> TrialResult:
    """Run one work item and write its files; never raises for a failure inside the trial."""
    started = clock()
    folder = trial_dir(settings, item)
    layout = layout_for(folder)
    folder.mkdir(parents=True, exist_ok=True)
    condition = next(c for c in suite.conditions if c.id == item.condition)
    preset = next((p for p in suite.presets if p.id == case.workspace), None)
    trial_id = f"{settings.run_id}/{item.key}"  # unique across concurrent runs: cleanup kills by this tag
    env = hermetic_env(
        layout,
        trial_id=trial_id,
        suite_root=Path(suite.root),
        passthrough=settings.passthrough,
        preset_env=preset.env if preset else {},
        lane=case.lane,
        condition_env=condition.env,
        case_env=case.env,
    )
    outcome: ProviderResult | None = None
    graded: Grade | None = None
    error: tuple[ErrorClass, str] | None = None
    try:
        ready = await materialize(
            suite=suite,
            case=case,
            condition=condition,
            preset=preset,
            layout=layout,
            env=env,
            skill_dirs=provider.skill_dirs,
        )
        prompt = build_prompt(case, injected=ready.injected, fixtures_dir=env["SKILLGYM_FIXTURES"])
        (folder / "prompt.txt").write_text(scrub(prompt, settings.secrets), encoding="utf-8")
        request = _request(item, case, prompt, layout, env, folder, settings, cwd=ready.cwd)
        agent_started = time.time()  # evidence older than this came from the template, not the agent
        outcome = await _invoke(provider, request)
        if not outcome.ok:
            error = (outcome.error_class or "provider-error", outcome.error_message or "provider failed")
        graded = await _grade(suite, case, outcome, layout, env, agent_started)
    except EnvironmentSetupError as exc:
        error = ("environment-error", str(exc))
    except _GraderError as exc:
        error = ("grader-error", str(exc))
    status: Status = "errored" if error else ("passed" if graded is not None and graded.passed else "failed")
    if outcome is not None and not outcome.ok:
        status = "errored"
    keep = settings.keep_workspaces or status != "passed"
    with anyio.CancelScope(shield=True):
        await cleanup(layout, trial_id=trial_id, keep_workspace=keep)
    trace = outcome.trace if outcome else None
    if trace is not None and trace.usage is not None:
        trace = msgspec.structs.replace(trace, usage=with_total(trace.usage))
    paths = _write_files(
        folder, trace, settings, keep_workspace=keep, case=case, layout_workspace=layout.workspace
    )
    finished = clock()
    result = TrialResult(
        key=item.key,
        lane=item.lane,
        case_id=item.case_id,
        category=case.category,
        condition=item.condition,
        provider=item.provider,
        model=(outcome.model if outcome and outcome.model else None)
        or (trace.model if trace else None)
        or item.model,
        trial=item.trial,
        fingerprint=item.fingerprint,
        status=status,
        error_class=error[0] if error else None,
        error_message=scrub(error[1], settings.secrets) if error else None,
        grade=graded,
        usage=trace.usage if trace else None,
        warnings=tuple(scrub(w, settings.secrets) for w in outcome.warnings) if outcome else (),
        started_at=started,
        finished_at=finished,
        duration_s=round(finished - started, 6),
        paths=paths,
    )
    write_atomic(folder / "result.json", scrub(_json.encode(result).decode(), settings.secrets))
    return result


def _request(
    item: WorkItem,
    case: Case,
    prompt: str,
    layout: TrialLayout,
    env: dict[str, str],
    folder: Path,
    s: TrialSettings,
    *,
    cwd: str,
) -> ProviderRequest:
    return ProviderRequest(
        key=item.key,
        lane=item.lane,
        case_id=item.case_id,
        condition=item.condition,
        trial=item.trial,
        fingerprint=item.fingerprint,
        model=item.model,
        prompt=prompt,
        workspace=cwd,
        trial_dir=str(folder),
        env=env,
        timeout_s=case.budget.timeout_s,
        max_turns=case.budget.max_turns,
        stdout_path=layout.stdout,
        stderr_path=layout.stderr,
        record_path=str(folder / "cassette.jsonl") if s.record else None,
    )


async def _invoke(provider: Provider, request: ProviderRequest) -> ProviderResult:
    try:
        with anyio.fail_after(request.timeout_s + DEADLINE_GRACE_S):
            return await provider.invoke(request)
    except TimeoutError:
        message = f"provider {provider.name!r} did not return within {request.timeout_s:g}s (case budget)"
        return ProviderResult(ok=False, trace=Trace(), error_class="timeout", error_message=message)
    except Exception as exc:  # an adapter bug is this trial's provider error, not the run's crash
        message = f"provider {provider.name!r} raised {type(exc).__name__}: {exc}"
        return ProviderResult(ok=False, trace=Trace(), error_class="provider-error", error_message=message)


class _GraderError(Exception):
    pass


async def _grade(
    suite: Suite,
    case: Case,
    outcome: ProviderResult,
    layout: TrialLayout,
    env: dict[str, str],
    started: float,
) -> Grade:
    context = GradeContext(
        provider_ok=outcome.ok,
        workspace=layout.workspace,
        trial_dir=layout.trial_dir,
        fixture_log_dir=layout.fixture_log_dir,
        tmux_tmpdir=layout.tmux_tmpdir,
        env=env,
        skills=tuple(s.name for s in suite.skills),
        suite_rules=suite.anti_patterns,
        agent_started_at=started,
    )
    try:
        return await grade(case, outcome.trace, context)
    except Exception as exc:
        raise _GraderError(f"grader crashed on case {case.id!r}: {type(exc).__name__}: {exc}") from exc


def _write_files(
    folder: Path,
    trace: Trace | None,
    s: TrialSettings,
    *,
    keep_workspace: bool,
    case: Case,
    layout_workspace: str,
) -> TrialPaths:
    run_dir = Path(s.run_dir)

    def rel(path: Path) -> str:
        return path.relative_to(run_dir).as_posix()

    trace_path = folder / "trace.json"
    write_atomic(trace_path, scrub(_json.encode(trace or Trace()).decode(), s.secrets))
    usage_path = None
    if trace is not None and trace.usage is not None:
        usage_path = folder / "token-usage.json"
        write_atomic(usage_path, _json.encode(trace.usage).decode())
    streams = {}
    for name in ("stdout", "stderr"):
        path = folder / f"{name}.txt"
        if not path.exists():
            path.write_bytes(b"")
        elif s.secrets:
            _scrub_file(path, s.secrets)
        streams[name] = rel(path)
    workspace = Path(layout_workspace)
    bundle = workspace / case.bundle_path if hasattr(case, "bundle_path") else None
    cassette = folder / "cassette.jsonl"
    return TrialPaths(
        dir=rel(folder),
        result=rel(folder / "result.json"),
        trace=rel(trace_path),
        stdout=streams["stdout"],
        stderr=streams["stderr"],
        token_usage=rel(usage_path) if usage_path else None,
        workspace=rel(workspace) if keep_workspace and workspace.exists() else None,
        bundle=rel(bundle) if keep_workspace and bundle is not None and bundle.exists() else None,
        cassette=rel(cassette) if cassette.exists() else None,
    )


def _scrub_file(path: Path, secrets: tuple[str, ...]) -> None:
    text = path.read_bytes().decode("utf-8", errors="replace")
    cleaned = scrub(text, secrets)
    if cleaned != text:
        write_atomic(path, cleaned)
        os.utime(path)
