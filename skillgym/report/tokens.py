"""The token section of a run: grand total, per lane, and per case x condition x provider per-trial figures.

Only what the providers reported is counted; a trial without usage is counted as missing, never estimated.
Per-trial figures are medians with their spread (min, max, IQR), so runs with different ``--trials``
compare fairly.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TypeAlias

from ..model import LANES
from ..results import TrialResult
from ..stats import Summary, summarize
from ..trace import TokenUsage
from ..usage import ConditionTokens as ConditionTokens
from ..usage import LaneTokens as LaneTokens
from ..usage import TokenReport as TokenReport
from ..usage import TokenRow as TokenRow
from ..usage import TokenTotals as TokenTotals

DEFAULT_MODEL = "default"  # the model name used when a provider reported none
METRICS = ("input", "output", "cached", "total")
RowKey: TypeAlias = tuple[str, str, str, str, str]  # lane, case, condition, provider, model


def model_name(result: TrialResult) -> str:
    """The model a result's tokens are filed under: what the provider reported, or ``default``."""
    return result.model or DEFAULT_MODEL


def has_usage(result: TrialResult) -> bool:
    """A trial counts as reporting usage when its total is known (the trial computed it once)."""
    return result.usage is not None and result.usage.total is not None


def cached(usage: TokenUsage) -> int | None:
    if usage.cache_read is None and usage.cache_write is None:
        return None
    return (usage.cache_read or 0) + (usage.cache_write or 0)


def metric(usage: TokenUsage, name: str) -> int | None:
    """One of ``METRICS`` from a trial's usage."""
    if name == "cached":
        return cached(usage)
    value: int | None = getattr(usage, name)
    return value


def _sum(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def totals(results: Sequence[TrialResult]) -> TokenTotals:
    used = [r.usage for r in results if r.usage is not None and has_usage(r)]
    return TokenTotals(
        trials=len(used),
        missing=len(results) - len(used),
        input=_sum(u.input for u in used),
        output=_sum(u.output for u in used),
        cache_read=_sum(u.cache_read for u in used),
        cache_write=_sum(u.cache_write for u in used),
        reasoning=_sum(u.reasoning for u in used),
        total=_sum(u.total for u in used),
    )


def _figure(usages: Sequence[TokenUsage], name: str) -> Summary | None:
    values = [v for u in usages if (v := metric(u, name)) is not None]
    return summarize(values)


def token_row(results: Sequence[TrialResult]) -> TokenRow:
    """The row of one group of trials (same lane, case, condition, provider and model)."""
    first = results[0]
    used = [r.usage for r in results if r.usage is not None and has_usage(r)]
    judged = [r.judge_usage for r in results if r.judge_usage is not None and r.judge_usage.total is not None]
    return TokenRow(
        lane=first.id.lane,
        case_id=first.id.case_id,
        condition=first.id.condition,
        provider=first.id.provider,
        model=model_name(first),
        fingerprint=first.id.fingerprint,
        trials=len(used),
        missing=len(results) - len(used),
        input=_figure(used, "input"),
        output=_figure(used, "output"),
        cached=_figure(used, "cached"),
        total=_figure(used, "total"),
        judge_trials=len(judged),
        judge_input=_figure(judged, "input"),
        judge_output=_figure(judged, "output"),
        judge_cached=_figure(judged, "cached"),
        judge_total=_figure(judged, "total"),
    )


def row_key(result: TrialResult) -> RowKey:
    return (result.id.lane, result.id.case_id, result.id.condition, result.id.provider, model_name(result))


def group_rows(results: Iterable[TrialResult]) -> dict[RowKey, list[TrialResult]]:
    """Trials grouped per (lane, case, condition, provider, model), in a stable order."""
    groups: dict[RowKey, list[TrialResult]] = defaultdict(list)
    for r in results:
        groups[row_key(r)].append(r)
    ordered = sorted(groups, key=lambda k: (LANES.index(k[0]), *k[1:]))
    return {k: sorted(groups[k], key=lambda r: r.id.trial) for k in ordered}


def token_rows(results: Iterable[TrialResult]) -> tuple[TokenRow, ...]:
    """One row per (lane, case, condition, provider, model), trials without usage included as missing."""
    return tuple(token_row(trials) for trials in group_rows(results).values())


def build_token_report(results: Sequence[TrialResult]) -> TokenReport | None:
    """The token section, or None when no trial reported usage."""
    if not any(has_usage(r) for r in results):
        return None
    lanes = [lane for lane in LANES if any(r.id.lane == lane for r in results)]
    return TokenReport(
        totals=totals(results),
        lanes=tuple(
            LaneTokens(lane=lane, totals=totals([r for r in results if r.id.lane == lane])) for lane in lanes
        ),
        rows=token_rows(results),
        conditions=condition_tokens(results),
    )


def condition_tokens(results: Sequence[TrialResult]) -> tuple[ConditionTokens, ...]:
    """Per lane, condition and provider, in lane order then first appearance: the per-trial total's spread."""
    groups: dict[tuple[str, str, str], list[TrialResult]] = defaultdict(list)
    for r in sorted(results, key=lambda r: LANES.index(r.id.lane)):
        groups[(r.id.lane, r.id.condition, r.id.provider)].append(r)
    out = []
    for (_, condition, provider), mine in groups.items():
        used = [r.usage for r in mine if r.usage is not None and has_usage(r)]
        out.append(
            ConditionTokens(
                lane=mine[0].id.lane,
                condition=condition,
                provider=provider,
                trials=len(used),
                missing=len(mine) - len(used),
                total=_figure(used, "total"),
            )
        )
    return tuple(out)
