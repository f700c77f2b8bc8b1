"""What a trial produces: its grade (checks, findings, score) and its result record on disk."""

from __future__ import annotations

import os
from typing import Final, Literal, TypeAlias

import msgspec

from .cost.prices import Cost
from .identity import TrialId
from .model import Data, Severity
from .trace import TokenUsage

RESULT_SCHEMA = 2  # schema 1 holds the identity's fields at the top level instead of in `id`

Status: TypeAlias = Literal["passed", "failed", "errored"]
ErrorClass: TypeAlias = Literal[
    "provider-unavailable",
    "timeout",
    "provider-error",
    "environment-error",
    "grader-error",
    "interrupted",
]
# Errors that are not the agent's doing: its provider could not be reached, its workspace, template or
# bootstrap failed, the suite's verifier broke (grader-error: the suite's bug), or the run was stopped. A
# comparison leaves such trials out. Every other error is the agent's own failure and counts as one: a
# timeout (it ran past its budget) or a provider-error (it crashed, exited non-zero, printed output that
# does not parse, or reached its turn limit).
NOT_THE_AGENTS: Final[tuple[ErrorClass, ...]] = (
    "provider-unavailable",
    "environment-error",
    "grader-error",
    "interrupted",
)
CheckKind: TypeAlias = Literal[
    "skill",
    "expected-pattern",
    "forbidden-pattern",
    "workflow",
    "verifier",
    "artifact",
    "report",
    "bundle",
    "judge",
]


class CheckOutcome(Data, frozen=True, kw_only=True):
    """One graded requirement: whether it held, whether it gates the pass, and why.

    A judged check (``kind="judge"``) also carries the plain-language ``expectation`` it graded and the
    ``evidence`` the judge quoted from the trial's material; its ``message`` is the judge's reason.
    """

    id: str
    kind: CheckKind
    required: bool
    passed: bool
    message: str = ""
    expectation: str = ""
    evidence: str = ""


class Finding(Data, frozen=True, kw_only=True):
    """An anti-pattern occurrence; ``negated`` ones ("instead of sleep") are kept but never gate."""

    rule_id: str
    severity: Severity
    message: str
    matched_text: str = ""
    line: int | None = None
    suggested_fix: str = ""
    negated: bool = False


class ScoreItem(Data, frozen=True, kw_only=True):
    """One component of the continuous score."""

    name: str
    score: float
    max_score: float
    reason: str = ""


class Grade(Data, frozen=True, kw_only=True):
    """A lane grader's verdict: ``passed`` is the strict rule, ``score`` (0..1) ranks and compares."""

    passed: bool
    score: float
    items: tuple[ScoreItem, ...] = ()
    checks: tuple[CheckOutcome, ...] = ()
    findings: tuple[Finding, ...] = ()
    reasons: tuple[str, ...] = ()
    selected_skills: tuple[str, ...] = ()
    # Whether the trace shows the case's expected skill loaded (skills.skill_loaded): what "did it fire"
    # counts. None when the case expects no skill, or in a result written before it was recorded.
    skill_loaded: bool | None = None


class TrialPaths(Data, frozen=True, kw_only=True):
    """Files of one trial, relative to the run directory; every path given here exists after the run."""

    dir: str
    result: str
    trace: str | None = None
    transcript: str | None = None  # transcript.md: the prompt and what the agent said and ran, readable
    stdout: str | None = None
    stderr: str | None = None
    token_usage: str | None = None
    workspace: str | None = None
    bundle: str | None = None
    cassette: str | None = None
    judge: str | None = None  # judge.json: the judged checks' questions, raw answers and verdicts


class TrialResult(Data, frozen=True, kw_only=True):
    """The record of one trial: identity, outcome, grade, usage, timing and paths."""

    schema: int = RESULT_SCHEMA
    id: TrialId
    category: str
    model: str | None  # the model the provider reported, else the one the run asked for
    status: Status
    error_class: ErrorClass | None = None
    error_message: str | None = None
    grade: Grade | None = None
    usage: TokenUsage | None = None
    # Dollars: the agent CLI's own figure, else the usage at the price table's prices; None when unknown.
    cost: Cost | None = None
    # What the judge's questions about this trial cost in this run: never part of ``usage`` (the agent's).
    judge_usage: TokenUsage | None = None
    warnings: tuple[str, ...] = ()
    started_at: float
    finished_at: float
    duration_s: float  # finished_at - started_at, less the time waiting for an agent slot and judging
    paths: TrialPaths
    waited_s: float = 0.0  # set up and waiting for one of the --concurrency slots
    judge_s: float = 0.0  # the judge grading the judged checks: its time, never the agent's
    node: str | None = None  # the cluster node it ran on (--executor ray); None: the run's own machine

    @property
    def ok(self) -> bool:
        return self.status == "passed"


def rehomed(result: TrialResult, run_dir: str, moved_to: str) -> TrialResult:
    """``result`` for its run folder moved from ``run_dir`` to ``moved_to`` (a merge, a trial run on a
    cluster node): its paths are relative to the run folder, but a cassette lives in the suite, outside
    it, so its relative path is worked out again; a message may name the folder itself."""
    cassette = result.paths.cassette
    if cassette is not None:
        where = os.path.normpath(os.path.join(run_dir, cassette))
        paths = msgspec.structs.replace(result.paths, cassette=os.path.relpath(where, moved_to))
        result = msgspec.structs.replace(result, paths=paths)
    encoded = msgspec.json.encode(result)
    old = msgspec.json.encode(run_dir)[1:-1]
    if old not in encoded:
        return result
    return msgspec.json.decode(encoded.replace(old, msgspec.json.encode(moved_to)[1:-1]), type=TrialResult)
