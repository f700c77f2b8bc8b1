"""A run's judge session: the judge, its store, and one question asked at most once per key."""

from __future__ import annotations

import os

import anyio

from ..model import Data
from ..trace import TokenUsage
from .judges import Judge, JudgeSpec, Question
from .questions import JUDGE_PROMPT_VERSION, QuestionKind, Verdict, read_answer, undecided
from .store import Source, StoredAnswer, VerdictStore, question_key


class Asked(Data, frozen=True, kw_only=True):
    """One question and what came of it: the raw answer, the verdict read from it, where it came from."""

    key: str
    judge: str
    model: str | None = None
    prompt_version: str = JUDGE_PROMPT_VERSION
    raw_answer: str = ""
    verdict: Verdict
    usage: TokenUsage | None = None  # only for an answer the judge gave in this run; a stored one is free
    source: Source | None = None  # None: the judge gave no answer (an error)
    duration_s: float = 0.0


class JudgeSession:
    """The run's judge with its store; equal questions asked at once wait for the first to be answered."""

    def __init__(self, judge: Judge, store: VerdictStore, *, workdir: str) -> None:
        self.judge = judge
        self.store = store
        # Where the judge's CLI runs: one folder per question, named by its key. Never below a trial's
        # folder, whose path names the condition (an agent CLI tells its model its working directory).
        self.workdir = workdir
        self._pending: dict[str, anyio.Event] = {}

    @property
    def spec(self) -> JudgeSpec:
        return self.judge.spec

    async def ask(self, question: Question) -> Asked:
        """The verdict on ``question``: from the store when it holds the key, else from the judge."""
        label = self.spec.label
        key = question_key(label, question.prompt)
        while key in self._pending:  # another trial asks the same question right now
            await self._pending[key].wait()
        stored = self.store.find(key)
        if stored is not None:
            answer, source = stored
            return Asked(
                key=key,
                judge=answer.judge,
                model=answer.model,
                prompt_version=answer.prompt_version,
                raw_answer=answer.raw_answer,
                verdict=_read(question, answer.raw_answer),
                source=source,
            )
        done = self._pending[key] = anyio.Event()
        try:
            return await self._ask_judge(question, key, label, os.path.join(self.workdir, key[:32]))
        finally:
            del self._pending[key]
            done.set()

    async def _ask_judge(self, question: Question, key: str, label: str, folder: str) -> Asked:
        answer = await self.judge.answer(question, folder=folder)
        if answer.error:
            return Asked(
                key=key,
                judge=label,
                model=answer.model or self.spec.model,
                raw_answer=answer.text,
                verdict=undecided(f"the judge gave no answer: {answer.error}"),
                usage=answer.usage,
                duration_s=round(answer.duration_s, 3),
            )
        verdict = _read(question, answer.text)
        if verdict.decided:  # a stand-in's answer is not worth a cache entry, but may be recorded
            self.store.keep(
                StoredAnswer(
                    key=key,
                    judge=label,
                    model=answer.model or self.spec.model,
                    prompt_version=JUDGE_PROMPT_VERSION,
                    raw_answer=answer.text,
                    usage=answer.usage,
                ),
                cache=self.judge.caches,
            )
        return Asked(
            key=key,
            judge=label,
            model=answer.model or self.spec.model,
            raw_answer=answer.text,
            verdict=verdict,
            usage=answer.usage,
            source="judge",
            duration_s=round(answer.duration_s, 3),
        )


def _read(question: Question, raw: str) -> Verdict:
    kind: QuestionKind = question.kind
    return read_answer(raw, kind, material=question.material, points=question.points)
