"""Command line: parse arguments, dispatch to a command, map errors to exit codes."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from rich.console import Console

from . import __version__
from .adaptive import PLAN_FLAGS as ADAPTIVE_FLAGS
from .adaptive import aa_conditions, add_adaptive_flags, check_threshold, plan_settings, trial_policy, with_aa
from .commands import COMMANDS
from .console import columns, make_console
from .cost.cli import add_cost_flags, dry_run_estimate, estimate_lines, run_budget, run_prices, snapshot_dir
from .errors import ExitCode, SkillgymError, UsageError
from .executors.flags import add_executor_flags, executor_settings, given_executor_flags
from .fingerprint import short
from .gates.cli import add_gate_flags, gate_lines, run_gates, step_summary, write_step_summary
from .gates.evaluate import REGRESSION
from .judge.flags import add_judge_flags, add_judge_parser, judge_options
from .loader import load_suite
from .model import LANES, WorkspacePreset
from .plan import Plan, build_plan
from .plan_paths import PlanPathError, material_problems, plan_providers, suite_path_problems
from .plugins import EXECUTORS, PROVIDERS, REPORTERS, SANDBOXES
from .providers.base import ProviderSettings
from .reasons import error_reasons
from .redact import redact_env, scrub, scrub_struct, secret_values, suite_secrets
from .sandboxes.base import DEFAULT_SANDBOX, NETWORKS, UNSANDBOXED_WARNING
from .shard import add_shard_flags
from .snapshots.commands import (
    add_run_flags,
    add_snapshots_parser,
    after_run,
    preflight_run,
    snapshot_options,
    snapshots_command,
)

if TYPE_CHECKING:
    from .cost.estimate import RunEstimate
    from .cost.model import RunBudget
    from .runner import RunOptions, RunOutcome
    from .shard import ShardSpec


class _HelpFormatter(argparse.HelpFormatter):
    """Fills ``{providers}`` and ``{reporters}`` in help texts from the plug-in registry.

    Only when help is shown: loading every plug-in is not worth its time for `list` or a run's flags.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = super()._get_help_string(action)
        if text is None or "{" not in text:
            return text
        return (
            text.replace("{providers}", ", ".join(PROVIDERS.names()))
            .replace("{reporters}", ", ".join(REPORTERS.names()))
            .replace("{sandboxes}", ", ".join(SANDBOXES.names()))
            .replace("{executors}", ", ".join(EXECUTORS.names()))
        )


class _Parser(argparse.ArgumentParser):
    """An argument parser whose help, and its subcommands' help, fills in the registered plug-ins."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="skillgym", description="Measure how well coding agents use a skill.")
    parser.add_argument("--version", action="version", version=f"skillgym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    init = sub.add_parser("init", help="draft a runnable suite for an existing skill folder")
    init.add_argument("skill_dir", type=Path, metavar="SKILL_DIR", help="the skill's folder (with SKILL.md)")
    init.add_argument(
        "--suite", type=Path, default=Path("evals"), help="where the suite goes (default: evals)"
    )
    init.add_argument("--force", action="store_true", help="overwrite files that already exist")

    listing = sub.add_parser("list", help="list the suite's cases")
    listing.add_argument("--suite", type=Path, default=Path("evals"), help="suite directory (default: evals)")
    listing.add_argument(
        "--lane", action="append", default=[], choices=LANES, help="only this lane (repeatable)"
    )
    listing.add_argument("--json", action="store_true", help="machine-readable output")

    run = sub.add_parser("run", help="run the plan (or print it with --dry-run)")
    select = run.add_argument_group("selection (what runs)")
    select.add_argument("--suite", type=Path, default=Path("evals"), help="suite directory (default: evals)")
    select.add_argument("--lane", action="append", default=[], metavar="L", help="lane to run (repeatable)")
    select.add_argument(
        "--condition", action="append", default=[], metavar="C", help="condition (repeatable)"
    )
    select.add_argument("--case", action="append", default=[], metavar="ID", help="case id (repeatable)")
    select.add_argument("--dry-run", action="store_true", help="print the plan; invoke and write nothing")
    select.add_argument("--json", action="store_true", help="with --dry-run: print the plan as JSON")

    agent = run.add_argument_group("agent (who answers)")
    agent.add_argument(
        "--provider", action="append", default=[], metavar="P", help="provider: {providers} (default replay)"
    )
    agent.add_argument("--model", default=None, help="model id passed to the provider")
    agent.add_argument(
        "--record", action="store_true", help="save each trial's raw provider stream as a cassette"
    )
    agent.add_argument(
        "--replay-source", metavar="PROVIDER/MODEL", help="which recorded cassettes replay plays"
    )
    agent.add_argument(
        "--agent-command", metavar="'PROGRAM ARGS'", help="the command provider's agent (prompt on stdin)"
    )
    trials = run.add_argument_group("trials (how they run)")
    add_adaptive_flags(trials)
    trials.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="trials whose agents run at once (default: the provider's own; 4 for agent CLIs and command, "
        "24 for replay, 16 for stub)",
    )
    trials.add_argument(
        "--keep-workspaces", action="store_true", help="keep every workspace, not only failed ones"
    )
    trials.add_argument(
        "--sandbox",
        default=DEFAULT_SANDBOX,
        metavar="NAME",
        help=f"where trials run: {{sandboxes}} (default {DEFAULT_SANDBOX})",
    )
    trials.add_argument(
        "--network",
        choices=NETWORKS,
        default=None,
        help="the trials' network (default: host for agent CLIs, none for stub, replay and command)",
    )
    trials.add_argument(
        "--sandbox-writable",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="a folder every trial may also write (repeatable): an agent's own log or cache",
    )
    trials.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue an interrupted run")
    output = run.add_argument_group("output (what is written and shown)")
    output.add_argument(
        "--output",
        type=Path,
        default=Path("runs"),
        metavar="DIR",
        help="the folder each run's folder is made in (default: runs)",
    )
    output.add_argument(
        "--progress", action="store_true", help="live progress on the console (= --reporter console)"
    )
    output.add_argument(
        "--reporter",
        action="append",
        default=[],
        metavar="NAME",
        help="add a reporter: {reporters} (the event log and report.json/.md/.html are always written)",
    )
    output.add_argument(
        "--reporter-output",
        metavar="PATH",
        help="the file the jsonl reporter copies the events to (- for stdout)",
    )
    baseline = run.add_argument_group("baseline")
    baseline.add_argument(
        "--compare-baseline", type=Path, metavar="REPORT", help="compare with an earlier report.json"
    )
    add_run_flags(run)
    add_shard_flags(run)
    add_executor_flags(run)
    add_cost_flags(run)
    add_gate_flags(run)
    add_judge_flags(run)
    report = sub.add_parser(
        "report", help="rebuild report.json, report.md and report.html from a run's events.jsonl"
    )
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    add_snapshots_parser(sub)
    sub.choices["snapshots"].set_defaults(
        handler=lambda args, out, err: snapshots_command(args, out, err, run_suite=main)
    )
    add_judge_parser(sub)
    sub.choices["judge"].set_defaults(handler=_judge)
    for command in COMMANDS:
        command.add_parser(sub)
    init.set_defaults(handler=lambda args, out, err: _init(args, out))
    listing.set_defaults(handler=lambda args, out, err: _list(args, out))
    run.set_defaults(handler=lambda args, out, err: _run(args, out))
    report.set_defaults(handler=_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``skillgym`` and ``python -m skillgym``; returns the exit code."""
    args = _parser().parse_args(argv)
    out, err = make_console(), make_console(stderr=True)
    try:
        handler: Callable[[argparse.Namespace, Console, Console], int] = args.handler
        return handler(args, out, err)
    except SkillgymError as exc:
        # The user's own secrets, at least: a message can quote what the user typed or had set.
        err.print(f"skillgym: error: {scrub(str(exc), secret_values(os.environ))}", markup=False)
        return exc.exit_code
    except KeyboardInterrupt:
        err.print("skillgym: interrupted", markup=False)
        return ExitCode.INTERRUPTED


def _judge(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .judge.command import main as judge_command

    return judge_command(args, out, err)


def _init(args: argparse.Namespace, out: Console) -> int:
    from .scaffold import init_suite

    done = init_suite(args.skill_dir, args.suite, force=args.force)
    suite = done.suite
    out.print(f"drafted a suite for the skill {done.skill.name!r} in {suite}/", markup=False)
    if done.copied_from is not None:
        out.print(
            f"  copied the skill from {done.copied_from} to {suite / done.skill_path}/: trials see this copy",
            markup=False,
        )
    for rel in done.written:
        out.print(f"  wrote {suite / rel}", markup=False)
    if done.agent_skills_evals is not None:
        out.print(
            f"note: {done.agent_skills_evals} holds evals in the Agent Skills format; add them to this "
            f"suite with: skillgym import evals {done.agent_skills_evals} --suite {suite}",
            markup=False,
        )
    out.print(f"next: edit the drafted cases ({suite / 'README.md'} says what to change), then", markup=False)
    out.print(f"  skillgym list --suite {suite}", markup=False)
    out.print(f"  skillgym run --suite {suite} --provider stub", markup=False)
    return ExitCode.OK


def _list(args: argparse.Namespace, out: Console) -> int:
    suite = load_suite(args.suite)
    cases = sorted(
        (c for c in suite.cases if not args.lane or c.lane in args.lane), key=lambda c: LANES.index(c.lane)
    )
    if args.json:
        rows = [
            {
                "lane": c.lane,
                "id": c.id,
                "category": c.category,
                "conditions": list(c.conditions),
                "fingerprint": c.fingerprint,
                "origin": c.origin,
            }
            for c in cases
        ]
        out.out(msgspec.json.encode(rows).decode(), highlight=False)
        return ExitCode.OK
    table = [["LANE", "ID", "CATEGORY", "CONDITIONS", "FINGERPRINT"]]
    table += [[c.lane, c.id, c.category, ",".join(c.conditions), short(c.fingerprint)] for c in cases]
    for line in columns(table):
        out.print(line, markup=False)
    out.print(f"{len(cases)} case(s)", markup=False)
    return ExitCode.OK


def _report(args: argparse.Namespace, out: Console, err: Console) -> int:
    from .launch import rebuild_report

    report = rebuild_report(args.run_dir)
    if report.baseline_problem is not None:
        err.print(
            f"skillgym: warning: baseline report {report.baseline_report} was not compared: "
            f"{report.baseline_problem}. report.md says so.",
            markup=False,
        )
    c = report.counts
    out.print(
        f"rebuilt {args.run_dir / 'report.json'}, report.md and report.html from events.jsonl", markup=False
    )
    out.print(f"{c.total} trials: {c.passed} passed, {c.failed} failed, {c.errored} errored", markup=False)
    return ExitCode.OK


# Flags that shape the plan: a resumed run keeps the plan it started with.
_PLAN_FLAGS = (
    "lane",
    "condition",
    "case",
    "provider",
    "model",
    "trials",
    "suite",
    "output",
    "dry_run",
    "record",
    "keep_workspaces",
    "replay_source",
    "agent_command",
    "compare_baseline",
    "sandbox",
    "network",
    "sandbox_writable",
    *ADAPTIVE_FLAGS,
    "shard",
    "shard_by",
    "gate",
    "fail_on_regression",
    "prices",
)


def _conflicts_with_resume(args: argparse.Namespace, parser_defaults: dict[str, object]) -> list[str]:
    return [
        f"--{name.replace('_', '-')}" for name in _PLAN_FLAGS if getattr(args, name) != parser_defaults[name]
    ]


def _run(args: argparse.Namespace, out: Console) -> int:
    if args.json and not args.dry_run:
        raise UsageError(
            "run --json prints the plan as JSON and needs --dry-run; for a run's machine-readable output "
            "read runs/<run-id>/report.json and events.jsonl, or add --reporter jsonl --reporter-output -"
        )
    reporters = list(dict.fromkeys([*args.reporter, *(["console"] if args.progress else [])]))
    snapshots = snapshot_options(args)  # flag mistakes are errors before anything runs
    if args.resume is not None:
        return _resume(args, out, reporters)
    suite = with_aa(load_suite(args.suite), args.aa)
    policy, threshold = trial_policy(args), check_threshold(args.decision_threshold)
    plan = build_plan(
        suite,
        lanes=args.lane,
        conditions=aa_conditions(args.condition, args.aa),
        case_ids=args.case,
        providers=_providers(args.provider),
        model=args.model,
        trials=policy,
        decision_threshold=threshold,
    )
    if args.shard is None and args.shard_by is not None:
        raise UsageError("--shard-by chooses how --shard splits the plan: add --shard I/N, or drop it")
    if args.shard is not None and snapshots is not None:
        raise UsageError(
            "--snapshot-check and --snapshot-update see one shard's trials only; merge the shards "
            "(skillgym merge OUT SHARD_DIR...), then run `skillgym snapshots check --run OUT` (or update)"
        )
    problems = suite_path_problems(plan, suite)
    gates = run_gates(args, suite, plan)  # a malformed --gate is an error before anything runs
    prices, price_files = run_prices(suite, args.prices)
    budget = run_budget(args)
    settings = ProviderSettings(
        replay_source=args.replay_source, agent_command=args.agent_command, model=args.model
    )
    unplayable = material_problems(plan, plan_providers(plan, suite, settings))
    if args.dry_run:
        if problems:
            raise PlanPathError(problems + unplayable)
        if args.shard is not None:
            from .runner import RunOptions

            plan, _ = _sharded(args, plan, RunOptions(**_result_options(args)))
        # The plan is still worth seeing when only the provider's material is missing: it says which.
        secrets = suite_secrets(suite, secret_values(os.environ))
        estimate = dry_run_estimate(plan, args, prices)
        _print_plan(
            plan,
            out,
            as_json=args.json,
            secrets=secrets,
            unplayable=unplayable,
            estimate=estimate,
            budget=budget,
            gates=[(g.expression, g.origin) for g in gates]
            + ([(REGRESSION, "--fail-on-regression")] if args.fail_on_regression else []),
        )
        return ExitCode.OK
    # The engine is imported only when a run really starts: `list` and `--dry-run` stay fast.
    from .gates.step import GateStep
    from .launch import build_reporters, run_dir_of, start_run
    from .providers.cassette import check_record_paths
    from .providers.command import with_absolute_program
    from .report import load_report
    from .runner import RunOptions, new_run_id

    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {args.concurrency}")
    preflight_run(snapshots, plan.providers)  # a broken snapshot file stops the run before any token
    if args.record:
        check_record_paths(
            Path(suite.root),
            ((i.id.provider, i.model, i.id.lane, i.id.case_id, i.id.condition) for i in plan.items),
        )
    baseline = load_report(args.compare_baseline) if args.compare_baseline else None
    SANDBOXES.get(args.sandbox)  # an unknown name is a UsageError listing the valid ones
    executor = executor_settings(given_executor_flags(args))
    EXECUTORS.get(executor.name)
    options = RunOptions(
        output=str(args.output),
        concurrency=args.concurrency,
        keep_workspaces=args.keep_workspaces,
        record=args.record,
        replay_source=args.replay_source,
        agent_command=with_absolute_program(args.agent_command),
        # Absolute: `skillgym report` rebuilds from any working directory and must find the same file.
        baseline_report=str(args.compare_baseline.resolve()) if args.compare_baseline else None,
        argv=tuple(sys.argv),
        run_id=new_run_id(),
        secrets=secret_values(os.environ),
        sandbox=args.sandbox,
        network=args.network,
        sandbox_writable=_existing_folders(args.sandbox_writable, flag="--sandbox-writable"),
        plan_settings=plan_settings(policy, threshold, args.aa),
        prices=prices,
        price_files=price_files,
        budget=budget,
        snapshot_dir=str(snapshot_dir(args).resolve()),
        gates=tuple(args.gate),
        fail_on_regression=args.fail_on_regression,
        executor=executor,
        **judge_options(args),
    )
    plan, spec = _sharded(args, plan, options)
    options = msgspec.structs.replace(options, shard=spec)
    # Reporter flags are checked before anything runs or is written.
    subscribers = build_reporters(
        reporters,
        run_dir=run_dir_of(options),
        console=out,
        reporter_output=args.reporter_output,
        baseline=baseline,
    )
    if problems or unplayable:  # after the flags: a typo is named first, then the suite's files
        raise PlanPathError(problems + unplayable)
    if spec is None:  # a shard sees part of the trials: `skillgym merge` judges the gates on the whole
        subscribers.append(
            GateStep(plan, gates, baseline=baseline, fail_on_regression=args.fail_on_regression)
        )
    if options.sandbox == "none":
        make_console(stderr=True).print(UNSANDBOXED_WARNING, markup=False)
    outcome = start_run(plan, suite, options, subscribers, snapshots=snapshots)
    if options.compare_conditions == "judge" and not outcome.interrupted:
        from .judge.command import compare_after_run

        compare_after_run(outcome.run_dir, suite, options, out)
    _closing_lines(outcome, reporters, out)
    return after_run(outcome.finish.snapshots, out, outcome.exit_code)


def _result_options(args: argparse.Namespace) -> dict[str, Any]:
    """The run options a plan fingerprint covers, as `run` builds them (see ``shard.RESULT_SETTINGS``)."""
    from .providers.command import with_absolute_program

    return {
        "replay_source": args.replay_source,
        "agent_command": with_absolute_program(args.agent_command),
        "sandbox": args.sandbox,
        "network": args.network,
        "secrets": secret_values(os.environ),
    }


def _sharded(args: argparse.Namespace, plan: Plan, options: RunOptions) -> tuple[Plan, ShardSpec | None]:
    """With --shard I/N: shard I's part of ``plan`` and its spec; else the plan as it is."""
    if args.shard is None:
        return plan, None
    from .runner import run_settings
    from .shard import choose_by, make_spec, select
    from .snapshots.commands import DEFAULT_DIR

    # Adaptive cases (`--trials auto`, or a suite's or case's default) decide per case when to stop:
    # a case's trials stay together.
    adaptive = bool(plan.auto)
    spec = make_spec(
        plan,
        args.shard,
        by=choose_by(args.shard_by, adaptive=adaptive),
        settings=run_settings(options, plan),
        snapshot_dir=str(DEFAULT_DIR),
    )
    part = select(plan, spec)
    make_console(stderr=True).print(
        f"skillgym: shard {spec.label}: {len(part.items)} of the plan's {spec.plan_trials} trials "
        f"(by {spec.by}; plan {short(spec.plan_fingerprint)})",
        markup=False,
    )
    return part, spec


def _closing_lines(outcome: RunOutcome, reporters: Sequence[str], out: Console) -> None:
    if outcome.leftovers:  # files of passed trials that cleanup could not remove: the user's to delete
        err = make_console(stderr=True)
        for problem in outcome.leftovers:
            err.print(f"skillgym: warning: {problem}", markup=False)
    # Why trials errored, always: a run whose every trial errored must say more than its counts.
    reasons = error_reasons(outcome.results)
    if "console" in reporters:
        # The console reporter already ended with the summary table and the report path.
        for line in reasons:
            out.print(line, markup=False)
        _spend_lines(outcome, out)
        return
    c = outcome.counts
    out.print(
        f"{c.total} trials: {c.passed} passed, {c.failed} failed, {c.errored} errored"
        + (" (interrupted)" if outcome.interrupted else ""),
        markup=False,
    )
    if outcome.interrupted:
        out.print(f"continue with: skillgym run --resume {outcome.run_dir}", markup=False)
    warned = sum(1 for r in outcome.results if r.warnings)
    if warned:
        out.print(f"{warned} trial(s) finished with warnings: see Warnings in report.md", markup=False)
    for line in reasons:
        out.print(line, markup=False)
    _spend_lines(outcome, out)
    out.print(f"report: {Path(outcome.run_dir) / 'report.md'}", markup=False)


def _spend_lines(outcome: RunOutcome, out: Console) -> None:
    """Cost, budget and gates: the closing lines every run shows, and the GitHub step summary."""
    from .cost.summary import build_cost_report, cost_line
    from .report import load_report

    end = outcome.finish
    line = cost_line(build_cost_report(outcome.results))
    if line is not None:
        out.print(line, markup=False)
    if end.budget is not None:
        out.print(
            f"budget: {end.budget.reason}; {len(end.budget.short)} cell(s) short of their trials. "
            f"Continue with: skillgym run --resume {outcome.run_dir} "
            + " ".join(f"--budget-{m} LARGER" for m in end.budget.budget.measures),
            markup=False,
        )
    gate_lines(end.gates, outcome.exit_code, out)
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        try:
            report = load_report(Path(outcome.run_dir))
        except UsageError as exc:
            problem: str | None = f"no step summary: {exc}"
        else:
            problem = write_step_summary(step_summary(report, outcome.exit_code, outcome.run_dir), os.environ)
        if problem is not None:
            make_console(stderr=True).print(f"skillgym: warning: {problem}", markup=False)


def _resume(args: argparse.Namespace, out: Console, reporters: list[str]) -> int:
    from .launch import FinishedRun, resume_run

    conflicts = _conflicts_with_resume(args, vars(_parser().parse_args(["run"])))
    if conflicts:
        raise UsageError(
            "--resume continues a run with the plan and settings it started with; "
            f"drop {', '.join(conflicts)} "
            "(only --concurrency, reporter, budget and executor flags may change)"
        )
    outcome = resume_run(
        args.resume,
        concurrency=args.concurrency,
        reporters=reporters,
        console=out,
        reporter_output=args.reporter_output,
        argv=tuple(sys.argv),
        secrets=secret_values(os.environ),
        budget_usd=args.budget_usd,
        budget_tokens=args.budget_tokens,
        executor_flags=given_executor_flags(args),
    )
    if isinstance(outcome, FinishedRun):
        c = outcome.counts
        out.print(
            f"skillgym: run {outcome.run_id} already finished ({c.total} trials: {c.passed} passed, "
            f"{c.failed} failed, {c.errored} errored); nothing to resume in {outcome.run_dir}",
            markup=False,
        )
        return outcome.exit_code
    _closing_lines(outcome, reporters, out)
    return outcome.exit_code


def _existing_folders(given: Sequence[Path], *, flag: str) -> tuple[str, ...]:
    for folder in given:
        if not folder.is_dir():
            raise UsageError(f"{flag} {folder} is not a folder; create it first or fix the path")
    return tuple(str(folder.resolve()) for folder in given)


def _providers(given: Sequence[str]) -> tuple[str, ...]:
    for name in given:
        PROVIDERS.get(name)  # an unknown name is a UsageError listing the valid ones
    return tuple(given) or ("replay",)


def _redacted(preset: WorkspacePreset) -> WorkspacePreset:
    return msgspec.structs.replace(
        preset,
        env=redact_env(preset.env),
        bootstrap=tuple(msgspec.structs.replace(b, env=redact_env(b.env)) for b in preset.bootstrap),
    )


def _print_plan(
    plan: Plan,
    out: Console,
    *,
    as_json: bool,
    secrets: tuple[str, ...],
    unplayable: Sequence[str] = (),
    estimate: RunEstimate | None = None,
    budget: RunBudget | None = None,
    gates: Sequence[tuple[str, str]] = (),
) -> None:
    plan = msgspec.structs.replace(plan, presets=tuple(_redacted(p) for p in plan.presets))
    plan = scrub_struct(plan, secrets)  # a secret under a harmless name, or marked with skillgym.secret()
    if as_json:
        doc = msgspec.to_builtins(plan)
        doc["dry_run"] = True
        doc["invocations"] = len(plan.items)
        doc["unplayable"] = list(unplayable)
        doc["estimate"] = msgspec.to_builtins(estimate) if estimate is not None else None
        doc["gates"] = [{"expression": expression, "origin": origin} for expression, origin in gates]
        out.out(msgspec.json.encode(doc).decode(), highlight=False)
        return
    _plan_lines(plan, out, estimate=estimate, budget=budget, gates=gates)
    err = make_console(stderr=True)
    for problem in unplayable:
        err.print(f"skillgym: warning: a run would refuse this plan: {problem}", markup=False)


def _plan_lines(
    plan: Plan,
    out: Console,
    *,
    estimate: RunEstimate | None,
    budget: RunBudget | None,
    gates: Sequence[tuple[str, str]],
) -> None:
    out.print(
        f"dry run: nothing is invoked or written. suite {plan.suite}; lanes {', '.join(plan.lanes) or '-'}; "
        f"conditions {', '.join(plan.conditions) or '-'}; providers {', '.join(plan.providers)}; "
        f"model {plan.model or 'provider default'}; trials {plan.trials}"
        + (f" (adaptive, at most: {len(plan.auto)} case(s) stop once settled)" if plan.auto else ""),
        markup=False,
    )
    for preset in plan.presets:
        out.print(
            f"workspace preset {preset.id} ({preset.mode}): {preset.description}".rstrip(": "), markup=False
        )
        if preset.template:
            out.print(f"  template  {preset.template}", markup=False)
        if preset.cwd:
            out.print(f"  cwd       {preset.cwd}", markup=False)
        for key, value in sorted(preset.env.items()):
            out.print(f"  env       {key}={value}", markup=False)
        for cmd in preset.bootstrap:
            out.print(f"  bootstrap {' '.join(cmd.argv)}  (timeout {cmd.timeout_s:g}s)", markup=False)
    rows = [["KEY", "FINGERPRINT", "WORKSPACE"]]
    rows += [[i.id.key, short(i.id.fingerprint), i.workspace or "-"] for i in plan.items]
    for line in columns(rows):
        out.print(line, markup=False)
    if estimate is not None:
        estimate_lines(estimate, out, budget)
    for expression, origin in gates:
        out.print(f"gate: {expression} ({origin})", markup=False)
    out.print(f"total invocations: {len(plan.items)}", markup=False)
