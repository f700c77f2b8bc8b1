"""The run flags of adaptive trials and A/A calibration, and the plan settings a resumed run reuses."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from .errors import UsageError
from .model import DEFAULT_FUTILITY, Suite, TrialPolicy
from .scheduler import AA_SUFFIX


def trials_value(text: str) -> int | str:
    """``--trials``: a whole number of at least 1, or ``auto``."""
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number or 'auto', got {text!r}") from None


def futility_value(text: str) -> float | None:
    """``--futility``: a number of standard errors, at least 0, or ``none`` (curtailment only)."""
    if text == "none":
        return None
    try:
        k = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of standard errors or 'none', got {text!r}"
        ) from None
    if not 0.0 <= k < float("inf"):
        raise argparse.ArgumentTypeError(
            f"expected a finite number of standard errors, at least 0, got {text!r}"
        )
    return k


_UNSET: Any = object()  # --futility not given: the policy's default


def add_adaptive_flags(trials: argparse._ArgumentGroup) -> None:
    """``--trials N|auto`` and its companions, in the run parser's trials group."""
    trials.add_argument(
        "--trials",
        type=trials_value,
        default=None,
        metavar="N|auto",
        help="trials per case and condition, or auto: stop each once its verdict is settled "
        "(default: the case's or suite's own, else 1)",
    )
    trials.add_argument(
        "--max-trials", type=int, default=None, metavar="N", help="with --trials auto: the most (default 20)"
    )
    trials.add_argument(
        "--min-trials", type=int, default=None, metavar="K", help="with --trials auto: the fewest (default 3)"
    )
    trials.add_argument(
        "--futility",
        type=futility_value,
        default=_UNSET,
        metavar="K|none",
        help="with --trials auto: stop a question as futile (inconclusive) once the trials left could not "
        f"decide it going on at its estimate +/- K standard errors (default {DEFAULT_FUTILITY:g}; none: only "
        "once no continuation could)",
    )
    trials.add_argument(
        "--decision-threshold",
        type=float,
        default=0.5,
        metavar="P",
        help="adaptive trials: the pass rate a case outside any lift is decided against (default 0.5)",
    )
    trials.add_argument(
        "--aa",
        metavar="CONDITION",
        default=None,
        help=f"A/A calibration: also run CONDITION as a second arm, CONDITION{AA_SUFFIX}, and report how "
        "often the verdicts call a difference between the two",
    )


# The flags above that shape the plan: a resumed run keeps them.
PLAN_FLAGS = ("max_trials", "min_trials", "futility", "decision_threshold", "aa")


def trial_policy(args: argparse.Namespace) -> int | TrialPolicy | None:
    """What ``--trials`` (and ``--max-trials``, ``--min-trials``, ``--futility``) asks of every case; None:
    each its own."""
    given, most, least = args.trials, args.max_trials, args.min_trials
    futility = getattr(args, "futility", _UNSET)
    if given != "auto":
        if most is not None or least is not None or futility is not _UNSET:
            raise UsageError(
                "--max-trials, --min-trials and --futility go with --trials auto; add it, or drop them"
            )
        if given is not None and given < 1:
            raise UsageError(f"--trials must be at least 1, got {given}")
        return given  # type: ignore[no-any-return]
    default = TrialPolicy()
    most = default.max_trials if most is None else most
    least = min(default.min_trials, most) if least is None else least
    if least < 1 or most < least:
        raise UsageError(
            f"--min-trials {least} and --max-trials {most}: need 1 <= --min-trials <= --max-trials"
        )
    k = default.futility if futility is _UNSET else futility
    return TrialPolicy(auto=True, min_trials=least, max_trials=most, futility=k)


def check_threshold(value: float) -> float:
    if not 0.0 < value < 1.0:
        raise UsageError(f"--decision-threshold must be strictly between 0 and 1, got {value}")
    return value


def with_aa(suite: Suite, condition: str | None) -> Suite:
    """The suite with ``condition`` copied as a second arm, ``<condition>~aa``, for every case it has."""
    if condition is None:
        return suite
    found = [c for c in suite.conditions if c.id == condition]
    if not found:
        raise UsageError(
            f"--aa {condition!r} is not one of the suite's conditions: "
            f"{', '.join(c.id for c in suite.conditions)}; name one of them"
        )
    arm = f"{condition}{AA_SUFFIX}"
    cases = tuple(
        msgspec.structs.replace(case, conditions=(*case.conditions, arm))
        if condition in case.conditions and arm not in case.conditions
        else case
        for case in suite.cases
    )
    copy = msgspec.structs.replace(found[0], id=arm, description=f"A/A copy of {condition}")
    return msgspec.structs.replace(suite, cases=cases, conditions=(*suite.conditions, copy))


def aa_conditions(conditions: list[str], aa: str | None) -> list[str]:
    """A --condition filter with the A/A condition and its copy in it (an empty filter takes every one)."""
    if aa is None or not conditions:
        return conditions
    return list(dict.fromkeys([*conditions, aa, f"{aa}{AA_SUFFIX}"]))


def plan_settings(given: int | TrialPolicy | None, threshold: float, aa: str | None) -> dict[str, Any]:
    """What run.start's settings keep so that `run --resume` rebuilds the same plan."""
    return {
        "trials_policy": msgspec.to_builtins(given),
        "decision_threshold": threshold,
        "aa": aa,
    }


def resumed_policy(settings: dict[str, Any], trials: int) -> int | TrialPolicy | None:
    """The ``trials`` a run started with, from its run.start settings (older runs: its fixed count)."""
    if "trials_policy" not in settings:
        return trials
    kept = settings["trials_policy"]
    return kept if kept is None or isinstance(kept, int) else recorded_policy(kept)


def recorded_policy(kept: dict[str, Any]) -> TrialPolicy:
    """A trial policy as a run recorded it. A run from before the futility rule recorded no ``futility``
    and stopped only by curtailment: it keeps that rule (None), never today's default."""
    return msgspec.convert({"futility": None, **kept}, TrialPolicy)
