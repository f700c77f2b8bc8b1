"""The plan: cases x conditions x providers x trials expanded into keyed work items."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import UsageError
from .identity import TrialId, trial_id
from .identity import item_key as item_key
from .model import LANES, Case, Data, Lane, Suite, TrialPolicy, WorkspacePreset

# The most trials one plan may hold. Every trial is a work item in memory, a line in the dry run and a
# folder in the run directory, so a plan past this is a typo (--trials 100000000), not a measurement.
MAX_PLAN_TRIALS = 1_000_000


class WorkItem(Data, frozen=True, kw_only=True):
    """One trial to run; ``id.key`` is stable across runs and mirrors the trial's directory."""

    id: TrialId
    model: str | None  # what the run asks for (--model); None: the provider's default
    workspace: str | None


class Plan(Data, frozen=True, kw_only=True):
    """Everything ``run`` will do, in execution order; a dry run prints it and stops."""

    suite: str
    lanes: tuple[Lane, ...]
    conditions: tuple[str, ...]
    providers: tuple[str, ...]
    case_ids: tuple[str, ...] = ()  # the --case filter, empty for every case
    model: str | None
    trials: int  # the most trials any case and condition may get (an auto case's max_trials)
    items: tuple[WorkItem, ...]
    presets: tuple[WorkspacePreset, ...]
    # Cases with adaptive trials (--trials auto, c.trials("auto"), skillgym.trials("auto")) and their
    # policy: their items up to max_trials are planned; the adaptive schedule runs only what is needed.
    auto: dict[str, TrialPolicy] = {}
    decision_threshold: float = 0.5  # the pass rate an adaptive case's rate is decided against


def _check_known(kind: str, flag: str, wanted: Sequence[str], known: Sequence[str]) -> None:
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise UsageError(
            f"unknown {kind} {', '.join(repr(u) for u in unknown)} given to {flag}; "
            f"valid {kind}s: {', '.join(known) or '(none)'}"
        )


def build_plan(
    suite: Suite,
    *,
    lanes: Sequence[str] = (),
    conditions: Sequence[str] = (),
    case_ids: Sequence[str] = (),
    providers: Sequence[str] = ("replay",),
    model: str | None = None,
    trials: int | TrialPolicy | None = 1,
    decision_threshold: float = 0.5,
) -> Plan:
    """Expand the suite into work items; filters that name unknown things are a UsageError (exit 2).

    ``trials``: a number or a policy for every case (the command line's), or None for each case's own
    (``c.trials()``, else the suite's ``skillgym.trials()``, else one).
    """
    if isinstance(trials, int) and trials < 1:
        raise UsageError(f"--trials must be at least 1, got {trials}")
    _check_known("lane", "--lane", lanes, LANES)
    condition_ids = [c.id for c in suite.conditions]
    _check_known("condition", "--condition", conditions, condition_ids)
    _check_known("case id", "--case", case_ids, [c.id for c in suite.cases])
    chosen_lanes: tuple[Lane, ...] = tuple(lane for lane in LANES if not lanes or lane in lanes)
    chosen_conditions = tuple(c for c in condition_ids if not conditions or c in conditions)
    chosen_providers = tuple(dict.fromkeys(providers))
    cases = [c for c in suite.cases if (not case_ids or c.id in case_ids) and c.lane in chosen_lanes]
    policies = {c.id: policy_of(c, suite, trials) for c in cases}
    _check_size(cases, chosen_conditions, chosen_providers, policies)
    items: list[WorkItem] = []
    for lane in chosen_lanes:
        for case in (c for c in cases if c.lane == lane):
            items.extend(_expand(case, chosen_conditions, chosen_providers, model, policies[case.id].most))
    if not items:
        raise UsageError(_nothing_to_run(suite, lanes, conditions, case_ids))
    used_presets = {i.workspace for i in items}
    return Plan(
        suite=suite.root,
        lanes=tuple(lane for lane in chosen_lanes if any(i.id.lane == lane for i in items)),
        conditions=chosen_conditions,
        providers=chosen_providers,
        case_ids=tuple(case_ids),
        model=model,
        trials=max(p.most for p in policies.values()),
        items=tuple(items),
        presets=tuple(p for p in suite.presets if p.id in used_presets),
        auto={case_id: p for case_id, p in policies.items() if p.auto},
        decision_threshold=decision_threshold,
    )


def policy_of(case: Case, suite: Suite, given: int | TrialPolicy | None) -> TrialPolicy:
    """A case's trials: the command line's, else the case's own, else the suite's default, else one."""
    if isinstance(given, int):
        return TrialPolicy(count=given)
    return given or case.trials or suite.trials or TrialPolicy()


def _check_size(
    cases: Sequence[Case],
    conditions: Sequence[str],
    providers: Sequence[str],
    policies: dict[str, TrialPolicy],
) -> None:
    """Refuse a plan of more than ``MAX_PLAN_TRIALS`` trials before building a single item."""
    pairs = sum(1 for case in cases for condition in conditions if condition in case.conditions)
    trials = max((p.most for p in policies.values()), default=1)
    total = sum(
        policies[case.id].most for case in cases for condition in conditions if condition in case.conditions
    ) * len(providers)
    if total > MAX_PLAN_TRIALS:
        raise UsageError(
            f"the plan would hold {total:,} trials ({pairs:,} case/condition pair(s) x {len(providers)} "
            f"provider(s) x {trials:,} trial(s)), more than the {MAX_PLAN_TRIALS:,} one plan may hold: "
            "every trial is kept in memory and gets its own folder; lower --trials or narrow the plan "
            "with --case, --condition or --provider"
        )


def _nothing_to_run(
    suite: Suite, lanes: Sequence[str], conditions: Sequence[str], case_ids: Sequence[str]
) -> str:
    """Why a plan is empty, for a run that would otherwise pass having run nothing."""
    if not suite.cases:
        return f"the suite {suite.root} has no cases: add a case file (skillgym list shows what it finds)"
    given = [
        f"{flag} {' '.join(values)}"
        for flag, values in (("--lane", lanes), ("--condition", conditions), ("--case", case_ids))
        if values
    ]
    named = [c for c in suite.cases if c.id in case_ids]
    where = "".join(
        f"; case {c.id!r} is in the {c.lane} lane under {', '.join(c.conditions) or 'every condition'}"
        for c in named
    )
    return (
        f"nothing to run: no case matches {' and '.join(given)}{where}; "
        "change the filters (skillgym list shows every case, its lane and conditions)"
    )


def _expand(
    case: Case, conditions: Sequence[str], providers: Sequence[str], model: str | None, trials: int
) -> list[WorkItem]:
    return [
        WorkItem(
            id=trial_id(
                lane=case.lane,
                case_id=case.id,
                condition=condition,
                provider=provider,
                trial=trial,
                fingerprint=case.fingerprint,
            ),
            model=model,
            workspace=case.workspace,
        )
        for condition in conditions
        if condition in case.conditions
        for provider in providers
        for trial in range(1, trials + 1)
    ]
