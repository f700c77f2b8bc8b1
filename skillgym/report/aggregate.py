"""From trial results to the report's numbers: per case, per lane, condition lifts, providers, baseline."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Final, TypeAlias

from ..events import Counts, RunStart
from ..model import LANES, Data, Lane
from ..results import TrialResult
from ..snapshots.model import SnapshotCheck
from ..stats import (
    Comparison,
    Interval,
    clustered_bootstrap_mean,
    compare_paired,
    mcnemar_exact_p,
    mean_interval,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
)
from .tokens import TokenReport, build_token_report

REPORT_SCHEMA = 1
GroupKey: TypeAlias = tuple[str, str, str, str]  # lane, case, condition, provider

# (name, treatment condition, control condition): positive differences mean treatment passes more.
LIFTS: tuple[tuple[str, str, str], ...] = (
    ("realized lift (self-load vs none)", "self-load", "none"),
    ("oracle lift (preloaded vs none)", "preloaded", "none"),
    ("stale harm (none vs stale)", "none", "stale"),
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
    pass_rate: float
    pass_rate_excluding_errors: float | None
    pass_interval: Interval | None
    mean_score: float | None
    score_interval: Interval | None
    pass_at_k: dict[str, float]
    pass_hat_k: dict[str, float]


class LaneSummary(Data, frozen=True, kw_only=True):
    """A lane's totals; its interval treats the case as the unit (a case's trials are not independent)."""

    lane: Lane
    cases: int
    counts: Counts
    pass_rate: float
    pass_rate_excluding_errors: float | None
    case_pass_interval: Interval | None
    mean_score: float | None


class PairedComparison(Data, frozen=True, kw_only=True):
    """A paired comparison over cases (treatment vs control) within one lane and provider."""

    lane: Lane
    provider: str
    treatment: str
    control: str
    comparison: Comparison
    mcnemar_p: float | None


class BaselineRow(Data, frozen=True, kw_only=True):
    lane: str
    case_id: str
    condition: str
    provider: str
    baseline_pass_rate: float | None
    current_pass_rate: float | None
    delta: float | None
    status: str  # improved | regressed | unchanged | inconclusive | fingerprint-changed | new | missing


class BaselineSummary(Data, frozen=True, kw_only=True):
    baseline_run: str
    rows: tuple[BaselineRow, ...]
    overall: Comparison


class Failure(Data, frozen=True, kw_only=True):
    key: str
    status: str
    error_class: str | None
    reasons: tuple[str, ...]


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
    counts: Counts
    interrupted: bool
    errors_by_class: dict[str, int]
    lane_summaries: tuple[LaneSummary, ...]
    cases: tuple[CaseStats, ...]
    condition_comparisons: tuple[PairedComparison, ...]
    provider_comparisons: tuple[PairedComparison, ...]
    anti_patterns: dict[str, dict[str, int]]
    completeness: dict[str, float]
    failures: tuple[Failure, ...]
    baseline: BaselineSummary | None = None
    tokens: TokenReport | None = None  # absent when no trial reported usage
    snapshots: SnapshotCheck | None = None  # from run.finish, when the run checked token snapshots


def _score(result: TrialResult) -> float:
    return result.grade.score if result.grade is not None else 0.0


def _rate(passed: int, total: int) -> float:
    return passed / total if total else 0.0


_KS: Final = (1, 3, 5, 10)


def case_stats(results: Sequence[TrialResult]) -> CaseStats:
    first = results[0]
    n = len(results)
    # One pass: a report makes one of these per case, condition and provider.
    passed = errored = 0
    scores: list[float] = []  # of the graded (not errored) trials
    for r in results:
        if r.status == "errored":
            errored += 1
            continue
        if r.status == "passed":
            passed += 1
        scores.append(_score(r))
    graded = n - errored
    ks = [k for k in _KS if k <= n]
    return CaseStats(
        lane=first.lane,
        case_id=first.case_id,
        category=first.category,
        condition=first.condition,
        provider=first.provider,
        fingerprint=first.fingerprint,
        trials=n,
        passed=passed,
        failed=n - passed - errored,
        errored=errored,
        pass_rate=_rate(passed, n),
        pass_rate_excluding_errors=_rate(passed, graded) if graded else None,
        pass_interval=wilson_interval(passed, n),
        mean_score=sum(scores) / len(scores) if scores else None,
        score_interval=mean_interval(scores),
        pass_at_k={str(k): pass_at_k(n, passed, k) for k in ks},
        pass_hat_k={str(k): pass_hat_k(n, passed, k) for k in ks},
    )


def _groups(results: Iterable[TrialResult]) -> dict[GroupKey, list[TrialResult]]:
    groups: dict[GroupKey, list[TrialResult]] = defaultdict(list)
    for r in results:
        groups[(r.lane, r.case_id, r.condition, r.provider)].append(r)
    for trials in groups.values():
        trials.sort(key=lambda r: r.trial)
    return groups


def lane_summary(lane: Lane, stats: Sequence[CaseStats], results: Sequence[TrialResult]) -> LaneSummary:
    mine = [r for r in results if r.lane == lane]
    counts = Counts(
        total=len(mine),
        passed=sum(r.status == "passed" for r in mine),
        failed=sum(r.status == "failed" for r in mine),
        errored=sum(r.status == "errored" for r in mine),
    )
    graded = counts.total - counts.errored
    by_case: dict[str, list[float]] = defaultdict(list)
    for r in mine:
        by_case[r.case_id].append(1.0 if r.status == "passed" else 0.0)
    scores = [s.mean_score for s in stats if s.lane == lane and s.mean_score is not None]
    return LaneSummary(
        lane=lane,
        cases=len(by_case),
        counts=counts,
        pass_rate=_rate(counts.passed, counts.total),
        pass_rate_excluding_errors=_rate(counts.passed, graded) if graded else None,
        # One case gives a point interval that looks certain; a case-level interval needs two or more.
        case_pass_interval=clustered_bootstrap_mean(list(by_case.values())) if len(by_case) > 1 else None,
        mean_score=sum(scores) / len(scores) if scores else None,
    )


def _paired(
    stats: Sequence[CaseStats], lane: str, provider: str, treatment: str, control: str, name: str
) -> PairedComparison | None:
    """Pair per case the pass rates of two conditions (or providers) within one lane."""
    by = {(s.case_id, s.condition, s.provider): s for s in stats if s.lane == lane}
    pairs: list[tuple[float, float]] = []
    discordant = Counter[str]()
    for (case_id, condition, prov), s in by.items():
        if condition != treatment or prov != provider:
            continue
        other = by.get((case_id, control, provider))
        if other is None:
            continue
        pairs.append((s.pass_rate, other.pass_rate))
        if s.trials == 1 and other.trials == 1:
            discordant["b" if s.passed > other.passed else "c" if s.passed < other.passed else "t"] += 1
    if not pairs:
        return None
    single = all(s.trials == 1 for s in stats if s.lane == lane)
    return PairedComparison(
        lane=lane,  # type: ignore[arg-type]
        provider=provider,
        treatment=treatment,
        control=control,
        comparison=compare_paired(name, pairs),
        mcnemar_p=mcnemar_exact_p(discordant["b"], discordant["c"]) if single else None,
    )


def _provider_pairs(
    stats: Sequence[CaseStats], lanes: Sequence[Lane], providers: Sequence[str]
) -> list[PairedComparison]:
    out: list[PairedComparison] = []
    if len(providers) < 2:
        return out
    control = providers[0]
    for lane in lanes:
        for treatment in providers[1:]:
            by_case: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
            for s in stats:
                if s.lane == lane and s.provider in (treatment, control):
                    by_case[(s.case_id, s.condition)][s.provider] = s.pass_rate
            pairs = [(v[treatment], v[control]) for v in by_case.values() if treatment in v and control in v]
            if pairs:
                name = f"provider {treatment} vs {control}"
                out.append(
                    PairedComparison(
                        lane=lane,
                        provider=f"{treatment} vs {control}",
                        treatment=treatment,
                        control=control,
                        comparison=compare_paired(name, pairs),
                        mcnemar_p=None,
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
        if r.lane != "dogfood" or r.grade is None:
            continue
        for item in r.grade.items:
            if item.max_score > 0:
                sums[item.name].append(item.score / item.max_score)
    return {name: round(sum(v) / len(v), 6) for name, v in sorted(sums.items())}


def _failure(r: TrialResult) -> Failure:
    reasons = r.grade.reasons if r.grade is not None else ()
    if r.error_message:
        reasons = (r.error_message, *reasons)
    return Failure(key=r.key, status=r.status, error_class=r.error_class, reasons=reasons)


def build_report(start: RunStart, results: Sequence[TrialResult], *, interrupted: bool = False) -> Report:
    """The report of a run, from its start event and trial results alone (so it can be rebuilt)."""
    ordered = sorted(results, key=lambda r: (LANES.index(r.lane), r.key.rsplit("/", 1)[0], r.trial))
    groups = _groups(ordered)
    stats = tuple(case_stats(trials) for trials in groups.values())
    lanes = tuple(lane for lane in start.lanes if any(r.lane == lane for r in ordered))
    comparisons = [
        comp
        for lane in lanes
        for provider in start.providers
        for name, treatment, control in LIFTS
        if (comp := _paired(stats, lane, provider, treatment, control, name)) is not None
    ]
    return Report(
        run_id=start.run_id,
        suite=start.suite,
        lanes=lanes,
        conditions=start.conditions,
        providers=start.providers,
        trials=start.trials,
        skill_hash=start.skill_hash,
        counts=Counts(
            total=len(ordered),
            passed=sum(r.status == "passed" for r in ordered),
            failed=sum(r.status == "failed" for r in ordered),
            errored=sum(r.status == "errored" for r in ordered),
        ),
        interrupted=interrupted,
        errors_by_class=dict(sorted(Counter(r.error_class for r in ordered if r.error_class).items())),
        lane_summaries=tuple(lane_summary(lane, stats, ordered) for lane in lanes),
        cases=stats,
        condition_comparisons=tuple(comparisons),
        provider_comparisons=tuple(_provider_pairs(stats, lanes, start.providers)),
        anti_patterns=_anti_patterns(ordered),
        completeness=_completeness(ordered),
        failures=tuple(_failure(r) for r in ordered if r.status != "passed"),
        tokens=build_token_report(ordered),
    )
