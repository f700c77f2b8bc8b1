"""Starting a run from the command line: reporters, fresh runs, resumed runs and report rebuilds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import anyio
import msgspec
from rich.console import Console

from .adaptive import resumed_policy, with_aa
from .bus import Subscriber
from .claim import claim_run_dir
from .console import make_console
from .cost.budget import replace_budget
from .cost.prices import load_prices
from .errors import UsageError
from .eventlog import RunLog, mend_tail, read_run_log
from .events import Counts
from .executors.flags import executor_settings
from .gates.step import recorded_gate_step
from .judge.flags import DEFAULT_JUDGE_TIMEOUT_S
from .loader import load_suite
from .model import Data, Suite
from .plan import Plan, build_plan
from .plan_paths import check_plan_paths
from .plugins import REPORTERS
from .providers.base import ProviderSettings
from .report import Report, load_report
from .reporters.base import ReporterContext, ReportListener
from .reporters.events_log import EventLogWriter
from .reporters.final import FinalReporter, report_from, write_report
from .reporters.notes import RunNotes
from .results import TrialResult
from .runner import RunOptions, RunOutcome, execute
from .sandboxes.base import DEFAULT_SANDBOX, UNSANDBOXED_WARNING
from .shard import shard_part
from .snapshots import SnapshotOptions
from .snapshots.step import SnapshotStep
from .trialfiles import mend_result_files

# What every run writes, whatever --reporter names: naming one is a mistake worth saying.
ALWAYS_ON: Final = {
    "events": "the event log (events.jsonl)",
    "final": "the report (report.json, report.md, report.html)",
}


def build_reporters(
    names: Sequence[str],
    *,
    run_dir: Path,
    console: Console,
    reporter_output: str | None,
    baseline: Report | None,
) -> list[Subscriber]:
    """The always-on event log and final report, plus every named reporter (naming never replaces).

    Built once, before the run: a flag mistake is a ``UsageError`` before anything is written.
    """
    for name in names:
        if name in ALWAYS_ON:
            raise UsageError(
                f"--reporter {name}: {ALWAYS_ON[name]} is always written; drop --reporter {name}"
            )
    plugins = [REPORTERS.get(name) for name in dict.fromkeys(names)]  # unknown names fail here
    if reporter_output is not None and "jsonl" not in names:
        raise UsageError(
            "--reporter-output is where the jsonl reporter writes: add --reporter jsonl, or drop it"
        )
    context = ReporterContext(run_dir=run_dir, console=console, output=reporter_output, baseline=baseline)
    named = [plugin.from_context(context) for plugin in plugins]
    final = FinalReporter(
        run_dir, baseline=baseline, listeners=[s for s in named if isinstance(s, ReportListener)]
    )
    notes = RunNotes(make_console(stderr=True))
    return [EventLogWriter(run_dir / "events.jsonl"), final, notes, *named]


def run_dir_of(options: RunOptions) -> Path:
    """Where a fresh run writes: ``<output>/<run-id>``, absolute."""
    return (Path(options.output) / str(options.run_id)).resolve()


def start_run(
    plan: Plan,
    suite: Suite,
    options: RunOptions,
    subscribers: Sequence[Subscriber],
    *,
    snapshots: SnapshotOptions | None = None,
) -> RunOutcome:
    """A fresh run in ``run_dir_of(options)``, reported to ``subscribers`` (see ``build_reporters``).

    The snapshot step joins them: the token section always, ``snapshots`` (--snapshot-check or
    --snapshot-update) when asked.
    """
    everyone = [*subscribers, SnapshotStep(suite, snapshots)]
    return anyio.run(lambda: execute(plan, suite, options, everyone, run_dir=run_dir_of(options)))


class FinishedRun(Data, frozen=True, kw_only=True):
    """What `run --resume` finds in a run that already finished: its verdict, and nothing to run."""

    run_id: str
    run_dir: str
    counts: Counts
    exit_code: int


def resume_run(
    run_dir: Path,
    *,
    concurrency: int | None,
    reporters: Sequence[str],
    console: Console,
    reporter_output: str | None,
    argv: tuple[str, ...],
    secrets: tuple[str, ...],
    budget_usd: float | None = None,
    budget_tokens: int | None = None,
    executor_flags: dict[str, Any] | None = None,
) -> RunOutcome | FinishedRun:
    """Continue an interrupted run: same plan and settings, finished trials (same fingerprint) kept.

    A run with nothing left to do is left as it is (see ``_finished``): resuming it twice writes nothing.
    ``budget_usd`` and ``budget_tokens`` replace the recorded budget's measures (a larger budget continues
    a run the budget ended); the recorded gates, prices and budget are otherwise the run's own.
    ``executor_flags`` (``--executor`` and its options, as given) change where the rest runs.
    """
    with claim_run_dir(run_dir):  # before the log is read or mended: nobody else may be writing it
        log = read_run_log(run_dir)
        _say_mended(mend_result_files(run_dir, log))
        start = log.start
        settings = start.settings
        suite = with_aa(load_suite(Path(start.suite_dir)), settings.get("aa"))
        plan = build_plan(
            suite,
            lanes=start.lanes,
            conditions=start.conditions,
            case_ids=start.case_filter,
            providers=start.providers,
            model=start.model,
            trials=resumed_policy(settings, start.trials),
            decision_threshold=settings.get("decision_threshold", 0.5),
        )
        if start.shard is not None:
            plan = shard_part(plan, start.shard, start.settings, run_dir)
        fingerprints = {c.id: c.fingerprint for c in suite.cases}
        planned = {i.id.key for i in plan.items}
        done: list[TrialResult] = [
            r
            for r in log.results
            if r.id.key in planned and fingerprints.get(r.id.case_id) == r.id.fingerprint
        ]
        # An adaptive case's trials past its settled verdict never run: a finished run lacks them rightly.
        fixed = {i.id.key for i in plan.items if i.id.case_id not in plan.auto}
        finished = _finished(log, fixed, done, run_dir)
        if finished is not None:
            return finished
        # The suite may have changed since the run started: a template or cassette gone is refused now.
        check_plan_paths(
            plan,
            suite,
            ProviderSettings(
                replay_source=settings.get("replay_source"),
                agent_command=settings.get("agent_command"),
                model=start.model,
            ),
        )
        price_files = tuple(Path(p) for p in settings.get("prices") or ())
        options = RunOptions(
            output=str(run_dir.parent),
            concurrency=concurrency or start.concurrency,
            keep_workspaces=bool(settings.get("keep_workspaces", False)),
            record=bool(settings.get("record", False)),
            replay_source=settings.get("replay_source"),
            agent_command=settings.get("agent_command"),
            # A run.json without the setting predates sandboxes: this machine's default.
            sandbox=settings.get("sandbox") or DEFAULT_SANDBOX,
            network=settings.get("network"),
            sandbox_writable=tuple(settings.get("sandbox_writable", ())),
            shard=start.shard,
            judge=settings.get("judge"),
            judge_record=bool(settings.get("judge_record", False)),
            judge_cache=settings.get("judge_cache"),
            judge_timeout_s=float(settings.get("judge_timeout_s") or DEFAULT_JUDGE_TIMEOUT_S),
            compare_conditions=settings.get("compare_conditions"),
            pairwise_seed=int(settings.get("pairwise_seed") or 0),
            baseline_report=start.baseline_report,
            argv=argv,
            run_id=start.run_id,
            secrets=secrets,
            plan_settings={
                k: settings[k] for k in ("trials_policy", "decision_threshold", "aa") if k in settings
            },
            prices=load_prices(price_files),
            price_files=tuple(str(p) for p in price_files),
            budget=replace_budget(settings.get("budget"), budget_usd, budget_tokens),
            snapshot_dir=settings.get("snapshot_dir") or "snapshots",
            gates=tuple(settings.get("gates") or ()),
            executor=executor_settings(executor_flags or {}, settings.get("executor")),
            fail_on_regression=bool(settings.get("fail_on_regression", False)),
        )
        baseline = load_report(Path(start.baseline_report)) if start.baseline_report else None
        subscribers = build_reporters(
            reporters,
            run_dir=run_dir.resolve(),
            console=console,
            reporter_output=reporter_output,
            baseline=baseline,
        )
        subscribers.append(SnapshotStep(suite, None))  # the token section; --snapshot-* is refused here
        subscribers.append(recorded_gate_step(plan, suite, settings, baseline=baseline))
        mend_tail(run_dir)
        if options.sandbox == "none":
            make_console(stderr=True).print(UNSANDBOXED_WARNING, markup=False)
        return anyio.run(
            lambda: execute(plan, suite, options, subscribers, done=done, run_dir=run_dir.resolve())
        )


def _finished(
    log: RunLog, planned: set[str], done: Sequence[TrialResult], run_dir: Path
) -> FinishedRun | None:
    """The run's verdict when it ended on its own and every planned trial kept its result; else None.

    Such a run has nothing to resume: running it again would only append a copy of its events.
    """
    end = log.finish
    if end is None or end.interrupted or not planned <= {r.id.key for r in done}:
        return None
    return FinishedRun(
        run_id=log.start.run_id, run_dir=str(run_dir.resolve()), counts=end.counts, exit_code=end.exit_code
    )


def rebuild_report(run_dir: Path) -> Report:
    """`skillgym report RUN_DIR`: report.json, report.md and report.html again, from events.jsonl.

    A baseline that is gone (or unreadable) by now is not compared, and the report says so in
    ``baseline_problem``: it is never dropped without a word.
    """
    with claim_run_dir(run_dir):  # a run still going writes its own report when it ends
        log = read_run_log(run_dir)
        _say_mended(mend_result_files(run_dir, log))
        baseline, problem = baseline_for_rebuild(log.start.baseline_report)
        report = report_from(log.start, list(log.results), log.finish, baseline)
        if problem is not None:
            report = msgspec.structs.replace(report, baseline_problem=problem)
        write_report(run_dir, report, log.results, suite_dir=log.start.suite_dir)
    return report


def _say_mended(warnings: Sequence[str]) -> None:
    """One warning line per trial file that disagreed with the event log (``mend_result_files``)."""
    if warnings:
        err = make_console(stderr=True)
        for warning in warnings:
            err.print(f"skillgym: warning: {warning}", markup=False)


def baseline_for_rebuild(path: str | None) -> tuple[Report | None, str | None]:
    """The baseline the run compared with, or why it cannot be compared any more and what to do."""
    if path is None:
        return None, None
    if not Path(path).exists():
        if not Path(path).is_absolute():  # recorded by a skillgym that kept the path as typed
            return None, (
                "not found from the directory `skillgym report` ran in; the path is relative to the "
                "directory the run started in, so rebuild from there"
            )
        return None, "not found; put it back at that path and rebuild with `skillgym report` to compare"
    try:
        return load_report(Path(path)), None
    except UsageError as exc:
        return None, f"unreadable ({exc})"
    except OSError as exc:
        return (
            None,
            f"unreadable ({exc.strerror or exc}); make it readable and rebuild with `skillgym report`",
        )
