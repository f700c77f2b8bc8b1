"""The judge's command-line flags (``run --judge ...``) and the ``judge`` command's parser.

Kept apart from the judge's engine so that building the parser imports nothing heavy.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Final

from ..errors import UsageError
from ..sandboxes.base import DEFAULT_SANDBOX

NO_CACHE: Final = "none"
DEFAULT_JUDGE_TIMEOUT_S: Final = 180.0


def add_judge_flags(run: argparse.ArgumentParser) -> None:
    """The run's judge flags, in a group of their own."""
    group = run.add_argument_group("judge (who grades judged checks)")
    group.add_argument(
        "--judge",
        metavar="PROVIDER:MODEL",
        help="grade judged checks and rubrics with this provider in judge mode (claude:MODEL, codex:MODEL; "
        "stub to try the plumbing; replay[:PROVIDER:MODEL] plays recorded verdicts). Default: replay of "
        "the suite's judged_by(...) judge",
    )
    group.add_argument(
        "--judge-record",
        action="store_true",
        help="save the judge's answers into the suite (judge/verdicts/) so later runs replay them offline",
    )
    group.add_argument(
        "--judge-cache",
        metavar="DIR",
        help="where judge answers are cached (default: $SKILLGYM_JUDGE_CACHE or ~/.cache/skillgym/judge)",
    )
    group.add_argument(
        "--no-judge-cache", action="store_true", help="neither read nor write the judge cache for this run"
    )
    group.add_argument(
        "--judge-timeout",
        type=float,
        default=DEFAULT_JUDGE_TIMEOUT_S,
        metavar="SECONDS",
        help=f"limit for one judge answer (default {DEFAULT_JUDGE_TIMEOUT_S:g})",
    )
    group.add_argument(
        "--compare-conditions",
        choices=("judge",),
        help="after the run, compare each condition's answers with the baseline's, blind and order-swapped, "
        "by the judge (pairwise.json, a section in report.md)",
    )
    group.add_argument(
        "--pairwise-seed",
        type=int,
        default=0,
        metavar="N",
        help="seed of the order in which pairs are shown to the judge (default 0)",
    )


def judge_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``RunOptions`` fields the judge flags set."""
    if args.judge_cache is not None and args.no_judge_cache:
        raise UsageError("--judge-cache and --no-judge-cache disagree; keep one")
    if args.judge is not None:
        from .judges import REPLAY, parse_spec

        spec = parse_spec(args.judge)  # a mistake is named before anything runs
        if args.judge_record and spec.provider == REPLAY:
            raise UsageError("--judge-record saves a real judge's answers; --judge replay gives none")
    if args.judge_timeout <= 0:
        raise UsageError(f"--judge-timeout must be a number of seconds above 0, got {args.judge_timeout:g}")
    cache = (
        NO_CACHE
        if args.no_judge_cache
        else (str(Path(args.judge_cache).resolve()) if args.judge_cache else None)
    )
    return {
        "judge": args.judge,
        "judge_record": args.judge_record,
        "judge_cache": cache,
        "judge_timeout_s": args.judge_timeout,
        "compare_conditions": args.compare_conditions,
        "pairwise_seed": args.pairwise_seed,
    }


def add_judge_parser(sub: Any) -> None:
    """``skillgym judge ...``."""
    judge = sub.add_parser("judge", help="calibrate the judge against human labels, or compare conditions")
    commands = judge.add_subparsers(dest="judge_command", required=True, metavar="SUBCOMMAND")
    check = commands.add_parser(
        "check",
        help="agreement of the judge with a labelled file: accuracy, Cohen's kappa, confusion, misses",
    )
    check.add_argument("labelled", type=Path, metavar="LABELLED.jsonl")
    check.add_argument(
        "--no-store",
        action="store_true",
        help="do not keep the figures in the suite's judge/calibration.json",
    )
    compare = commands.add_parser(
        "compare", help="blind, order-swapped pairwise comparison of a finished run's conditions"
    )
    compare.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    compare.add_argument(
        "--seed", type=int, default=0, help="seed of the order pairs are shown in (default 0)"
    )
    for parser in (check, compare):
        parser.add_argument("--suite", type=Path, default=None, help="suite directory (default: evals)")
        parser.add_argument(
            "--judge",
            metavar="PROVIDER:MODEL",
            help="the judge (default: replay of the suite's judged_by judge)",
        )
        parser.add_argument("--judge-cache", type=Path, metavar="DIR", help="where judge answers are cached")
        parser.add_argument("--no-judge-cache", action="store_true", help="neither read nor write the cache")
        parser.add_argument(
            "--judge-record",
            action="store_true",
            help="save the judge's answers into the suite (judge/verdicts/)",
        )
        parser.add_argument("--judge-timeout", type=float, default=DEFAULT_JUDGE_TIMEOUT_S, metavar="SECONDS")
        parser.add_argument(
            "--sandbox", default=DEFAULT_SANDBOX, help="where the judge's CLI runs (default %(default)s)"
        )
        parser.add_argument("--json", action="store_true", help="machine-readable output")
