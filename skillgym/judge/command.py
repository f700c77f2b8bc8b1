"""``skillgym judge check LABELLED.jsonl`` and ``skillgym judge compare RUN_DIR``: the judge's commands."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import anyio
import msgspec
from rich.console import Console

from ..errors import ExitCode, UsageError
from ..eventlog import read_run_log
from ..loader import load_suite
from ..model import Suite
from .calibration import Calibration, calibrate, store
from .flags import NO_CACHE
from .pairwise import PairwiseReport, compare_conditions, write_pairwise
from .run import open_session


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Run ``skillgym judge SUBCOMMAND``; the exit code."""
    if args.judge_command == "check":
        return _check(args, out)
    return _compare(args, out)


def _cache(args: argparse.Namespace) -> str | None:
    if args.judge_cache is not None and args.no_judge_cache:
        raise UsageError("--judge-cache and --no-judge-cache disagree; keep one")
    if args.no_judge_cache:
        return NO_CACHE
    return str(args.judge_cache.resolve()) if args.judge_cache else None


def _suite(args: argparse.Namespace, default: Path) -> Suite:
    root = args.suite if args.suite is not None else default
    if not root.is_dir():
        raise UsageError(f"no suite folder at {root}; pass --suite DIR (the suite whose judge this is)")
    return load_suite(root)


def _check(args: argparse.Namespace, out: Console) -> int:
    from ..runner import check_sandbox

    suite = _suite(args, Path("evals"))
    if not args.labelled.is_file():
        raise UsageError(
            f"no labelled file at {args.labelled}; give a .jsonl file of expectation, material, label"
        )

    async def go() -> Calibration:
        sandbox = await check_sandbox(args.sandbox)
        with tempfile.TemporaryDirectory(prefix="skillgym-judge-check-") as folder:
            session, _notes = await open_session(
                suite,
                judge=args.judge,
                record=args.judge_record,
                cache=_cache(args),
                timeout_s=args.judge_timeout,
                sandbox=sandbox,
                pairwise=True,
                workdir=folder,
            )
            assert session is not None
            return await calibrate(session, args.labelled)

    result = anyio.run(go)
    c = result.confusion
    if c.pass_pass + c.pass_fail + c.fail_pass + c.fail_fail == 0:
        raise UsageError(
            f"judge {result.judge} decided none of the {result.items} labelled items (first: "
            f"{result.misses[0].reason}); nothing was stored. Pass --judge PROVIDER:MODEL to ask a judge"
        )
    stored_at = None if args.no_store else store(suite.root, result, relative_to=Path(suite.root))
    if args.json:
        out.print(msgspec.json.format(msgspec.json.encode(result)).decode(), markup=False, soft_wrap=True)
        return ExitCode.OK
    for line in calibration_lines(result):
        out.print(line, markup=False, soft_wrap=True)
    if stored_at is not None:
        out.print(f"stored in {stored_at}", markup=False)
    return ExitCode.OK


def calibration_lines(result: Calibration) -> list[str]:
    """The human-readable figures of a calibration."""
    c = result.confusion
    kappa = "undefined (one label only)" if result.kappa is None else f"{result.kappa:.3f}"
    lines = [
        f"judge {result.judge} (prompt {result.prompt_version}) on {result.items} labelled items "
        f"({result.labelled}); {result.judge_calls} asked, the rest from the cache or recorded verdicts",
        f"accuracy {result.accuracy:.1%}  (an undecided answer counts as a disagreement)",
        f"Cohen's kappa {kappa}  (over the decided answers)",
        "confusion (rows: human label; columns: judge):",
        "            judge pass  judge fail  undecided",
        f"human pass  {c.pass_pass:>10}  {c.pass_fail:>10}  {c.pass_undecided:>9}",
        f"human fail  {c.fail_pass:>10}  {c.fail_fail:>10}  {c.fail_undecided:>9}",
    ]
    if result.misses:
        lines.append(f"{len(result.misses)} item(s) it got wrong:")
        lines += [
            f"  {m.id}: human {m.label}, judge {m.judged} — {m.expectation}"
            + (f" ({m.reason})" if m.reason else "")
            for m in result.misses
        ]
    return lines


def _compare(args: argparse.Namespace, out: Console) -> int:
    run_dir = args.run_dir.resolve()
    if not (run_dir / "events.jsonl").is_file():
        raise UsageError(f"{args.run_dir} is not a run directory (no events.jsonl); give runs/<run-id>")
    log = read_run_log(run_dir)
    suite = _suite(args, Path(log.start.suite_dir))
    report = anyio.run(
        lambda: pairwise_run(
            suite,
            run_dir,
            judge=args.judge,
            cache=_cache(args),
            record=args.judge_record,
            timeout_s=args.judge_timeout,
            sandbox_name=args.sandbox,
            seed=args.seed,
        )
    )
    from ..launch import rebuild_report

    rebuild_report(run_dir)
    if args.json:
        out.print(msgspec.json.format(msgspec.json.encode(report)).decode(), markup=False, soft_wrap=True)
        return ExitCode.OK
    for line in pairwise_lines(report):
        out.print(line, markup=False, soft_wrap=True)
    out.print(f"pairwise: {run_dir / 'pairwise.json'}; report: {run_dir / 'report.md'}", markup=False)
    return ExitCode.OK


async def pairwise_run(
    suite: Suite,
    run_dir: Path,
    *,
    judge: str | None,
    cache: str | None,
    record: bool,
    timeout_s: float,
    sandbox_name: str,
    seed: int,
) -> PairwiseReport:
    """Compare a finished run's conditions with its judge and write ``pairwise.json``."""
    from ..runner import check_sandbox

    log = read_run_log(run_dir)
    if "none" not in log.start.conditions:
        raise UsageError(
            "a pairwise comparison pits each condition against the baseline 'none', which this run did not "
            "run; run it with --condition none as well"
        )
    sandbox = await check_sandbox(sandbox_name)
    session, _notes = await open_session(
        suite,
        judge=judge,
        record=record,
        cache=cache,
        timeout_s=timeout_s,
        sandbox=sandbox,
        pairwise=True,
        workdir=str(run_dir / "judge"),
    )
    assert session is not None
    report = await compare_conditions(session, suite, list(log.results), run_dir, seed=seed)
    write_pairwise(run_dir, report)
    return report


def pairwise_lines(report: PairwiseReport) -> list[str]:
    """The human-readable summary of a pairwise comparison."""
    lines = [f"blind pairwise comparison by {report.judge} (seed {report.seed}), each condition vs none:"]
    for c in report.conditions:
        bias = "—" if c.position_bias is None else f"{c.position_bias:.0%}"
        mean = "—" if c.mean_diff is None else f"{c.mean_diff:+.2f}"
        lines.append(
            f"  {c.condition}: {c.cases} cases, net preference {mean}, case W/T/L "
            f"{c.case_wins}/{c.case_ties}/{c.case_losses}, {c.verdict}; swap disagreed in "
            f"{c.swap_disagreements} of {c.pairs} pairs ({bias})"
        )
    return lines


def compare_after_run(run_dir: str, suite: Suite, options: Any, out: Console) -> PairwiseReport:
    """``run --compare-conditions judge``: the blind comparison of the run just finished, and its report."""
    from ..launch import rebuild_report

    report = anyio.run(
        lambda: pairwise_run(
            suite,
            Path(run_dir),
            judge=options.judge,
            cache=options.judge_cache,
            record=options.judge_record,
            timeout_s=options.judge_timeout_s,
            sandbox_name=options.sandbox,
            seed=options.pairwise_seed,
        )
    )
    rebuild_report(Path(run_dir))
    for line in pairwise_lines(report):
        out.print(line, markup=False, soft_wrap=True)
    return report
