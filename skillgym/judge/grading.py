"""Judged checks of one trial: ask the run's judge, fold the verdicts into the grade, write judge.json.

A judged check is a check like any other (``CheckOutcome(kind="judge")``): a required one that fails
fails the trial. A judge that cannot decide (no answer, a malformed answer, a refusal, a pass without
evidence from the material) never passes: the check fails, and when it is required the trial becomes a
grader-error (the verdict is missing, which is not the agent's doing).

The score: the lane's own score weighs 1, the share of judged checks that passed weighs 1 when the case
has any, and each rubric's rating (as a share of its points) weighs its ``weight``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Literal, TypeAlias

import msgspec

from ..files import write_atomic
from ..model import Case, Data, DogfoodCase, ExecutionCase, JudgedCheck, PromptCase, Rubric, Skill
from ..redact import scrubbed_json
from ..results import CheckOutcome, Grade, ScoreItem
from ..trace import TokenUsage, Trace
from .judges import Question, usage_sum
from .material import NOTES_BUDGET, about_skill, cut, trial_material
from .questions import JUDGE_PROMPT_VERSION, Verdict, check_prompt, rubric_prompt
from .session import Asked, JudgeSession

JUDGE_FILE: Final = "judge.json"
JUDGE_FILE_SCHEMA: Final = 1

RecordKind: TypeAlias = Literal["check", "rubric"]


class JudgeRecord(Data, frozen=True, kw_only=True):
    """One judged check or rubric of a trial, as judge.json keeps it."""

    id: str
    kind: RecordKind
    expectation: str
    required: bool
    judge: str
    model: str | None = None
    prompt_version: str
    input_digest: str  # the cache key: BLAKE3 of prompt version, judge and the whole question
    raw_answer: str
    verdict: Verdict
    usage: TokenUsage | None = None
    source: str | None = None  # judge (asked in this run), cache, cassette; None: no answer
    material_cuts: tuple[str, ...] = ()  # what the budget cut from the material


class JudgeFile(Data, frozen=True, kw_only=True):
    """``judge.json``: every judged check and rubric of one trial, and the judge's usage for it."""

    schema: int = JUDGE_FILE_SCHEMA
    judge: str
    prompt_version: str = JUDGE_PROMPT_VERSION
    records: tuple[JudgeRecord, ...] = ()
    usage: TokenUsage | None = None  # what this trial's questions cost the judge in this run


class Judged(Data, frozen=True, kw_only=True):
    """The outcome of judging one trial: the grade with the verdicts folded in, and what went wrong."""

    grade: Grade
    file: JudgeFile
    undecided_required: tuple[str, ...] = ()  # one line per required check the judge could not decide
    warnings: tuple[str, ...] = ()


def task_text(case: Case) -> str:
    """The task as the agent was asked it, without anything a condition adds (the judge stays blind)."""
    match case:
        case PromptCase():
            return f"{case.prompt}\n\n{case.context}".strip()
        case ExecutionCase() | DogfoodCase():
            return case.task


def judge_notes(case: Case, cuts: list[str]) -> str:
    """The case's grader notes as the judge reads them: within ``NOTES_BUDGET``, a cut noted in ``cuts``."""
    return cut(case.grader_notes.strip(), NOTES_BUDGET, what="the grader notes", cuts=cuts)


def needs_judge(case: Case) -> bool:
    """Whether a case has anything for a judge to grade."""
    return bool(case.judged or case.rubric)


async def judge_trial(
    session: JudgeSession,
    case: Case,
    trace: Trace,
    grade: Grade,
    *,
    workspace: str | None,
    trial_dir: str | None = None,
    skills: Sequence[Skill] = (),
    suite_root: str = ".",
) -> Judged:
    """Ask the judge about every judged check and rubric of ``case`` and fold the verdicts into ``grade``.

    The case's grader notes go with every question as the reference for a good result. ``trial_dir`` is
    hidden from the material (see ``trial_material``).
    """
    task = task_text(case)
    notes_cut: list[str] = []
    notes = judge_notes(case, notes_cut)
    records: list[JudgeRecord] = []
    checks: list[CheckOutcome] = []
    items: list[ScoreItem] = []
    undecided_required: list[str] = []
    warnings: list[str] = []
    weighted: list[tuple[float, float]] = [(grade.score, 1.0)]
    for check in case.judged:
        material = trial_material(
            trace,
            workspace=workspace,
            files=check.files,
            skill_text=_skill_text(check.expectation, case, skills, suite_root),
            trial_dir=trial_dir,
        )
        question = Question(
            kind="check",
            prompt=check_prompt(
                task=task, expectation=check.expectation, material=material.text, notes=notes
            ),
            task=task,
            expectation=check.expectation,
            material=material.text,
            notes=notes,
        )
        asked = await session.ask(question)
        cuts = (*notes_cut, *material.cuts)
        records.append(_record(check.id, "check", check.expectation, check.required, asked, cuts))
        checks.append(_outcome(check, asked.verdict))
        if not asked.verdict.decided:
            line = f"judged check {check.id!r}: {asked.verdict.problem}"
            (undecided_required if check.required else warnings).append(line)
    if case.judged:
        held = sum(c.passed for c in checks)
        items.append(ScoreItem(name="judged", score=float(held), max_score=float(len(checks))))
        weighted.append((held / len(checks), 1.0))
    for rubric in case.rubric:
        material = trial_material(
            trace,
            workspace=workspace,
            skill_text=_skill_text(rubric.text, case, skills, suite_root),
            trial_dir=trial_dir,
        )
        question = Question(
            kind="rubric",
            prompt=rubric_prompt(
                task=task, rubric=rubric.text, points=rubric.points, material=material.text, notes=notes
            ),
            task=task,
            expectation=rubric.text,
            material=material.text,
            points=rubric.points,
            notes=notes,
        )
        asked = await session.ask(question)
        required = rubric.pass_at is not None
        cuts = (*notes_cut, *material.cuts)
        records.append(_record(rubric.id, "rubric", rubric.text, required, asked, cuts))
        verdict = asked.verdict
        if verdict.decided and verdict.score is not None:
            items.append(
                ScoreItem(
                    name=rubric.id,
                    score=float(verdict.score),
                    max_score=float(rubric.points),
                    reason=verdict.reason,
                )
            )
            weighted.append((verdict.score / rubric.points, rubric.weight))
        else:
            line = f"rubric {rubric.id!r}: {verdict.problem}"
            (undecided_required if required else warnings).append(line)
        if required:
            checks.append(_rubric_outcome(rubric, verdict))
    usage = usage_sum([r.usage for r in records])
    file = JudgeFile(judge=session.spec.label, records=tuple(records), usage=usage)
    return Judged(
        grade=_fold(grade, checks, items, weighted),
        file=file,
        undecided_required=tuple(undecided_required),
        warnings=tuple(warnings),
    )


def write_judge_file(folder: str, file: JudgeFile, secrets: tuple[str, ...]) -> str:
    """Write ``judge.json`` into the trial folder (secrets scrubbed); its path."""
    _scrubbed, encoded = scrubbed_json(file, secrets)
    path = os.path.join(folder, JUDGE_FILE)
    write_atomic(path, encoded)
    return path


def read_judge_file(path: str | Path) -> JudgeFile:
    """A trial's ``judge.json``."""
    return msgspec.json.decode(Path(path).read_bytes(), type=JudgeFile)


def _skill_text(expectation: str, case: Case, skills: Sequence[Skill], suite_root: str) -> str:
    """The skill's SKILL.md when ``expectation`` is about it: the expected skill, else those it names."""
    names = [s.name for s in skills]
    if not about_skill(expectation, names):
        return ""
    lowered = expectation.casefold()
    chosen = [s for s in skills if s.name == case.expected_skill] or [
        s for s in skills if s.name.casefold() in lowered
    ]
    texts = []
    for skill in chosen:
        path = Path(suite_root, skill.path, "SKILL.md")
        try:
            texts.append(f"### {skill.name}\n{path.read_text(encoding='utf-8', errors='replace')}")
        except OSError:
            continue
    return "\n\n".join(texts)


def _record(
    ident: str, kind: RecordKind, expectation: str, required: bool, asked: Asked, cuts: tuple[str, ...]
) -> JudgeRecord:
    return JudgeRecord(
        id=ident,
        kind=kind,
        expectation=expectation,
        required=required,
        judge=asked.judge,
        model=asked.model,
        prompt_version=asked.prompt_version,
        input_digest=asked.key,
        raw_answer=asked.raw_answer,
        verdict=asked.verdict,
        usage=asked.usage,
        source=asked.source,
        material_cuts=cuts,
    )


def _outcome(check: JudgedCheck, verdict: Verdict) -> CheckOutcome:
    if not verdict.decided:
        message = f"the judge could not decide: {verdict.problem}"
    else:
        message = verdict.reason or ("met" if verdict.passed else "not met")
    return CheckOutcome(
        id=check.id,
        kind="judge",
        required=check.required,
        passed=bool(verdict.decided and verdict.passed),
        message=message,
        expectation=check.expectation,
        evidence=" | ".join(verdict.evidence),
    )


def _rubric_outcome(rubric: Rubric, verdict: Verdict) -> CheckOutcome:
    bar = rubric.pass_at or 0
    if not verdict.decided or verdict.score is None:
        passed, message = False, f"the judge could not decide: {verdict.problem}"
    else:
        passed = verdict.score >= bar
        message = f"rated {verdict.score}/{rubric.points} (passes at {bar}): {verdict.reason}".rstrip(": ")
    return CheckOutcome(
        id=rubric.id,
        kind="judge",
        required=True,
        passed=passed,
        message=message,
        expectation=rubric.text,
        evidence=" | ".join(verdict.evidence),
    )


def _fold(
    grade: Grade, checks: list[CheckOutcome], items: list[ScoreItem], weighted: list[tuple[float, float]]
) -> Grade:
    broken = [c for c in checks if c.required and not c.passed]
    reasons = [f"required judged check {c.id!r} failed: {c.message}" for c in broken]
    total_weight = sum(w for _, w in weighted)
    score = sum(s * w for s, w in weighted) / total_weight if total_weight else grade.score
    return msgspec.structs.replace(
        grade,
        passed=grade.passed and not broken,
        score=round(score, 6),
        items=(*grade.items, *items),
        checks=(*grade.checks, *checks),
        reasons=(*grade.reasons, *reasons),
    )
