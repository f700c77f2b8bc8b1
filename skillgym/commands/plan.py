"""`skillgym plan --power`: the trials and cases a lift needs, and the smallest lift a run can detect."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import msgspec
from rich.console import Console

from ..adaptive import futility_value
from ..errors import ExitCode, UsageError
from ..loader import load_suite
from ..model import DEFAULT_FUTILITY, LANES
from ..plan import build_plan
from ..power import (
    adaptive_cap_needed,
    adaptive_case,
    cases_needed,
    smallest_lift,
    suite_power,
    trials_needed,
)
from ..scheduler import lift_pairs


def add_parser(sub: Any) -> None:
    """The `plan` subcommand."""
    plan = sub.add_parser("plan", help="power planning: trials and cases needed to detect a lift")
    plan.set_defaults(handler=main)
    plan.add_argument(
        "--power",
        dest="target",
        nargs="?",
        type=float,
        const=0.8,
        default=None,
        metavar="P",
        help="plan for power P, the chance of detecting the lift (default 0.8); required",
    )
    plan.add_argument("--suite", type=Path, default=Path("evals"), help="suite directory (default: evals)")
    plan.add_argument("--lane", action="append", default=[], metavar="L", help="lane (repeatable)")
    plan.add_argument("--condition", action="append", default=[], metavar="C", help="condition (repeatable)")
    plan.add_argument("--case", action="append", default=[], metavar="ID", help="case id (repeatable)")
    plan.add_argument(
        "--lift", type=float, default=0.2, help="the lift to detect, in pass rate (default 0.2)"
    )
    plan.add_argument("--alpha", type=float, default=0.05, help="two-sided error rate (default 0.05)")
    plan.add_argument(
        "--control-rate",
        type=float,
        default=0.5,
        metavar="P",
        help="the control condition's pass rate you expect (default 0.5)",
    )
    plan.add_argument(
        "--trials",
        type=int,
        default=5,
        metavar="N",
        help="trials per case and condition for the reverse question (default 5)",
    )
    plan.add_argument(
        "--max-trials",
        type=int,
        default=20,
        metavar="N",
        help="the cap of an adaptive case (--trials auto) (default 20)",
    )
    plan.add_argument(
        "--futility",
        type=futility_value,
        default=DEFAULT_FUTILITY,
        metavar="K|none",
        help=f"the futility rule of an adaptive case, as run --futility (default {DEFAULT_FUTILITY:g})",
    )
    plan.add_argument("--json", action="store_true", help="machine-readable output")


def _check(args: argparse.Namespace) -> None:
    if args.target is None:
        raise UsageError("skillgym plan needs --power [P] (power planning is the only planning it does)")
    for name, value in (("--lift", args.lift), ("--power", args.target), ("--alpha", args.alpha)):
        if not 0.0 < value < 1.0:
            raise UsageError(f"{name} must be strictly between 0 and 1, got {value}")
    if not 0.0 <= args.control_rate < 1.0 or args.control_rate + args.lift > 1.0:
        raise UsageError(
            f"--control-rate {args.control_rate} plus --lift {args.lift} must stay within [0, 1]; lower one"
        )
    if args.trials < 1 or args.max_trials < 1:
        raise UsageError("--trials and --max-trials must be at least 1")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Plan per lane of the suite: the figures for every lift the run would compare there."""
    _check(args)
    suite = load_suite(args.suite)
    plan = build_plan(suite, lanes=args.lane, conditions=args.condition, case_ids=args.case, trials=1)
    pairs = lift_pairs(plan.conditions)
    knobs = {"control": args.control_rate, "alpha": args.alpha}
    lanes: list[dict[str, Any]] = []
    for lane in (lane for lane in LANES if lane in plan.lanes):
        cases = len({i.id.case_id for i in plan.items if i.id.lane == lane})
        needed = trials_needed(cases, args.lift, args.target, **knobs)
        at_trials = cases_needed(args.trials, args.lift, args.target, **knobs)
        lanes.append(
            {
                "lane": lane,
                "cases": cases,
                "lifts": [f"{t} vs {c}" for t, c in pairs],
                "trials_needed": None if needed is None else needed.trials,
                "power_at_trials_needed": None if needed is None else needed.power,
                "cases_needed_at_trials": None if at_trials is None else at_trials.cases,
                "power_at_trials": suite_power(cases, args.trials, args.lift, **knobs),
                "smallest_lift_at_trials": smallest_lift(cases, args.trials, args.target, **knobs),
            }
        )
    adaptive = adaptive_case(args.lift, max_trials=args.max_trials, futility=args.futility, **knobs)
    cap = adaptive_cap_needed(args.lift, args.target, futility=args.futility, **knobs)
    doc = {
        "lift": args.lift,
        "power": args.target,
        "alpha": args.alpha,
        "control_rate": args.control_rate,
        "trials": args.trials,
        "lanes": lanes,
        "adaptive_case": msgspec.to_builtins(adaptive),
        "adaptive_cap_needed": None if cap is None else msgspec.to_builtins(cap),
    }
    if args.json:
        out.out(msgspec.json.encode(doc).decode(), highlight=False)
        return ExitCode.OK
    for line in _lines(doc, args):
        out.print(line, markup=False)
    return ExitCode.OK


def _lines(doc: dict[str, Any], args: argparse.Namespace) -> list[str]:
    lift, target, trials = args.lift, args.target, args.trials
    lines = [
        f"power plan: detect a lift of {lift:g} over a control pass rate of {args.control_rate:g} with power "
        f"{target:g} at alpha {args.alpha:g}, as the report decides it: per lane, cases paired, the lift's "
        "interval excluding 0 and the exact sign test rejecting (simulated, "
        "cases alike; spread between cases needs more)",
    ]
    for lane in doc["lanes"]:
        n = lane["cases"]
        lines.append(
            f"lane {lane['lane']}: {n} case(s); lifts compared: {', '.join(lane['lifts']) or 'none'}"
        )
        if lane["trials_needed"] is None:
            lines.append(f"  {n} case(s) cannot reach it with up to 50 trials: add cases")
        else:
            lines.append(
                f"  trials needed: {lane['trials_needed']} per case and condition "
                f"(power {lane['power_at_trials_needed']:.2f})"
            )
        cases = lane["cases_needed_at_trials"]
        lines.append(
            f"  at --trials {trials}: "
            + (f"{cases} case(s) needed" if cases is not None else "more than 400 cases needed")
            + f"; these {n} case(s) have power {lane['power_at_trials']:.2f}"
        )
        smallest = lane["smallest_lift_at_trials"]
        lines.append(
            f"  smallest lift these {n} case(s) detect at --trials {trials}: "
            + (f"{smallest:.2f}" if smallest is not None else "none, even a lift to 1.0")
        )
    a = doc["adaptive_case"]
    rule = "none" if a["futility"] is None else f"{a['futility']:g}"
    lines.append(
        f"per case, --trials auto --max-trials {a['max_trials']} --futility {rule}: its own lift is decided "
        f"improved with power {a['power']:.2f} (futile {a['futile']:.0%}, inconclusive), after "
        f"{a['mean_trials_per_side']:.1f} trials per condition on average"
    )
    cap = doc["adaptive_cap_needed"]
    lines.append(
        f"  --max-trials for power {target:g} per case: "
        + (
            f"{cap['max_trials']} (power {cap['power']:.2f}, {cap['mean_trials_per_side']:.1f} trials per "
            "condition on average at this lift)"
            if cap is not None
            else "more than 100: plan for a larger lift or suite-level verdicts"
        )
    )
    return lines
