"""``skillgym export skill-creator``: a run as skill-creator's grading, timing and benchmark files."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from ..errors import ExitCode

_WITH = "self-load"
_WITHOUT = "none"


def add_parser(sub: Any) -> None:
    """``export`` and its one kind, ``skill-creator``."""
    command = sub.add_parser("export", help="write a run in another tool's format")
    command.set_defaults(handler=main)
    kinds = command.add_subparsers(dest="export_kind", required=True, metavar="FORMAT")
    creator = kinds.add_parser(
        "skill-creator",
        help="grading.json, timing.json and benchmark.json, as skill-creator's viewer and scripts read them",
        description="Write a run's trials as skill-creator's workspace: eval-<id>/<configuration>/run-<n>/ "
        "with grading.json, timing.json and outputs/, plus benchmark.json (and evals.json and the trigger "
        "results for cases imported with `skillgym import evals`). with_skill and without_skill are two "
        "of the run's conditions.",
    )
    creator.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run folder (runs/<run-id>)")
    creator.add_argument("out_dir", type=Path, metavar="OUT_DIR", help="the folder to write (created)")
    creator.add_argument(
        "--with-skill",
        default=_WITH,
        metavar="CONDITION",
        help=f"the condition exported as with_skill (default {_WITH}: installed, the agent finds it)",
    )
    creator.add_argument(
        "--without-skill",
        default=_WITHOUT,
        metavar="CONDITION",
        help=f"the condition exported as without_skill (default {_WITHOUT}: the baseline)",
    )
    creator.add_argument(
        "--provider", metavar="P", help="the provider whose trials to export (when the run has several)"
    )
    creator.add_argument(
        "--suite",
        type=Path,
        metavar="DIR",
        help="the run's suite, when it is no longer where the run found it",
    )
    creator.add_argument("--force", action="store_true", help="replace OUT_DIR when it is not empty")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Run ``skillgym export skill-creator``; errors are raised as ``SkillgymError`` for the CLI."""
    from ..evalsformat.exporter import export_skill_creator

    done = export_skill_creator(
        args.run_dir,
        args.out_dir,
        with_skill=args.with_skill,
        without_skill=args.without_skill,
        provider=args.provider,
        suite=args.suite,
        force=args.force,
    )
    out.print(
        f"exported {done.evals} eval(s), {done.runs} run(s) ({args.with_skill} as with_skill, "
        f"{args.without_skill} as without_skill) to {done.out_dir}/",
        markup=False,
    )
    if done.trigger_queries:
        out.print(
            f"  {done.trigger_queries} trigger queries: {done.out_dir / 'trigger-results.json'}", markup=False
        )
    for note in done.notes:
        err.print(f"skillgym: note: {note}", markup=False)
    out.print(f"  benchmark: {done.out_dir / 'benchmark.json'}", markup=False)
    return ExitCode.OK
