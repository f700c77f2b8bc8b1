"""The snapshot command line: `skillgym snapshots update|check`, the `run --snapshot-*` flags, and output.

Everything here works from files a run already wrote (``events.jsonl``, ``token-usage.json``): no agent
is called. The step at the end of ``skillgym run`` is ``skillgym.snapshots.step`` (so ``run.finish`` and
``report.md`` carry its outcome); this module only prints what it found. It never imports the command
line: ``--run-if-missing`` runs the suite through the ``run_suite`` the command line hands it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, assert_never

import msgspec
from rich.console import Console

from ..console import columns, make_console
from ..errors import ExitCode, SkillgymError, UsageError
from ..fingerprint import short
from ..results import TrialResult
from .model import (
    DEFAULT_THRESHOLD_PERCENT,
    EntryCheck,
    NoSnapshotStep,
    SnapshotCheck,
    SnapshotFailure,
    SnapshotOptions,
    SnapshotOutcome,
    SnapshotUpdate,
)

RunSuite = Callable[[Sequence[str]], int]  # the command line's own entry point: argv -> exit code
DEFAULT_DIR = Path("snapshots")
DEFAULT_RUNS = Path("runs")
_RUN_ID_PREFIX = len("YYYYmmdd-HHMMSS")


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage such as 20 or 12.5, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"a threshold is a percentage of at least 0, got {text!r}")
    return value


# --- the `snapshots` command ----------------------------------------------------------------------


def add_snapshots_parser(sub: Any) -> None:
    """Register ``skillgym snapshots update|check`` on the CLI's subparsers."""
    snap = sub.add_parser(
        "snapshots",
        help="accept (update) or check token snapshots from a finished run; no agent is called",
        description="Accept (update) or check token snapshots from the latest run of --suite "
        "(or --run RUN_DIR). Snapshots live in <dir>/<provider>/<model>.toml; no agent is called.",
    )
    snap.add_argument("action", nargs="?", choices=("update", "check"), help="update or check")
    flags = snap.add_mutually_exclusive_group()
    flags.add_argument("--update", dest="action_flag", action="store_const", const="update", help="= update")
    flags.add_argument("--check", dest="action_flag", action="store_const", const="check", help="= check")
    snap.add_argument(
        "--run", type=Path, metavar="RUN_DIR", help="the run to use (default: the suite's newest)"
    )
    snap.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_RUNS,
        metavar="DIR",
        help="the folder the runs are in, as run --output (default: runs)",
    )
    snap.add_argument(
        "--dir", type=Path, default=DEFAULT_DIR, metavar="DIR", help="snapshot directory (default: snapshots)"
    )
    snap.add_argument(
        "--threshold",
        type=_percent,
        default=DEFAULT_THRESHOLD_PERCENT,
        metavar="PCT",
        help=f"regression threshold in percent of the median total (default {DEFAULT_THRESHOLD_PERCENT:g}); "
        "a case's own token_budget wins",
    )
    snap.add_argument("--enforce", action="store_true", help="check: exit 1 when a case regressed")
    snap.add_argument(
        "--run-if-missing",
        action="store_true",
        help="when no run exists under --output, say so and run the suite first (default provider)",
    )
    snap.add_argument(
        "--suite",
        type=Path,
        default=Path("evals"),
        help="the suite whose newest run is used, and that --run-if-missing runs (default: evals)",
    )
    snap.add_argument("-v", "--verbose", action="store_true", help="check: list unchanged entries too")
    snap.add_argument("--json", action="store_true", help="machine-readable output")


def latest_run(output: Path, suite: Path | None = None) -> Path | None:
    """The newest run directory under ``output`` (of ``suite``, when given): run ids sort by start time."""
    if not output.is_dir():
        return None
    # Not ``latest``: a link to one of the others, whose name is no run id.
    runs = [d for d in output.iterdir() if not d.is_symlink() and (d / "events.jsonl").is_file()]
    if suite is not None:
        wanted = str(suite.resolve())
        runs = [d for d in runs if _suite_of(d) == wanted]

    def started(run: Path) -> tuple[str, int]:
        marker = run / "run.json"
        return run.name[:_RUN_ID_PREFIX], marker.stat().st_mtime_ns if marker.exists() else 0

    return max(runs, key=started) if runs else None


def _suite_of(run_dir: Path) -> str | None:
    """The suite folder a run says it ran (its run.json), or None when that cannot be read."""
    try:
        start = msgspec.json.decode((run_dir / "run.json").read_bytes())
    except (OSError, msgspec.DecodeError):
        return None
    suite = start.get("suite_dir") if isinstance(start, dict) else None
    return suite if isinstance(suite, str) else None


def snapshots_command(args: argparse.Namespace, out: Console, err: Console, *, run_suite: RunSuite) -> int:
    """``skillgym snapshots update|check``; returns the exit code. ``run_suite`` serves --run-if-missing."""
    action: str | None = args.action_flag or args.action
    if args.action and args.action_flag and args.action != args.action_flag:
        raise UsageError(f"both {args.action!r} and --{args.action_flag} given; choose one")
    if action is None:
        raise UsageError("say what to do: `skillgym snapshots update` or `skillgym snapshots check`")
    if args.enforce and action != "check":
        raise UsageError("--enforce applies to `snapshots check` only")
    run_dir = args.run or _latest_or_fresh_run(args, err, run_suite)
    if isinstance(run_dir, int):
        return run_dir  # the suite run that --run-if-missing started did not complete
    from ..eventlog import read_run_log
    from ..loader import load_suite
    from ..report.tokens import token_rows
    from .apply import check_rows, suite_budgets, suite_scope, update_rows

    log = read_run_log(run_dir)
    results = list(log.results)
    notes: list[str] = []
    try:
        suite = load_suite(Path(log.start.suite_dir))
        scope: frozenset[tuple[str, str, str]] | None = suite_scope(suite)
        budgets: Mapping[tuple[str, str], float | None] = suite_budgets(suite)
    except SkillgymError as exc:
        scope = None
        budgets = recorded_budgets(run_dir, results)
        first = str(exc).splitlines()[0]
        notes.append(
            f"the suite at {log.start.suite_dir} did not load ({first}): per-case budgets come from the "
            "run's token-usage.json files and orphaned entries are not looked for"
        )
    rows = token_rows(results)
    if action == "update":
        if log.finish is None or log.finish.interrupted:
            raise UsageError(
                f"run {log.start.run_id} did not finish (interrupted or still running), so its token "
                f"counts are incomplete; resume it (`skillgym run --resume {run_dir}`) or pass --run "
                "with a finished run"
            )
        update = update_rows(rows, directory=args.dir, run_id=log.start.run_id, scope=scope, notes=notes)
        recorded = sum(f.new + f.updated + f.unchanged for f in update.files)
        if args.json:
            out.out(msgspec.json.encode(update).decode(), highlight=False)
        else:
            _print(out, [f"run {log.start.run_id} ({run_dir})", *update_lines(update)])
            if not recorded:
                err.print(
                    f"skillgym: error: no trial of run {log.start.run_id} reported token usage, so no "
                    "snapshot was recorded; look at the run's report.md for why its trials errored",
                    markup=False,
                )
        return ExitCode.OK if recorded else ExitCode.FAILED
    if log.finish is None or log.finish.interrupted:
        notes.append("the run did not finish: only the trials that finished were compared")
    check = check_rows(
        rows,
        directory=args.dir,
        threshold_percent=args.threshold,
        enforce=args.enforce,
        budgets=budgets,
        scope=scope,
        notes=notes,
    )
    if args.json:
        out.out(msgspec.json.encode(check).decode(), highlight=False)
    else:
        _print(out, [f"run {log.start.run_id} ({run_dir})", *check_lines(check, every=args.verbose)])
    return ExitCode.FAILED if args.enforce and check.regressions else ExitCode.OK


def _latest_or_fresh_run(args: argparse.Namespace, err: Console, run_suite: RunSuite) -> Path | int:
    """The suite's newest run; with --run-if-missing and none yet, run it first (or give its exit code)."""
    run_dir = latest_run(args.output, args.suite)
    if run_dir is None and args.run_if_missing:
        err.print(
            f"no run under {args.output}/ yet: running the suite first with the default provider",
            markup=False,
        )
        # The same `skillgym run` a user would type.
        code = run_suite(["run", "--suite", str(args.suite), "--output", str(args.output)])
        if code not in (ExitCode.OK, ExitCode.FAILED):  # failed trials still measured their tokens
            # The run's own error may suggest run flags (`--provider stub`) that snapshots does not take.
            err.print(
                "skillgym: snapshots --run-if-missing runs the suite with its default provider only; run "
                "it yourself with the flags you need (`skillgym run --suite ... --provider ...`), then "
                "`skillgym snapshots update`",
                markup=False,
            )
            return code
        run_dir = latest_run(args.output, args.suite)
    if run_dir is None:
        other = latest_run(args.output)
        elsewhere = (
            f" (the newest run there, {other.name}, is of {_suite_of(other) or 'an unreadable suite'})"
            if other is not None
            else ""
        )
        raise UsageError(
            f"no run of the suite {args.suite} under {args.output}/ to take token counts from{elsewhere}; "
            f"run it first (`skillgym run --suite {args.suite}`), pass --suite or --run RUN_DIR, or use "
            "`nox -s snapshots -- --update`, which runs it when there is none"
        )
    return run_dir


def recorded_budgets(run_dir: Path, results: Sequence[TrialResult]) -> dict[tuple[str, str], float | None]:
    """Per-case budgets as each trial recorded them in its token-usage.json (when the suite is gone)."""
    budgets: dict[tuple[str, str], float | None] = {}
    for r in results:
        if r.paths.token_usage is None or (r.id.lane, r.id.case_id) in budgets:
            continue
        try:
            doc = json.loads((run_dir / r.paths.token_usage).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        value = doc.get("token_budget_percent") if isinstance(doc, dict) else None
        budgets[(r.id.lane, r.id.case_id)] = float(value) if isinstance(value, int | float) else None
    return budgets


# --- the `run --snapshot-*` flags -----------------------------------------------------------------


def add_run_flags(run: argparse.ArgumentParser) -> None:
    """Register ``--snapshot-update | --snapshot-check`` and their options on ``skillgym run``."""
    group = run.add_argument_group("token snapshots (at the end of the run)")
    modes = group.add_mutually_exclusive_group()
    modes.add_argument("--snapshot-check", action="store_true", help="compare token usage with the snapshots")
    modes.add_argument(
        "--snapshot-update", action="store_true", help="accept this run's token usage as the snapshots"
    )
    group.add_argument(
        "--snapshot-threshold",
        type=_percent,
        default=None,
        metavar="PCT",
        help=f"regression threshold in percent (default {DEFAULT_THRESHOLD_PERCENT:g})",
    )
    group.add_argument(
        "--snapshot-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="snapshot directory (default: snapshots)",
    )
    group.add_argument(
        "--snapshot-enforce",
        action="store_true",
        help="a token regression fails the run (exit 1); implies --snapshot-check",
    )


def snapshot_options(args: argparse.Namespace) -> SnapshotOptions | None:
    """The run's snapshot step from its flags, or None; contradictory flags are a UsageError."""
    check = args.snapshot_check or args.snapshot_enforce
    if args.snapshot_update and args.snapshot_enforce:
        raise UsageError("--snapshot-enforce fails a run on a regression, which only --snapshot-check finds")
    if not (check or args.snapshot_update):
        # --snapshot-dir also says where a dry run's and a budget's estimates come from.
        estimates = getattr(args, "dry_run", False) or any(
            getattr(args, flag, None) is not None for flag in ("budget_usd", "budget_tokens")
        )
        if args.snapshot_threshold is not None or (args.snapshot_dir is not None and not estimates):
            raise UsageError(
                "--snapshot-threshold and --snapshot-dir need --snapshot-check or --snapshot-update "
                "(--snapshot-dir also goes with --dry-run and the budget flags)"
            )
        return None
    if getattr(args, "resume", None) is not None:
        raise UsageError(
            "--snapshot-* flags do not apply to --resume; after it finishes, run "
            f"`skillgym snapshots {'check' if check else 'update'} --run {args.resume}`"
        )
    return SnapshotOptions(
        mode="check" if check else "update",
        directory=str(args.snapshot_dir or DEFAULT_DIR),
        threshold_percent=DEFAULT_THRESHOLD_PERCENT
        if args.snapshot_threshold is None
        else args.snapshot_threshold,
        enforce=bool(args.snapshot_enforce),
    )


def preflight_run(options: SnapshotOptions | None, providers: Sequence[str]) -> None:
    """Before a run with a snapshot step: every existing snapshot file of its providers must read cleanly."""
    if options is not None:
        from .apply import preflight

        preflight(options.directory, providers)


def after_run(outcome: SnapshotOutcome, out: Console, exit_code: int) -> int:
    """Print the snapshot step's lines from ``run.finish``; the exit code to return.

    The exit code is the run's own, which already counts the step (``--snapshot-enforce`` fails a run on
    a regression; a snapshot file that could not be read or written is a configuration error, 2).
    """
    match outcome:
        case NoSnapshotStep():
            pass
        case SnapshotCheck():
            _print(out, check_lines(outcome, every=False))
        case SnapshotUpdate():
            _print(out, update_lines(outcome))
        case SnapshotFailure():
            problem = f"skillgym: error: token snapshots: {outcome.message}"
            make_console(stderr=True).print(problem, markup=False)
        case _:
            assert_never(outcome)
    return exit_code


# --- output lines ---------------------------------------------------------------------------------


def _tokens(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def describe(row: EntryCheck) -> str:
    """What a status means for this entry, in one phrase."""
    now, then = _tokens(row.current_total), _tokens(row.snapshot_total)
    change = "" if row.change_percent is None else f"{row.change_percent:+.1f}%, "
    if row.status in ("regressed", "improved", "unchanged"):
        trials = f"{row.trials} vs {row.snapshot_trials} trial(s)"
        return (
            f"median total {now} vs {then} per trial ({change}threshold {row.threshold_percent:g}%; {trials})"
        )
    if row.status == "new":
        return f"median total {now} per trial over {row.trials} trial(s); no snapshot yet"
    if row.status == "stale":
        return (
            f"the case changed since its snapshot (fingerprint {short(row.snapshot_fingerprint or '')} -> "
            f"{short(row.fingerprint or '')}); not compared: update the snapshot"
        )
    if row.status == "orphaned":
        return "in the snapshot but no longer in the suite; `snapshots update` removes it"
    return "no trial reported token usage" + (
        "; the snapshot is kept" if row.snapshot_total is not None else ""
    )


def check_lines(check: SnapshotCheck, *, every: bool) -> list[str]:
    """One line per entry (``every``) or per entry that needs attention, then a summary line."""
    shown = [r for r in check.rows if every or r.status in ("regressed", "stale", "orphaned")]
    table = [[r.status, r.label, f"{r.provider}/{r.model}", describe(r)] for r in shown]
    lines = [f"token snapshot {line}" if not every else line for line in columns(table)]
    counts = ", ".join(f"{n} {status}" for status, n in check.counts.items()) or "nothing measured"
    if check.not_run:
        counts += f"; {check.not_run} snapshot entr{'y' if check.not_run == 1 else 'ies'} not run"
    lines.append(f"token snapshots ({check.directory}, threshold {check.threshold_percent:g}%): {counts}")
    if check.enforce and check.regressions:
        lines.append("token regressions are enforced: exit code 1")
    if any(s in check.counts for s in ("new", "stale", "orphaned")):
        lines.append(
            "accept these token counts with `skillgym snapshots update` (or `nox -s snapshots -- --update`)"
        )
    lines += [f"note: {n}" for n in check.notes]
    return lines


def update_lines(update: SnapshotUpdate) -> list[str]:
    lines: list[str] = []
    for f in update.files:
        parts = [
            f"{n} {label}"
            for n, label in (
                (f.new, "new"),
                (f.updated, "updated"),
                (f.unchanged, "unchanged"),
                (f.removed, "removed (orphaned)"),
                (f.kept, "kept (not run)"),
                (f.missing_usage, "without usage (kept)"),
            )
            if n
        ]
        state = "written" if f.written else "no change"
        lines.append(f"token snapshots {f.file}: {', '.join(parts) or 'nothing to record'} ({state})")
    if not update.files and not update.notes:
        lines.append(f"token snapshots ({update.directory}): no trial to record")
    lines += [f"note: {n}" for n in update.notes]
    return lines


def _print(out: Console, lines: Sequence[str]) -> None:
    for line in lines:
        out.print(line, markup=False)
