"""``skillgym import evals``: an Agent Skills eval file (evals.json or a trigger-eval set) into a suite."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from ..errors import ExitCode


def add_parser(sub: Any) -> None:
    """``import`` and its one kind, ``evals``."""
    command = sub.add_parser("import", help="import evals written for another tool into a suite")
    command.set_defaults(handler=main)
    kinds = command.add_subparsers(dest="import_kind", required=True, metavar="KIND")
    evals = kinds.add_parser(
        "evals",
        help="skill-creator's evals/evals.json (or a trigger-eval set) as readable case files",
        description="Write the evals of an Agent Skills evals.json (execution cases with judged checks) or "
        "of a trigger-eval set [{query, should_trigger}] (prompt cases) into a suite. A folder that is not "
        "a suite yet gets suite.py, the four conditions and a copy of the skill, as `skillgym init` drafts "
        "them.",
    )
    evals.add_argument(
        "file", type=Path, metavar="EVALS_JSON", help="SKILL_DIR/evals/evals.json or a trigger set"
    )
    evals.add_argument(
        "--suite",
        type=Path,
        default=Path("evals"),
        metavar="DIR",
        help="the suite the cases go in (default: evals)",
    )
    evals.add_argument(
        "--skill",
        type=Path,
        metavar="SKILL_DIR",
        help="the skill's folder (default: the folder with SKILL.md beside the file or one level up)",
    )
    evals.add_argument("--force", action="store_true", help="overwrite files that already exist")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Run ``skillgym import evals``; errors are raised as ``SkillgymError`` for the CLI to report."""
    from ..evalsformat import import_evals

    done = import_evals(args.file, args.suite, force=args.force, skill_dir=args.skill)
    suite = done.suite
    what = "evals" if done.kind == "evals" else "trigger queries"
    out.print(
        f"imported {len(done.cases)} {what} of the skill {done.skill!r} from {done.source} into {suite}/",
        markup=False,
    )
    if done.drafted_suite:
        out.print(
            f"  drafted the suite around the skill: {suite / 'suite.py'} and {suite / 'conditions'}/",
            markup=False,
        )
    if done.copied_skill_from is not None:
        out.print(
            f"  copied the skill from {done.copied_skill_from} into the suite: trials see this copy",
            markup=False,
        )
    out.print(f"  cases: {suite / done.case_file}", markup=False)
    for rel in done.written:
        if rel != done.case_file and not rel.startswith(("suite.py", "conditions/", "skills/")):
            out.print(f"  wrote {suite / rel}", markup=False)
    if done.ignored:
        err.print(
            f"skillgym: note: not imported (skillgym does not read these keys): {', '.join(done.ignored)}",
            markup=False,
        )
    out.print("next:", markup=False)
    out.print(f"  skillgym list --suite {suite}", markup=False)
    judge = " --judge stub" if done.kind == "evals" else ""  # judged checks need a judge; stub is offline
    out.print(
        f"  skillgym run --suite {suite} --provider stub{judge}    # the plumbing, offline", markup=False
    )
    return ExitCode.OK
