"""From trial results to the report's numbers: per case, per lane, condition lifts, providers, baseline."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Final, NamedTuple, TypeAlias

import msgspec

from ..cost.model import BudgetStop
from ..cost.summary import CostReport, build_cost_report
from ..events import Counts, RunStart
from ..gates.model import GateResult
from ..judge.report import JudgeReport, judge_report
from ..model import LANES, Data, Lane
from ..paired import Comparison, compare_paired, mcnemar_exact_p
from ..results import NOT_THE_AGENTS, TrialResult
from ..score_intervals import bounded_mean_interval, suite_pass_interval
from ..snapshots.model import SnapshotCheck
from ..stats import Interval, fmean, pass_at_k, pass_hat_k, wilson_interval
from .activation import Activation, activation_summaries
from .adaptive import AACalibration, AdaptiveSummary, aa_calibration, adaptive_summary, sequence_intervals
from .tokens import TokenReport, build_token_report

# 2: comparisons leave out trials that errored for reasons not the agent's (NOT_THE_AGENTS), and count the
# cases left out, while timeouts and provider errors count as failures; providers and baselines pair per
# case; case-level intervals are per lane, condition and provider instead of per lane, beside their own mean.
# Still 2, with fields added (each with a default, so an earlier schema-2 report reads alike): a verdict that
# timeouts and provider errors decide (it differs when they are left out) is inconclusive and says how many.
# 3: score-type intervals (none for one case or one graded trial, no Wilson interval without a trial for
# verdicts); a case counts its timeouts, which are failures in every verdict, and only provider errors can
# make a verdict inconclusive; baseline rows carry Fisher p-values and are flagged by Holm's step-down;
# comparisons list their unpaired cases. An earlier report is read with its timeouts counted from its
# failures.
REPORT_SCHEMA: Final = 3
GroupKey: TypeAlias = tuple[str, str, str, str]  # lane, case, condition, provider


class Lift(NamedTuple):
    """A condition comparison: positive differences mean ``treatment`` passes more than ``control``.

    ``improved`` and ``regressed`` are how report.md words a conclusive verdict, for rows where the
    machine-readable verdict alone would read backwards.
    """

    name: str
    treatment: str
    control: str
    improved: str = "improved"
    regressed: str = "regressed"


LIFTS: Final = (
    Lift("realized lift (self-load vs none)", "self-load", "none"),
    Lift("oracle lift (preloaded vs none)", "preloaded", "none"),
    # Treatment none, control stale: none passing more ("improved") means the stale guidance hurts.
    Lift("stale harm (none vs stale)", "none", "stale", improved="stale hurts", regressed="stale helps"),
)


class CaseStats(Data, frozen=True, kw_only=True):
    """One case under one condition and provider, over its trials."""

    lane: Lane
    case_id: str
    category: str
    condition: str
    provider: str
    fingerprint: str
    trials: int
    passed: int
    failed: int
    errored: int
    # Of the errored trials, those whose error is not the agent's doing (NOT_THE_AGENTS): verdicts leave
    # them out. The rest (timeouts, provider errors) are the agent's failures and count as failures.
    errored_not_agents: int
    pass_rate: float  # over every trial
    pass_rate_excluding_errors: float | None  # over graded trials: every errored trial left out
    # What comparisons pair: passes over every trial but those errored for reasons not the agent's;
    # None when no such trial is left.
    pass_rate_for_verdicts: float | None
    # Wilson, over the trials for verdicts; None when there is none ("no usable trials").
    pass_interval: Interval | None
    mean_score: float | None  # over graded trials
    score_interval: Interval | None  # over graded trials, within [0, 1]; None below two of them
    pass_at_k: dict[str, float]
    pass_hat_k: dict[str, float]
    # Of the errored trials, the timeouts: the agent ran out of time while it worked (a provider that never
    # answered is provider-unavailable instead), so they are failures like any other in every verdict.
    timeouts: int = 0
    # What pass_interval is: "wilson" for fixed trials, "confidence sequence" for adaptive ones (the
    # interval valid when trials stop once the verdict is settled; see skillgym.sequential).
    pass_interval_kind: str = "wilson"

    @property
    def graded(self) -> int:
        """Trials that reached grading: every trial but the errored ones."""
        return self.trials - self.errored

    @property
    def verdict_trials(self) -> int:
        """Trials a verdict counts: every trial but those errored for reasons not the agent's."""
        return self.trials - self.errored_not_agents

    @property
    def errored_agents(self) -> int:
        """Timeouts and provider errors: the agent's, failures for verdicts."""
        return self.errored - self.errored_not_agents

    @property
    def provider_errors(self) -> int:
        """Provider errors (a crash, a non-zero exit, unreadable output): failures, yet maybe an outage."""
        return self.errored - self.errored_not_agents - self.timeouts

    @property
    def pass_rate_without_provider_errors(self) -> float | None:
        """Passes over the trials for verdicts less the provider errors (timeouts still fail)."""
        counted = self.verdict_trials - self.provider_errors
        return self.passed / counted if counted else None


class LaneSummary(Data, frozen=True, kw_only=True):
    """A lane's totals over every condition and provider.

    No interval: the conditions of a lane are different populations, so a case-level interval belongs to
    each condition (ConditionSummary), not to their mixture.
    """

    lane: Lane
    cases: int
    counts: Counts
    pass_rate: float  # pooled: passes over every trial of the lane
    pass_rate_excluding_errors: float | None  # pooled, over graded trials
    mean_score: float | None  # the mean of the per-case mean scores (each over its graded trials)
    # Pooled, over every trial but those errored for reasons not the agent's: the basis of the verdicts.
    pass_rate_for_verdicts: float | None = None


class ConditionSummary(Data, frozen=True, kw_only=True):
    """A lane under one condition and provider; its interval treats the case as the unit.

    The pooled rates count trials, so a case with more trials weighs more; ``mean_case_pass_rate`` weighs
    every case alike and is the estimate ``case_pass_interval`` is about: the interval of neither pooled rate.
    """

    lane: Lane
    condition: str
    provider: str
    cases: int
    counts: Counts
    pass_rate: float  # pooled: passes over every trial
    pass_rate_excluding_errors: float | None  # pooled, over graded trials
    # The mean of the cases' pass_rate_for_verdicts (a timeout or provider error fails, an error not the
    # agent's is left out), over the cases with such trials; None when there is none.
    mean_case_pass_rate: float | None
    # The case-level interval for mean_case_pass_rate, over the same trials, resampling cases; None below two.
    case_pass_interval: Interval | None
    mean_score: float | None  # the mean of the per-case mean scores (each over its graded trials)
    # The cases mean_case_pass_rate averages (those with a trial for verdicts); None in older reports.
    cases_in_mean: int | None = None


class PairedComparison(Data, frozen=True, kw_only=True):
    """A paired comparison over cases (treatment vs control) within one lane and provider.

    Each case is one pair of pass rates for verdicts (CaseStats.pass_rate_for_verdicts): a trial that
    errored for reasons not the agent's (NOT_THE_AGENTS) says nothing about it and is left out, while a
    timeout or provider error is the agent's failure and counts as one. ``comparison.verdict`` reads
    treatment against control: ``improved`` means the treatment passes more (for stale harm, none vs
    stale, that is: the stale guidance hurts), ``regressed`` less, ``inconclusive`` that the evidence does
    not say.
    """

    lane: Lane
    provider: str
    treatment: str
    control: str
    comparison: Comparison
    mcnemar_p: float | None
    # Cases whose treatment or control has no trial but errors not the agent's (NOT_THE_AGENTS): no pair.
    cases_left_out_for_errors: int
    # When the verdict reads otherwise with the provider errors left out (timeouts still fail), it is
    # inconclusive and this counts those trials in the compared cases; 0 when the verdict stands.
    depends_on_errors: int = 0
    # Cases that ran under only one side (treatment or control, or only one provider), in report order:
    # no pair, so not in the comparison; listed so that a lift over fewer cases than the lane has says why.
    unpaired: tuple[str, ...] = ()


class BaselineRow(Data, frozen=True, kw_only=True):
    """One (lane, case, condition, provider) of either run, with each side's pass rate for verdicts.

    A timeout or provider error counts as a failure; an error not the agent's (NOT_THE_AGENTS) is left out.
    """

    lane: str
    case_id: str
    condition: str
    provider: str
    baseline_pass_rate_for_verdicts: float | None
    current_pass_rate_for_verdicts: float | None
    baseline_errored: int | None  # every errored trial
    current_errored: int | None
    baseline_errored_not_agents: int | None  # of those, the ones left out of the rate
    current_errored_not_agents: int | None
    delta: float | None  # current minus baseline; None unless the row was compared
    # improved | regressed | unchanged | inconclusive: compared; not compared: fingerprint-changed (a
    # different case now), left-out (a side has no trial but errors not the agent's), new, missing.
    status: str
    # Each side's rate over graded trials (timeouts and provider errors left out too).
    baseline_pass_rate_excluding_errors: float | None = None
    current_pass_rate_excluding_errors: float | None = None
    # Timeouts and provider errors of both sides when the status reads otherwise without them (it is then
    # inconclusive); 0 when it stands.
    depends_on_errors: int = 0
    # The row's two-sided Fisher exact p-value (passes against trials for verdicts, one run against the
    # other) and the same after Holm's step-down over every compared row; None when not compared.
    p_value: float | None = None
    p_holm: float | None = None
    # What `skillgym compare` calls the row (None in reports written before it): fixed | regressed |
    # unchanged | inconclusive, compared; new | removed | fingerprint-changed | left-out, not compared.
    # ``status`` says the same in its older words (improved for fixed, missing for removed).
    change: str | None = None
    # Each side's passes and trials for verdicts (None for a side without the row, or an older report).
    baseline_passed: int | None = None
    baseline_trials: int | None = None
    current_passed: int | None = None
    current_trials: int | None = None
    # The 95% interval of ``delta`` (Newcombe's hybrid score interval for two independent rates, not
    # adjusted for the number of rows) and the test behind the row's flag; None when not compared.
    interval: Interval | None = None
    test: str | None = None


class FlakyCase(Data, frozen=True, kw_only=True):
    """A case whose trials disagree within one run: some pass, some fail (trials for verdicts)."""

    lane: str
    case_id: str
    condition: str
    provider: str
    trials: int  # trials for verdicts: errors not the agent's left out
    passed: int
    # The chance that two of its trials, drawn without replacement, disagree: 2c(n-c) / (n(n-1)).
    flip_rate: float
    # pass^k over the same trials: the chance that k of them, drawn without replacement, all pass.
    pass_hat_k: dict[str, float]


class BaselineSummary(Data, frozen=True, kw_only=True):
    """This run against an earlier report; ``overall`` pairs per case (lane, case).

    ``--compare-baseline`` puts it in report.json and ``skillgym compare`` prints it: one function
    (``compare_to_baseline``) builds it for both.
    """

    baseline_run: str
    rows: tuple[BaselineRow, ...]
    overall: Comparison
    cases_left_out_for_errors: int  # cases with no compared row and a left-out one
    # As PairedComparison.depends_on_errors, for the overall verdict.
    overall_depends_on_errors: int = 0
    # Fields below are None or empty in reports written before `skillgym compare`.
    current_run: str | None = None
    baseline_suite: str | None = None
    current_suite: str | None = None
    baseline_skill_hash: str | None = None
    current_skill_hash: str | None = None
    changes: dict[str, int] = {}  # rows per change, every change named (0 when none)
    # The tests behind the rows' flags and behind ``overall``, in words.
    row_test: str | None = None
    overall_test: str | None = None
    # Cases whose trials disagree within each run, most flips first.
    flaky_baseline: tuple[FlakyCase, ...] = ()
    flaky_current: tuple[FlakyCase, ...] = ()


class Failure(Data, frozen=True, kw_only=True):
    key: str
    status: str
    error_class: str | None
    reasons: tuple[str, ...]


class Warned(Data, frozen=True, kw_only=True):
    """A trial's warnings: worth a look (a stale cassette, a process that outlived cleanup), not a verdict."""

    key: str
    warnings: tuple[str, ...]


class Report(Data, frozen=True, kw_only=True):
    """Everything report.json holds; report.md is rendered from it."""

    schema: int = REPORT_SCHEMA
    run_id: str
    suite: str
    lanes: tuple[Lane, ...]
    conditions: tuple[str, ...]
    providers: tuple[str, ...]
    trials: int
    skill_hash: str
    sandbox: str | None = None  # the run's --sandbox (None: a run from before sandboxes)
    network: str | None = None  # the run's --network (None: each provider's own)
    counts: Counts
    interrupted: bool
    errors_by_class: dict[str, int]
    lane_summaries: tuple[LaneSummary, ...]
    condition_summaries: tuple[ConditionSummary, ...]
    cases: tuple[CaseStats, ...]
    condition_comparisons: tuple[PairedComparison, ...]
    provider_comparisons: tuple[PairedComparison, ...]
    anti_patterns: dict[str, dict[str, int]]
    completeness: dict[str, float]
    failures: tuple[Failure, ...]
    warned: tuple[Warned, ...] = ()  # trials that finished with warnings, in report order
    baseline: BaselineSummary | None = None
    baseline_report: str | None = None  # the report --compare-baseline named
    # Why that report was not compared when this one was built (gone or unreadable by then), and the fix.
    baseline_problem: str | None = None
    tokens: TokenReport | None = None  # absent when no trial reported usage
    snapshots: SnapshotCheck | None = None  # from run.finish, when the run checked token snapshots
    # Did it fire vs did it help, per lane and provider with self-load trials of cases that expect a skill.
    activation: tuple[Activation, ...] = ()
    adaptive: AdaptiveSummary | None = None  # --trials auto: why each cell stopped, its sequences
    aa: tuple[AACalibration, ...] = ()  # --aa: the A/A false-positive rate per lane, provider, condition
    shard: str | None = None  # "I/N" for a run of `run --shard I/N`: part of a plan, not all of it
    cost: CostReport | None = None  # dollars per run and per lane, condition and provider
    gates: tuple[GateResult, ...] = ()  # from run.finish: the CI gates, judged
    budget: BudgetStop | None = None  # from run.finish: set when the budget ended the run
    judge: JudgeReport | None = None  # judged checks' usage (never in ``tokens``) and pairwise comparison


def _score(result: TrialResult) -> float:
    return result.grade.score if result.grade is not None else 0.0


def _rate(passed: int, total: int) -> float:
    return passed / total if total else 0.0


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


_KS: Final = (1, 3, 5, 10)


def case_stats(results: Sequence[TrialResult]) -> CaseStats:
    first = results[0]
    n = len(results)
    # One pass: a report makes one of these per case, condition and provider.
    passed = errored = not_agents = timeouts = 0
    scores: list[float] = []  # of the graded (not errored) trials
    for r in results:
        if r.status == "errored":
            errored += 1
            not_agents += r.error_class in NOT_THE_AGENTS
            timeouts += r.error_class == "timeout"
            continue
        if r.status == "passed":
            passed += 1
        scores.append(_score(r))
    graded, for_verdicts = n - errored, n - not_agents
    ks = [k for k in _KS if k <= n]
    return CaseStats(
        lane=first.id.lane,
        case_id=first.id.case_id,
        category=first.category,
        condition=first.id.condition,
        provider=first.id.provider,
        fingerprint=first.id.fingerprint,
        trials=n,
        passed=passed,
        failed=n - passed - errored,
        errored=errored,
        errored_not_agents=not_agents,
        pass_rate=_rate(passed, n),
        pass_rate_excluding_errors=_rate(passed, graded) if graded else None,
        pass_rate_for_verdicts=_rate(passed, for_verdicts) if for_verdicts else None,
        pass_interval=wilson_interval(passed, for_verdicts),
        mean_score=_mean(scores),
        score_interval=bounded_mean_interval(scores),
        pass_at_k={str(k): pass_at_k(n, passed, k) for k in ks},
        pass_hat_k={str(k): pass_hat_k(n, passed, k) for k in ks},
        timeouts=timeouts,
    )


def _groups(results: Iterable[TrialResult]) -> dict[GroupKey, list[TrialResult]]:
    groups: dict[GroupKey, list[TrialResult]] = defaultdict(list)
    for r in results:
        groups[r.id.group].append(r)
    for trials in groups.values():
        trials.sort(key=lambda r: r.id.trial)
    return groups


def _counts(stats: Sequence[CaseStats]) -> Counts:
    return Counts(
        total=sum(s.trials for s in stats),
        passed=sum(s.passed for s in stats),
        failed=sum(s.failed for s in stats),
        errored=sum(s.errored for s in stats),
    )


def _rate_excluding_errors(counts: Counts) -> float | None:
    graded = counts.total - counts.errored
    return _rate(counts.passed, graded) if graded else None


def _pooled_for_verdicts(stats: Sequence[CaseStats]) -> float | None:
    counted = sum(s.verdict_trials for s in stats)
    return _rate(sum(s.passed for s in stats), counted) if counted else None


def lane_summary(lane: Lane, stats: Sequence[CaseStats]) -> LaneSummary:
    mine = [s for s in stats if s.lane == lane]
    counts = _counts(mine)
    return LaneSummary(
        lane=lane,
        cases=len({s.case_id for s in mine}),
        counts=counts,
        pass_rate=_rate(counts.passed, counts.total),
        pass_rate_excluding_errors=_rate_excluding_errors(counts),
        mean_score=_mean([s.mean_score for s in mine if s.mean_score is not None]),
        pass_rate_for_verdicts=_pooled_for_verdicts(mine),
    )


def _mean_case_pass_rate(stats: Sequence[CaseStats]) -> tuple[float | None, Interval | None]:
    """The mean per-case pass rate for verdicts and its case-level interval, both over the same trials."""
    rates = [s.pass_rate_for_verdicts for s in stats if s.pass_rate_for_verdicts is not None]
    mean = fmean(rates) if rates else None
    # One case says nothing about how cases spread; a case-level interval needs two or more.
    return mean, suite_pass_interval(rates, most_trials(stats)) if len(rates) > 1 else None


def most_trials(stats: Iterable[CaseStats]) -> int:
    """The most trials for verdicts behind any one case's rate (at least 1): the intervals' spread floor."""
    return max((s.verdict_trials for s in stats), default=1) or 1


def condition_summaries(
    stats: Sequence[CaseStats], conditions: Sequence[str], providers: Sequence[str]
) -> tuple[ConditionSummary, ...]:
    """Per lane, condition and provider, in the run's order of lanes, conditions and providers."""
    groups: dict[tuple[Lane, str, str], list[CaseStats]] = defaultdict(list)
    for s in stats:
        groups[(s.lane, s.condition, s.provider)].append(s)

    def order(key: tuple[Lane, str, str]) -> tuple[int, int, int]:
        lane, condition, provider = key
        return (LANES.index(lane), _index(conditions, condition), _index(providers, provider))

    out: list[ConditionSummary] = []
    for (lane, condition, provider), mine in sorted(groups.items(), key=lambda item: order(item[0])):
        counts = _counts(mine)
        mean, interval = _mean_case_pass_rate(mine)
        out.append(
            ConditionSummary(
                lane=lane,
                condition=condition,
                provider=provider,
                cases=len(mine),
                counts=counts,
                pass_rate=_rate(counts.passed, counts.total),
                pass_rate_excluding_errors=_rate_excluding_errors(counts),
                mean_case_pass_rate=mean,
                case_pass_interval=interval,
                mean_score=_mean([s.mean_score for s in mine if s.mean_score is not None]),
                cases_in_mean=sum(1 for s in mine if s.verdict_trials),
            )
        )
    return tuple(out)


def _index(names: Sequence[str], name: str) -> int:
    return names.index(name) if name in names else len(names)


def verdict_pair(treatment: CaseStats, control: CaseStats) -> tuple[float, float] | None:
    """Both pass rates for verdicts; None when a side has no trial but errors not the agent's."""
    t, c = treatment.pass_rate_for_verdicts, control.pass_rate_for_verdicts
    return None if t is None or c is None else (t, c)


def pair_without_provider_errors(treatment: CaseStats, control: CaseStats) -> tuple[float, float] | None:
    """Both pass rates with provider errors left out too (timeouts still fail); None when a side has none."""
    t, c = treatment.pass_rate_without_provider_errors, control.pass_rate_without_provider_errors
    return None if t is None or c is None else (t, c)


def settle(
    name: str,
    pairs: Sequence[tuple[float, float]],
    pairs_without: Sequence[tuple[float, float]],
    provider_errors: int,
    trials: int = 1,
) -> tuple[Comparison, int]:
    """The comparison of ``pairs`` (rates for verdicts), unless its verdict depends on provider errors.

    A provider error (a crash, a non-zero exit, unreadable output) counts as a failure, yet it can be an
    outage or a rate limit as well as the agent's doing. When the compared cases have some
    (``provider_errors``), the verdict must be the same over ``pairs_without`` (the same cases, those
    errors left out); otherwise it is inconclusive, and the second value says how many errors decided it.
    A timeout is the agent running out of time while it worked: a failure like any other, never a reason
    to doubt a verdict (a skill that makes the agent hang is a regression). The numbers stay those of
    ``pairs``; ``trials`` is the most trials behind any one rate.
    """
    comparison = compare_paired(name, pairs, trials=trials)
    if (
        not provider_errors
        or compare_paired(name, pairs_without, trials=trials).verdict == comparison.verdict
    ):
        return comparison, 0
    return msgspec.structs.replace(comparison, verdict="inconclusive"), provider_errors


def _lift(stats: Sequence[CaseStats], lane: Lane, provider: str, lift: Lift) -> PairedComparison | None:
    """Pair per case the pass rates for verdicts of two conditions within one lane and provider."""
    by = {(s.case_id, s.condition): s for s in stats if s.lane == lane and s.provider == provider}
    pairs: list[tuple[float, float]] = []
    graded: list[tuple[float, float]] = []
    compared: list[CaseStats] = []
    left_out = b = c = agent_errors = 0
    binary = True  # every pair one trial a side: McNemar's discordant pairs are defined
    sides = (lift.treatment, lift.control)
    unpaired = tuple(
        case_id
        for (case_id, condition) in by
        if condition in sides and (case_id, sides[condition == lift.treatment]) not in by
    )
    for (case_id, condition), treated in by.items():
        control = by.get((case_id, lift.control))
        if condition != lift.treatment or control is None:
            continue
        pair = verdict_pair(treated, control)
        if pair is None:
            left_out += 1
            continue
        pairs.append(pair)
        compared += (treated, control)
        if (both := pair_without_provider_errors(treated, control)) is not None:
            graded.append(both)
        agent_errors += treated.provider_errors + control.provider_errors
        binary = binary and treated.verdict_trials == 1 and control.verdict_trials == 1
        b += treated.passed > control.passed
        c += treated.passed < control.passed
    if not pairs and not left_out:
        return None
    comparison, depends = settle(lift.name, pairs, graded, agent_errors, most_trials(compared))
    return PairedComparison(
        lane=lane,
        provider=provider,
        treatment=lift.treatment,
        control=lift.control,
        comparison=comparison,
        mcnemar_p=mcnemar_exact_p(b, c) if binary and pairs else None,
        cases_left_out_for_errors=left_out,
        depends_on_errors=depends,
        unpaired=unpaired,
    )


class _ProviderPairs(NamedTuple):
    pairs: list[tuple[float, float]]  # per case: the mean rates for verdicts
    graded: list[
        tuple[float, float]
    ]  # per case: the mean rates without provider errors, where there are some
    left_out: int
    agent_errors: int  # provider errors in the paired conditions
    unpaired: tuple[str, ...]  # cases the two providers never ran under one condition
    trials: int  # the most trials for verdicts behind any one pair's mean rate


def _provider_pairs_by_case(
    stats: Sequence[CaseStats], lane: Lane, treatment: str, control: str
) -> _ProviderPairs:
    """Per case, each provider's mean rate for verdicts over the conditions both have; the cases left out.

    The case is the unit: its conditions are averaged into one pair, never counted as separate cases.
    """
    # case -> condition -> provider -> stats, in report order
    by_case: dict[str, dict[str, dict[str, CaseStats]]] = defaultdict(lambda: defaultdict(dict))
    for s in stats:
        if s.lane == lane and s.provider in (treatment, control):
            by_case[s.case_id][s.condition][s.provider] = s
    pairs: list[tuple[float, float]] = []
    graded: list[tuple[float, float]] = []
    left_out = agent_errors = 0
    unpaired: list[str] = []
    trials = 1
    for case_id, conditions in by_case.items():
        shared = [both for both in conditions.values() if treatment in both and control in both]
        if not shared:
            unpaired.append(case_id)  # the two providers never ran it under one condition: no pair
            continue
        compared = [both for both in shared if verdict_pair(both[treatment], both[control]) is not None]
        if not compared:
            left_out += 1
            continue
        paired = [(both[treatment], both[control]) for both in compared]
        pairs.append(mean_pair([p for t, c in paired if (p := verdict_pair(t, c)) is not None]))
        if without := [p for t, c in paired if (p := pair_without_provider_errors(t, c)) is not None]:
            graded.append(mean_pair(without))
        agent_errors += sum(t.provider_errors + c.provider_errors for t, c in paired)
        # A mean over several conditions spreads as little as one rate over all their trials together.
        trials = max(
            trials, *(sum(side.verdict_trials for side in sides) for sides in zip(*paired, strict=True))
        )
    return _ProviderPairs(pairs, graded, left_out, agent_errors, tuple(unpaired), trials)


def mean_pair(pairs: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The means of the treatment and of the control sides: one pair standing for several."""
    return fmean([t for t, _ in pairs]), fmean([c for _, c in pairs])


def _provider_comparisons(
    stats: Sequence[CaseStats], lanes: Sequence[Lane], providers: Sequence[str]
) -> list[PairedComparison]:
    """Every other provider against the first, per lane, paired per case."""
    out: list[PairedComparison] = []
    if len(providers) < 2:
        return out
    control = providers[0]
    for lane in lanes:
        for treatment in providers[1:]:
            found = _provider_pairs_by_case(stats, lane, treatment, control)
            if not found.pairs and not found.left_out:
                continue
            name = f"provider {treatment} vs {control}"
            comparison, depends = settle(name, found.pairs, found.graded, found.agent_errors, found.trials)
            out.append(
                PairedComparison(
                    lane=lane,
                    provider=f"{treatment} vs {control}",
                    treatment=treatment,
                    control=control,
                    comparison=comparison,
                    mcnemar_p=None,
                    cases_left_out_for_errors=found.left_out,
                    depends_on_errors=depends,
                    unpaired=found.unpaired,
                )
            )
    return out


def _anti_patterns(results: Iterable[TrialResult]) -> dict[str, dict[str, int]]:
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        if r.grade is None:
            continue
        for finding in r.grade.findings:
            table[finding.rule_id]["negated" if finding.negated else finding.severity] += 1
    return {rule: dict(sorted(counts.items())) for rule, counts in sorted(table.items())}


def _completeness(results: Iterable[TrialResult]) -> dict[str, float]:
    sums: dict[str, list[float]] = defaultdict(list)
    for r in results:
        if r.id.lane != "dogfood" or r.grade is None:
            continue
        for item in r.grade.items:
            if item.max_score > 0:
                sums[item.name].append(item.score / item.max_score)
    return {name: round(sum(v) / len(v), 6) for name, v in sorted(sums.items())}


def _failure(r: TrialResult) -> Failure:
    reasons = r.grade.reasons if r.grade is not None else ()
    if r.error_message:
        reasons = (r.error_message, *reasons)
    return Failure(key=r.id.key, status=r.status, error_class=r.error_class, reasons=reasons)


def build_report(start: RunStart, results: Sequence[TrialResult], *, interrupted: bool = False) -> Report:
    """The report of a run, from its start event and trial results alone (so it can be rebuilt)."""
    ordered = sorted(results, key=lambda r: (LANES.index(r.id.lane), r.id.key.rsplit("/", 1)[0], r.id.trial))
    groups = _groups(ordered)
    stats = tuple(case_stats(trials) for trials in groups.values())
    if sequences := sequence_intervals(ordered, start.settings):  # adaptive cells: their valid interval
        stats = tuple(
            msgspec.structs.replace(
                s, pass_interval=sequences[group], pass_interval_kind="confidence sequence"
            )
            if (group := (s.lane, s.case_id, s.condition, s.provider)) in sequences
            else s
            for s in stats
        )
    lanes = tuple(lane for lane in start.lanes if any(r.id.lane == lane for r in ordered))
    lifts = (*LIFTS, *aa_lifts(start.conditions))
    comparisons = [
        comp
        for lane in lanes
        for provider in start.providers
        for lift in lifts
        if (comp := _lift(stats, lane, provider, lift)) is not None
    ]
    adaptive = adaptive_summary(ordered, start.conditions, start.settings)
    return Report(
        run_id=start.run_id,
        suite=start.suite,
        lanes=lanes,
        conditions=start.conditions,
        providers=start.providers,
        trials=start.trials,
        skill_hash=start.skill_hash,
        sandbox=start.settings.get("sandbox"),
        network=start.settings.get("network"),
        counts=Counts(
            total=len(ordered),
            passed=sum(r.status == "passed" for r in ordered),
            failed=sum(r.status == "failed" for r in ordered),
            errored=sum(r.status == "errored" for r in ordered),
        ),
        interrupted=interrupted,
        errors_by_class=dict(sorted(Counter(r.error_class for r in ordered if r.error_class).items())),
        lane_summaries=tuple(lane_summary(lane, stats) for lane in lanes),
        condition_summaries=condition_summaries(stats, start.conditions, start.providers),
        cases=stats,
        condition_comparisons=tuple(comparisons),
        provider_comparisons=tuple(_provider_comparisons(stats, lanes, start.providers)),
        anti_patterns=_anti_patterns(ordered),
        completeness=_completeness(ordered),
        failures=tuple(_failure(r) for r in ordered if r.status != "passed"),
        warned=tuple(Warned(key=r.id.key, warnings=r.warnings) for r in ordered if r.warnings),
        baseline_report=start.baseline_report,
        tokens=build_token_report(ordered),
        activation=activation_summaries(ordered, start.providers),
        adaptive=adaptive,
        aa=aa_calibration(ordered, start.conditions, adaptive),
        shard=start.shard.label if start.shard is not None else None,
        cost=build_cost_report(ordered),
        judge=judge_report(ordered),
    )


def aa_lifts(conditions: Sequence[str]) -> tuple[Lift, ...]:
    """The A/A comparison of every ``C~aa`` arm with its condition ``C`` (``--aa C``)."""
    return tuple(
        Lift(f"A/A ({c} vs {c.removesuffix('~aa')})", c, c.removesuffix("~aa"))
        for c in conditions
        if c.endswith("~aa") and c.removesuffix("~aa") in conditions
    )
