"""Did it fire vs did it help: how often a self-loaded skill loads, and what loading it goes with."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from ..model import LANES, Data, Lane
from ..paired import Comparison, compare_paired
from ..results import NOT_THE_AGENTS, TrialResult
from ..score_intervals import suite_pass_interval
from ..stats import Interval, fmean, wilson_interval

# The condition in which the agent must load the skill itself, and the two it is read against.
SELF_LOAD: Final = "self-load"
PRELOADED: Final = "preloaded"
NONE: Final = "none"
GAP: Final = "activation gap (preloaded vs self-load)"
HELP: Final = "help when loaded (self-load trials that loaded the skill vs none)"


class Activation(Data, frozen=True, kw_only=True):
    """One lane and provider's self-load trials: did the skill fire (load), and did it help.

    Activation counts graded self-load trials of cases that expect a skill, by the trace's load evidence
    (Grade.skill_loaded); errored trials have no grade and are not counted. ``activation_gap`` and
    ``help_when_loaded`` pair per case. The gap is a comparison of two assigned conditions; help when
    loaded conditions on the agent's own choice to load, so it is observational: an association, not the
    skill's effect (the oracle lift, preloaded vs none, is the assigned estimate of help when loaded).
    """

    lane: Lane
    provider: str
    condition: str  # self-load
    cases: int  # cases with a self-load trial whose load evidence is known
    trials: int  # such trials
    activated: int  # of those, the trials whose trace shows the expected skill loaded
    activation_rate: float | None
    activation_interval: Interval | None  # Wilson over trials
    # The case-level interval of the mean per-case activation rate (cases are the unit); None below two.
    case_activation_interval: Interval | None
    cases_never_activated: int  # cases none of whose known trials loaded the skill
    passed_when_activated: int
    pass_rate_when_activated: float | None
    pass_interval_when_activated: Interval | None  # Wilson
    not_activated: int  # trials - activated
    passed_when_not_activated: int
    pass_rate_when_not_activated: float | None
    pass_interval_when_not_activated: Interval | None  # Wilson
    # Per case: preloaded's pass rate minus self-load's (both over trials for verdicts): what not loading
    # the skill on its own costs. None when no case ran both.
    activation_gap: Comparison | None
    # Per case with an activated self-load trial: the pass rate of those trials minus none's. Observational.
    help_when_loaded: Comparison | None
    # Over the cases that ran none, self-load and preloaded, the mean lifts in which
    # realized (self-load - none) = oracle (preloaded - none) - activation gap (preloaded - self-load).
    split_cases: int
    realized_lift: float | None
    oracle_lift: float | None
    gap: float | None


def _verdict_rate(trials: Sequence[TrialResult]) -> float | None:
    """Passes over every trial but those errored for reasons not the agent's (as CaseStats counts)."""
    counted = [r for r in trials if r.error_class not in NOT_THE_AGENTS]
    return sum(r.status == "passed" for r in counted) / len(counted) if counted else None


def _loaded(r: TrialResult) -> bool | None:
    return None if r.grade is None else r.grade.skill_loaded


def _rate(passed: int, n: int) -> tuple[float | None, Interval | None]:
    return (passed / n if n else None), wilson_interval(passed, n)


def _paired(
    name: str, by_case: Mapping[str, tuple[Sequence[TrialResult], Sequence[TrialResult]]]
) -> Comparison | None:
    pairs: list[tuple[float, float]] = []
    trials = 1
    for treated, control in by_case.values():
        t, c = _verdict_rate(treated), _verdict_rate(control)
        if t is not None and c is not None:
            pairs.append((t, c))
            trials = max(trials, len(treated), len(control))
    return compare_paired(name, pairs, trials=trials) if pairs else None


def _summary(lane: Lane, provider: str, by: dict[tuple[str, str], list[TrialResult]]) -> Activation | None:
    cases = {case for case, condition in by if condition == SELF_LOAD}
    known = {c: [r for r in by[(c, SELF_LOAD)] if _loaded(r) is not None] for c in cases}
    known = {c: trials for c, trials in known.items() if trials}
    if not known:
        return None
    flat = [r for trials in known.values() for r in trials]
    fired = [r for r in flat if _loaded(r)]
    quiet = [r for r in flat if not _loaded(r)]
    rate, interval = _rate(len(fired), len(flat))
    case_rates = [sum(bool(_loaded(r)) for r in trials) / len(trials) for trials in known.values()]
    most = max(len(trials) for trials in known.values())
    fired_passed, quiet_passed = sum(r.ok for r in fired), sum(r.ok for r in quiet)
    gap_cases = {c: (by[(c, PRELOADED)], by[(c, SELF_LOAD)]) for c in cases if (c, PRELOADED) in by}
    help_cases = {
        c: (activated, by[(c, NONE)])
        for c, trials in known.items()
        if (c, NONE) in by and (activated := [r for r in trials if _loaded(r)])
    }
    split = _split(by, cases)
    return Activation(
        lane=lane,
        provider=provider,
        condition=SELF_LOAD,
        cases=len(known),
        trials=len(flat),
        activated=len(fired),
        activation_rate=rate,
        activation_interval=interval,
        case_activation_interval=suite_pass_interval(case_rates, most) if len(case_rates) > 1 else None,
        cases_never_activated=sum(1 for r in case_rates if r == 0.0),
        passed_when_activated=fired_passed,
        pass_rate_when_activated=_rate(fired_passed, len(fired))[0],
        pass_interval_when_activated=_rate(fired_passed, len(fired))[1],
        not_activated=len(quiet),
        passed_when_not_activated=quiet_passed,
        pass_rate_when_not_activated=_rate(quiet_passed, len(quiet))[0],
        pass_interval_when_not_activated=_rate(quiet_passed, len(quiet))[1],
        activation_gap=_paired(GAP, gap_cases),
        help_when_loaded=_paired(HELP, help_cases),
        split_cases=split[0],
        realized_lift=split[1],
        oracle_lift=split[2],
        gap=split[3],
    )


def _split(
    by: dict[tuple[str, str], list[TrialResult]], cases: Iterable[str]
) -> tuple[int, float | None, float | None, float | None]:
    """The realized, oracle and gap mean lifts over the cases with a rate under all three conditions."""
    rows: list[tuple[float, float, float]] = []
    for case in cases:
        rates = [_verdict_rate(by.get((case, condition), ())) for condition in (NONE, SELF_LOAD, PRELOADED)]
        none, self_load, preloaded = rates
        if none is not None and self_load is not None and preloaded is not None:
            rows.append((none, self_load, preloaded))
    if not rows:
        return 0, None, None, None
    realized = fmean([s - n for n, s, _ in rows])
    oracle = fmean([p - n for n, _, p in rows])
    gap = fmean([p - s for _, s, p in rows])
    return len(rows), realized, oracle, gap


def activation_summaries(results: Iterable[TrialResult], providers: Sequence[str]) -> tuple[Activation, ...]:
    """Per lane and provider with self-load trials whose load evidence is known, in report order."""
    groups: dict[tuple[Lane, str], dict[tuple[str, str], list[TrialResult]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in results:
        groups[(r.id.lane, r.id.provider)][(r.id.case_id, r.id.condition)].append(r)
    out: list[Activation] = []
    for lane in LANES:
        for provider in (*providers, *sorted({p for _, p in groups} - set(providers))):
            by = groups.get((lane, provider))
            if by is not None and (found := _summary(lane, provider, by)) is not None:
                out.append(found)
    return tuple(out)
