"""`skillgym compare A B`: what changed between two runs, per case, with the test behind each verdict."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from ..errors import ExitCode, UsageError
from ..files import write_atomic
from ..report import Report, load_report
from ..report.comparison import FORMATS, compare_runs, render_html, render_json, render_md

_RENDER = {"md": render_md, "json": render_json, "html": render_html}


def add_parser(sub: Any) -> None:
    """Add `compare` to the CLI's subcommands (``sub`` is argparse's subparsers action)."""
    parser = sub.add_parser(
        "compare",
        help="compare two runs: fixed, regressed, new, removed, unchanged, inconclusive, flaky",
        description=(
            "Pair B's cases with A's by lane, case, condition and provider and say what changed, with the "
            "test behind each verdict; the same comparison `run --compare-baseline A` puts in report.json."
        ),
    )
    parser.set_defaults(handler=main)
    parser.add_argument("baseline", type=Path, metavar="A", help="the earlier run: its folder or report.json")
    parser.add_argument("current", type=Path, metavar="B", help="the later run: its folder or report.json")
    parser.add_argument("--format", choices=FORMATS, default="md", help="output format (default md)")
    parser.add_argument(
        "--output", "-o", type=Path, metavar="FILE", help="write the comparison to FILE instead of stdout"
    )
    parser.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a case, or the overall verdict, regressed conclusively",
    )


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Run `skillgym compare`; bad input raises UsageError (exit 2) before anything is written."""
    sources = (str(args.baseline), str(args.current))
    baseline = load_run(args.baseline, what="the baseline run (A)")
    current = load_run(args.current, what="the current run (B)")
    comparison = compare_runs(baseline, current, sources=sources)
    c = comparison.comparison
    if c.baseline_suite != c.current_suite:
        err.print(
            f"skillgym: warning: A ran suite {c.baseline_suite} and B suite {c.current_suite}; only cases "
            "with the same lane and id are paired, and a changed fingerprint is never compared",
            markup=False,
        )
    text = _RENDER[args.format](comparison)
    if args.output is not None:
        if args.output.is_dir():
            raise UsageError(f"--output {args.output} is a folder; name the file to write, e.g. compare.html")
        if not args.output.parent.is_dir():
            raise UsageError(f"--output {args.output}: folder {args.output.parent} does not exist; create it")
        write_atomic(args.output, text)
        err.print(f"wrote {args.output}", markup=False)
    else:
        out.out(text, end="", highlight=False)
    if args.fail_on_regression and comparison.regressions:
        err.print(
            f"skillgym: {len(comparison.regressions)} conclusive regression(s): "
            + ", ".join(comparison.regressions),
            markup=False,
        )
        return ExitCode.FAILED
    return ExitCode.OK


def load_run(path: Path, *, what: str) -> Report:
    """A run's report from its report.json, or, in a run folder without one, from its events.jsonl.

    Nothing is written: a run whose report was never written (a crash) is reported from its events in memory.
    """
    if not path.exists():
        raise UsageError(
            f"{what} {path} does not exist; pass a run folder (runs/<run-id>) or its report.json"
        )
    if path.is_file() or (path / "report.json").is_file():
        return load_report(path, what=what)
    if (path / "events.jsonl").is_file():
        from ..eventlog import read_run_log
        from ..reporters.final import report_from

        log = read_run_log(path)
        return report_from(log.start, list(log.results), log.finish, None)
    runs = sorted(
        p.name
        for p in path.iterdir()
        if not p.is_symlink() and ((p / "report.json").is_file() or (p / "events.jsonl").is_file())
    )
    hint = f"; it holds runs: pass one of them, e.g. {path / runs[-1]}" if runs else ""
    raise UsageError(
        f"{what} {path} is not a skillgym run: it has neither report.json nor events.jsonl{hint}; pass a "
        "run folder (runs/<run-id>) or its report.json"
    )
