"""Blind pairwise comparison: each condition's answers against the baseline's, judged twice, order swapped.

For each case, condition (other than the baseline ``none``), provider and trial index, the two trials'
answers (final text and the commands run, never the condition's name) are shown as A and B in an order
drawn from an RNG seeded by ``--pairwise-seed`` and the pair's identity, then again with the order
swapped. A winner counts only when both orders name the same trial; otherwise the pair is a tie, and it
counts as a swap disagreement (position bias). Per case the report gives win / tie / loss from the
condition's side, and across cases the paired statistics the report uses elsewhere
(``skillgym.paired.compare_paired`` on each case's win and loss shares).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Literal, TypeAlias

import msgspec

from ..files import write_atomic
from ..model import Data, Suite
from ..paired import compare_paired
from ..results import TrialResult
from ..stats import Interval
from ..trace import TokenUsage, Trace
from .grading import task_text
from .judges import Question, usage_sum
from .material import answer_material
from .questions import JUDGE_PROMPT_VERSION, pairwise_prompt
from .session import JudgeSession

PAIRWISE_FILE: Final = "pairwise.json"
BASELINE: Final = "none"

Side: TypeAlias = Literal["condition", "baseline", "tie", "undecided"]


class PairVerdict(Data, frozen=True, kw_only=True):
    """One pair, judged in both orders: who each order preferred and what counts."""

    trial: int
    provider: str
    condition_first: bool  # the drawn order: was the condition's answer shown as A first?
    first_order: Side
    swapped_order: Side
    counted: Side  # both orders agree, else a tie (or undecided when either order gave no verdict)
    reasons: tuple[str, ...] = ()


class CasePairwise(Data, frozen=True, kw_only=True):
    """A case's pairs for one condition against the baseline, from the condition's side."""

    case_id: str
    lane: str
    condition: str
    wins: int
    ties: int
    losses: int
    undecided: int
    swap_disagreements: int
    pairs: tuple[PairVerdict, ...] = ()


class ConditionPairwise(Data, frozen=True, kw_only=True):
    """One condition against the baseline over every case: the paired statistics and position bias."""

    condition: str
    cases: int
    mean_diff: float | None  # mean over cases of (win share - loss share)
    interval: Interval | None
    case_wins: int
    case_ties: int
    case_losses: int
    p_value: float | None
    verdict: str
    pairs: int
    swap_disagreements: int
    position_bias: float | None  # share of decided pairs whose two orders disagreed


class PairwiseReport(Data, frozen=True, kw_only=True):
    """``pairwise.json``: the blind comparison of a run's conditions by its judge."""

    schema: int = 1
    judge: str
    prompt_version: str = JUDGE_PROMPT_VERSION
    seed: int
    baseline: str = BASELINE
    conditions: tuple[ConditionPairwise, ...] = ()
    cases: tuple[CasePairwise, ...] = ()
    unpaired: tuple[str, ...] = ()  # trials with no partner (an errored or missing trial on either side)
    usage: TokenUsage | None = None
    judge_calls: int = 0


def pair_order(seed: int, case_id: str, condition: str, provider: str, trial: int) -> bool:
    """Whether the condition's answer is shown first (as A) in the first order: a seeded coin per pair."""
    return random.Random(f"{seed}/{case_id}/{condition}/{provider}/{trial}").random() < 0.5


async def compare_conditions(
    session: JudgeSession,
    suite: Suite,
    results: Sequence[TrialResult],
    run_dir: Path,
    *,
    seed: int = 0,
) -> PairwiseReport:
    """Judge every condition's answers against the baseline's, pair by pair (see the module docstring)."""
    cases = {c.id: c for c in suite.cases}
    usable = {r.id.key: r for r in results if r.status != "errored" and r.paths.trace}
    by_slot: dict[tuple[str, str, int, str], TrialResult] = {
        (r.id.case_id, r.id.provider, r.id.trial, r.id.condition): r for r in usable.values()
    }
    before = session.judge.calls
    usages: list[TokenUsage | None] = []
    rows: list[CasePairwise] = []
    unpaired: list[str] = []
    groups: dict[tuple[str, str], list[tuple[TrialResult, TrialResult]]] = defaultdict(list)
    for r in results:
        if r.id.condition == BASELINE or r.id.case_id not in cases:
            continue
        partner = by_slot.get((r.id.case_id, r.id.provider, r.id.trial, BASELINE))
        if r.id.key not in usable or partner is None:
            unpaired.append(r.id.key)
            continue
        groups[(r.id.case_id, r.id.condition)].append((r, partner))
    for (case_id, condition), pairs in groups.items():
        case = cases[case_id]
        task = task_text(case)
        verdicts: list[PairVerdict] = []
        for treated, baseline in sorted(pairs, key=lambda p: (p[0].id.provider, p[0].id.trial)):
            mine = answer_material(_trace(run_dir, treated), trial_dir=str(run_dir / treated.paths.dir)).text
            theirs = answer_material(
                _trace(run_dir, baseline), trial_dir=str(run_dir / baseline.paths.dir)
            ).text
            first = pair_order(seed, case_id, condition, treated.id.provider, treated.id.trial)
            sides, reasons = [], []
            for condition_first in (first, not first):
                a, b = (mine, theirs) if condition_first else (theirs, mine)
                asked = await session.ask(
                    Question(
                        kind="pairwise",
                        prompt=pairwise_prompt(task=task, first=a, second=b),
                        task=task,
                        first=a,
                        second=b,
                    ),
                )
                usages.append(asked.usage)
                sides.append(_side(asked.verdict.winner, condition_first, asked.verdict.decided))
                reasons.append(asked.verdict.reason or asked.verdict.problem)
            verdicts.append(
                PairVerdict(
                    trial=treated.id.trial,
                    provider=treated.id.provider,
                    condition_first=first,
                    first_order=sides[0],
                    swapped_order=sides[1],
                    counted=_counted(sides[0], sides[1]),
                    reasons=tuple(reasons),
                )
            )
        rows.append(_case_row(case_id, case.lane, condition, verdicts))
    rows.sort(key=lambda row: (row.condition, row.lane, row.case_id))
    conditions = tuple(
        _condition_row(name, [r for r in rows if r.condition == name]) for name in _names(rows)
    )
    return PairwiseReport(
        judge=session.spec.label,
        seed=seed,
        conditions=conditions,
        cases=tuple(rows),
        unpaired=tuple(sorted(unpaired)),
        usage=usage_sum(usages),
        judge_calls=session.judge.calls - before,
    )


def write_pairwise(run_dir: Path, report: PairwiseReport) -> Path:
    path = run_dir / PAIRWISE_FILE
    write_atomic(
        path, msgspec.json.format(msgspec.json.encode(report, order="deterministic"), indent=2) + b"\n"
    )
    return path


def read_pairwise(run_dir: Path) -> PairwiseReport | None:
    """The run's pairwise.json, or None when it has none (or it cannot be read)."""
    try:
        return msgspec.json.decode((run_dir / PAIRWISE_FILE).read_bytes(), type=PairwiseReport)
    except (OSError, msgspec.DecodeError):
        return None


def _trace(run_dir: Path, result: TrialResult) -> Trace:
    assert result.paths.trace is not None
    return msgspec.json.decode((run_dir / result.paths.trace).read_bytes(), type=Trace)


def _side(winner: str | None, condition_first: bool, decided: bool) -> Side:
    if not decided or winner is None:
        return "undecided"
    if winner == "tie":
        return "tie"
    return "condition" if (winner == "A") == condition_first else "baseline"


def _counted(first: Side, swapped: Side) -> Side:
    if "undecided" in (first, swapped):
        return "undecided"
    return first if first == swapped else "tie"


def _case_row(case_id: str, lane: str, condition: str, verdicts: list[PairVerdict]) -> CasePairwise:
    counted = [v.counted for v in verdicts]
    return CasePairwise(
        case_id=case_id,
        lane=lane,
        condition=condition,
        wins=counted.count("condition"),
        ties=counted.count("tie"),
        losses=counted.count("baseline"),
        undecided=counted.count("undecided"),
        swap_disagreements=sum(
            1 for v in verdicts if v.counted != "undecided" and v.first_order != v.swapped_order
        ),
        pairs=tuple(verdicts),
    )


def _condition_row(condition: str, rows: list[CasePairwise]) -> ConditionPairwise:
    shares = []
    for row in rows:
        decided = row.wins + row.ties + row.losses
        if decided:
            shares.append((row.wins / decided, row.losses / decided))
    trials = max((len(r.pairs) for r in rows), default=1)
    comparison = compare_paired(f"{condition} vs {BASELINE}", shares, trials=max(trials, 1))
    decided_pairs = sum(r.wins + r.ties + r.losses for r in rows)
    disagreements = sum(r.swap_disagreements for r in rows)
    return ConditionPairwise(
        condition=condition,
        cases=len(shares),
        mean_diff=comparison.mean_diff,
        interval=comparison.interval,
        case_wins=comparison.wins,
        case_ties=comparison.ties,
        case_losses=comparison.losses,
        p_value=comparison.p_value,
        verdict=comparison.verdict,
        pairs=sum(len(r.pairs) for r in rows),
        swap_disagreements=disagreements,
        position_bias=round(disagreements / decided_pairs, 4) if decided_pairs else None,
    )


def _names(rows: list[CasePairwise]) -> list[str]:
    return list(dict.fromkeys(r.condition for r in rows))
