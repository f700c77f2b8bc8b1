"""Token usage as a run records it: a trial's ``token-usage.json`` and the run's token section (data only).

The figures are computed in ``skillgym.report.tokens``; these Structs sit outside the report package so that
``run.finish`` (in ``skillgym.events``) can carry the token section without importing the report.
"""

from __future__ import annotations

from .identity import TrialId
from .model import Data, Lane
from .stats import Summary
from .trace import TokenUsage


class TokenTotals(Data, frozen=True, kw_only=True):
    """Summed counts over trials that reported usage; a count no trial reported stays None."""

    trials: int  # trials that reported usage
    missing: int  # trials that did not
    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    total: int | None = None


class LaneTokens(Data, frozen=True, kw_only=True):
    lane: Lane
    totals: TokenTotals


class TokenRow(Data, frozen=True, kw_only=True):
    """One case under one condition, provider and model: per-trial median and spread of each count.

    ``cached`` is cache read plus cache write, so input + output + cached = total (reasoning is part of
    output for every provider).
    """

    lane: Lane
    case_id: str
    condition: str
    provider: str
    model: str
    fingerprint: str
    trials: int  # trials that reported usage: the figures below are over these
    missing: int
    input: Summary | None = None
    output: Summary | None = None
    cached: Summary | None = None
    total: Summary | None = None
    # The judge's tokens per trial (trials whose judged checks were asked in the run): never in the above.
    judge_trials: int = 0
    judge_input: Summary | None = None
    judge_output: Summary | None = None
    judge_cached: Summary | None = None
    judge_total: Summary | None = None


class ConditionTokens(Data, frozen=True, kw_only=True):
    """A lane under one condition and provider: the per-trial total's median and spread over its trials."""

    lane: Lane
    condition: str
    provider: str
    trials: int  # trials that reported usage
    missing: int
    total: Summary | None = None


class TokenReport(Data, frozen=True, kw_only=True):
    """The run's token section: sums over the run and per lane, one row per case x condition x provider."""

    totals: TokenTotals
    lanes: tuple[LaneTokens, ...]
    rows: tuple[TokenRow, ...]
    # Per lane, condition and provider (what report.html charts); empty in reports from before it.
    conditions: tuple[ConditionTokens, ...] = ()


TOKEN_USAGE_SCHEMA = 2  # schema 1 holds the identity's fields at the top level instead of in `id`


class TrialTokens(Data, frozen=True, kw_only=True):
    """What a trial's ``token-usage.json`` holds: its reported usage and what identifies it.

    Counts the provider did not report are null, never estimated; ``total`` was computed once in the
    trial when the CLI printed none. ``token_budget_percent`` is the case's own regression threshold.
    """

    schema: int = TOKEN_USAGE_SCHEMA
    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None
    total: int | None = None
    id: TrialId
    model: str | None
    token_budget_percent: float | None = None


def trial_tokens(
    usage: TokenUsage, *, id: TrialId, model: str | None, token_budget_percent: float | None
) -> TrialTokens:
    return TrialTokens(
        input=usage.input,
        output=usage.output,
        cache_read=usage.cache_read,
        cache_write=usage.cache_write,
        reasoning=usage.reasoning,
        total=usage.total,
        id=id,
        model=model,
        token_budget_percent=token_budget_percent,
    )
