"""The report's adaptive-trials section (why each cell stopped, its confidence sequences) and the A/A one."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Final

from ..adaptive import recorded_policy
from ..identity import Group
from ..model import Data, TrialPolicy
from ..multiplicity import fisher_exact_p
from ..results import TrialResult
from ..scheduler import AA_SUFFIX, Question, lift_pairs, outcome, questions, settle
from ..sequential import DEFAULT_ALPHA, Decision
from ..stats import Interval, wilson_interval

METHOD: Final = (
    "betting confidence sequences (Waudby-Smith & Ramdas 2023, hedged capital with the predictable plug-in "
    "bet), anytime-valid at 95%"
)
FUTILITY: Final = (
    "a question stops as futile, inconclusive, once the trials left up to its cap could not decide it even "
    "going on at its estimate plus (or minus) k standard errors, k fixed before the run (the trial policy's "
    "futility; none: only once no continuation at all could decide it). Futile is no verdict and not "
    "evidence of no effect: the question is open at this cap. Stopping for futility only withholds "
    "verdicts, so it adds no false improved/regressed; its cost is power, which skillgym plan --power counts"
)


class QuestionOutcome(Data, frozen=True, kw_only=True):
    """One adaptive question of a case and provider: a paired lift, or one cell's pass rate."""

    lane: str
    case_id: str
    provider: str
    name: str  # "self-load vs none" or "pass rate vs 0.5"
    conditions: tuple[str, ...]  # (treatment, control), or (condition,)
    # open (the run stopped first) | above | below | improved | regressed | futile | max-trials
    status: str
    n: int  # observations: trials, or pairs of trials with the same index
    estimate: float | None
    interval: Interval | None  # the confidence sequence at n
    # The futility rule's k of the case's policy (None: curtailment only, as every run before the rule).
    futility: float | None = None


class CellStop(Data, frozen=True, kw_only=True):
    """Why an adaptive case x condition x provider stopped getting trials, and after how many."""

    lane: str
    case_id: str
    condition: str
    provider: str
    trials: int
    reason: str


class AdaptiveSummary(Data, frozen=True, kw_only=True):
    method: str = METHOD
    futility_rule: str = FUTILITY
    alpha: float = DEFAULT_ALPHA
    decision_threshold: float
    planned_most: int  # the trials the plan allowed its adaptive cells (every max_trials summed)
    trials_run: int  # the trials its adaptive cells ran
    questions: tuple[QuestionOutcome, ...]
    cells: tuple[CellStop, ...]


class AACalibration(Data, frozen=True, kw_only=True):
    """The A/A arms of a condition: how often a verdict calls a difference between two identical arms."""

    lane: str
    provider: str
    condition: str
    cases_compared: int
    cases_called: int  # improved or regressed, though both arms are the same condition
    false_positive_rate: float | None
    interval: Interval | None  # Wilson 95% over the compared cases
    test: str  # the per-case verdict counted: the adaptive lift decision, or Fisher's exact test at 5%


def auto_policies(settings: dict[str, Any]) -> dict[str, TrialPolicy]:
    """The adaptive cases of a run and their policies, as run.start recorded them."""
    return {case_id: recorded_policy(kept) for case_id, kept in settings.get("auto", {}).items()}


def _by_cell(results: Sequence[TrialResult]) -> dict[Group, dict[int, float | None]]:
    out: dict[Group, dict[int, float | None]] = defaultdict(dict)
    for r in results:
        out[r.id.group][r.id.trial] = outcome(r)
    return out


def adaptive_summary(
    results: Sequence[TrialResult], conditions: Sequence[str], settings: dict[str, Any]
) -> AdaptiveSummary | None:
    """The section for a run with adaptive cases; None for a run of fixed trials."""
    auto = auto_policies(settings)
    if not auto:
        return None
    threshold = float(settings.get("decision_threshold", 0.5))
    mine = [r for r in results if r.id.case_id in auto]
    observed = _by_cell(mine)
    cells = sorted(observed)
    asked = questions(cells, conditions, threshold)
    decided: list[tuple[Question, Decision]] = [
        (q, settle(q, observed, auto[q.cells[0][1]], threshold, with_interval=True)) for q in asked
    ]
    outcomes = tuple(
        QuestionOutcome(
            lane=q.cells[0][0],
            case_id=q.cells[0][1],
            provider=q.cells[0][3],
            name=q.name,
            conditions=tuple(cell[2] for cell in q.cells),
            status=d.status,
            n=d.n,
            estimate=d.estimate,
            interval=d.interval,
            futility=auto[q.cells[0][1]].futility,
        )
        for q, d in decided
    )
    stops = tuple(
        CellStop(
            lane=cell[0],
            case_id=cell[1],
            condition=cell[2],
            provider=cell[3],
            trials=len(observed[cell]),
            reason="; ".join(_reason(q, d, auto[cell[1]]) for q, d in decided if cell in q.cells),
        )
        for cell in cells
    )
    planned = sum(auto[c[1]].max_trials for c in cells)
    return AdaptiveSummary(
        decision_threshold=threshold,
        planned_most=planned,
        trials_run=len(mine),
        questions=outcomes,
        cells=stops,
    )


_WORDS: Final = {
    "above": "pass rate decided above {t:g}",
    "below": "pass rate decided below {t:g}",
    "improved": "{name}: decided, improved",
    "regressed": "{name}: decided, regressed",
    "futile": "{name}: futile, inconclusive ({why})",
    "max-trials": "{name}: undecided at the cap",
    "open": "{name}: still open (the run stopped first)",
}


def _reason(q: Question, d: Decision, policy: TrialPolicy) -> str:
    unit = "trials" if len(q.cells) == 1 else "pairs"
    threshold = float(q.name.rsplit(" ", 1)[-1]) if len(q.cells) == 1 else 0.0
    why = (
        "not even the trials left up to the cap all going one way could decide it"
        if policy.futility is None
        else f"the trials left up to the cap could not decide it going on at the estimate "
        f"+/- {policy.futility:g} standard errors"
    )
    return _WORDS[d.status].format(t=threshold, name=q.name, why=why) + f" after {d.n} {unit}"


def sequence_intervals(
    results: Sequence[TrialResult], settings: dict[str, Any]
) -> dict[Group, Interval | None]:
    """Each adaptive cell's pass-rate confidence sequence: the interval valid for that design."""
    from ..sequential import confidence_sequence

    auto = auto_policies(settings)
    observed = _by_cell([r for r in results if r.id.case_id in auto])
    return {
        cell: confidence_sequence(
            [v for _, v in sorted(series.items()) if v is not None], horizon=auto[cell[1]].max_trials
        )
        for cell, series in observed.items()
    }


def aa_calibration(
    results: Sequence[TrialResult], conditions: Sequence[str], adaptive: AdaptiveSummary | None
) -> tuple[AACalibration, ...]:
    """For each A/A pair (``C~aa`` vs ``C``), per lane and provider: the share of cases called different."""
    pairs = [(t, c) for t, c in lift_pairs(conditions) if t.endswith(AA_SUFFIX)]
    if not pairs:
        return ()
    observed = _by_cell(results)
    decided = (
        {(q.lane, q.case_id, q.provider, q.conditions): q.status for q in adaptive.questions}
        if adaptive
        else {}
    )
    tally: dict[tuple[str, str, str], list[tuple[bool, str]]] = defaultdict(list)
    for lane, case_id, condition, provider in sorted(observed):
        for arm, base in pairs:
            if condition != arm or (lane, case_id, base, provider) not in observed:
                continue
            status = decided.get((lane, case_id, provider, (arm, base)))
            if status is not None:
                tally[(lane, provider, base)].append((status in ("improved", "regressed"), "adaptive"))
                continue
            a, b = observed[(lane, case_id, arm, provider)], observed[(lane, case_id, base, provider)]
            xa, xb = [v for v in a.values() if v is not None], [v for v in b.values() if v is not None]
            if xa and xb:
                p = fisher_exact_p(int(sum(xa)), len(xa), int(sum(xb)), len(xb))
                tally[(lane, provider, base)].append((p < DEFAULT_ALPHA, "fisher"))
    out = []
    for (lane_name, provider, base), calls in sorted(tally.items()):
        called = sum(c for c, _ in calls)
        tests = {t for _, t in calls}
        out.append(
            AACalibration(
                lane=lane_name,
                provider=provider,
                condition=base,
                cases_compared=len(calls),
                cases_called=called,
                false_positive_rate=called / len(calls) if calls else None,
                interval=wilson_interval(called, len(calls)),
                test=" and ".join(
                    sorted(
                        {
                            "fisher": "Fisher's exact test per case at 5%",
                            "adaptive": "the adaptive lift decision",
                        }[t]
                        for t in tests
                    )
                ),
            )
        )
    return tuple(out)


def _iv(interval: Interval | None, scale: float = 100.0) -> str:
    digits = 1 if scale == 100.0 else 2
    return (
        "-"
        if interval is None
        else f"[{interval.low * scale:.{digits}f}, {interval.high * scale:.{digits}f}]"
    )


def adaptive_lines(summary: AdaptiveSummary) -> list[str]:
    """report.md's "Adaptive trials" section."""
    saved = summary.planned_most - summary.trials_run
    out = [
        "## Adaptive trials",
        "",
        f"Trials were scheduled adaptively: each case x condition x provider stopped once its question was "
        f"settled. The intervals of this run's adaptive cases (here, and the pass-rate intervals in Trial "
        f"aggregation) are {summary.method}: they stay valid however many times the data were looked at, "
        "which a Wilson interval after every trial would not. A lift pairs trial i of the treatment with "
        "trial i of the control. Suite-level intervals over cases (Condition comparison) average case means "
        "that stopped early when decided; read them as descriptive, and the verdicts here as the design's.",
        "",
        f"Futility: {summary.futility_rule}.",
        "",
        f"{summary.trials_run} trials run of at most {summary.planned_most} planned ({saved} not needed).",
        "",
    ]
    rows = [
        [
            q.lane,
            q.case_id,
            q.provider,
            q.name,
            q.status,
            str(q.n),
            "-"
            if q.estimate is None
            else f"{q.estimate:+.2f}"
            if len(q.conditions) == 2
            else f"{q.estimate:.2f}",
            _iv(q.interval, 1.0),
        ]
        for q in summary.questions
    ]
    out += _table(["lane", "case", "provider", "question", "status", "n", "estimate", "95% CS"], rows)
    rows = [[c.lane, c.case_id, c.condition, c.provider, str(c.trials), c.reason] for c in summary.cells]
    out += _table(["lane", "case", "condition", "provider", "trials", "why it stopped"], rows)
    return out


def aa_lines(calibrations: Sequence[AACalibration]) -> list[str]:
    """report.md's "A/A calibration" section."""
    out = [
        "## A/A calibration",
        "",
        f"Each condition below ran twice, as itself and as `<condition>{AA_SUFFIX}`: any difference the "
        "verdicts call between the two is a false positive on this agent and suite (nominal: 5% per case).",
        "",
    ]
    rows = [
        [
            a.lane,
            a.provider,
            a.condition,
            str(a.cases_compared),
            str(a.cases_called),
            "-" if a.false_positive_rate is None else f"{a.false_positive_rate:.1%}",
            _iv(a.interval),
            a.test,
        ]
        for a in calibrations
    ]
    return [
        *out,
        *_table(
            [
                "lane",
                "provider",
                "condition",
                "cases",
                "called different",
                "false-positive rate",
                "95% CI (%)",
                "per-case test",
            ],
            rows,
        ),
    ]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return [*lines, ""]
