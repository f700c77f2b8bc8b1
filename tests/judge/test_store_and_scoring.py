"""The judge's pieces without a CLI: cache keys and lookup order, kappa, pairwise counting, score folding."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import anyio
import msgspec
import pytest

from skillgym.errors import UsageError
from skillgym.judge.calibration import cohens_kappa, read_labelled
from skillgym.judge.grading import judge_trial
from skillgym.judge.judges import Answer, JudgeSpec, parse_spec
from skillgym.judge.pairwise import _counted, _side, pair_order
from skillgym.judge.questions import JUDGE_PROMPT_VERSION, Question
from skillgym.judge.session import JudgeSession
from skillgym.judge.store import StoredAnswer, VerdictStore, question_key
from skillgym.model import Budget, JudgedCheck, PromptCase, Rubric
from skillgym.results import CheckOutcome, Grade
from skillgym.trace import TokenUsage, Trace


def test_the_key_covers_prompt_version_judge_and_question() -> None:
    key = question_key("claude:a", "question")
    assert len(key) == 64 and key == question_key("claude:a", "question")
    assert key != question_key("claude:b", "question") != question_key("claude:a", "question!")


def test_cassettes_are_read_before_the_cache_and_damaged_entries_are_misses(tmp_path: Path) -> None:
    store = VerdictStore(cassettes=tmp_path / "verdicts", cache=tmp_path / "cache", record=False)
    answer = StoredAnswer(key="k", judge="claude:a", prompt_version=JUDGE_PROMPT_VERSION, raw_answer="{}")
    assert store.find("k") is None
    store.keep(answer)
    assert not (tmp_path / "verdicts").exists()  # not recording: the cache only
    assert store.find("k") == (json_round(tmp_path / "cache" / "k.json"), "cache")
    recording = VerdictStore(cassettes=tmp_path / "verdicts", cache=None, record=True)
    recording.keep(answer)
    assert store.find("k")[1] == "cassette"  # type: ignore[index]
    (tmp_path / "verdicts" / "k.json").write_text("{not json")
    assert store.find("k")[1] == "cache"  # type: ignore[index]


def json_round(path: Path) -> StoredAnswer:
    data = json.loads(path.read_text())
    return StoredAnswer(**data)


def test_cohens_kappa_against_hand_worked_figures() -> None:
    assert cohens_kappa(20, 5, 10, 15) == 0.4  # observed 0.7, chance 0.5
    assert cohens_kappa(10, 0, 0, 10) == 1.0
    assert cohens_kappa(5, 5, 5, 5) == 0.0
    assert cohens_kappa(0, 10, 10, 0) == -1.0
    assert cohens_kappa(10, 0, 0, 0) is None  # one label only: undefined
    assert cohens_kappa(0, 0, 0, 0) is None


def test_the_pair_order_is_a_seeded_coin_per_pair() -> None:
    draws = [pair_order(0, "case", "preloaded", "claude", n) for n in range(1, 201)]
    assert draws == [pair_order(0, "case", "preloaded", "claude", n) for n in range(1, 201)]
    assert 70 < sum(draws) < 130  # both orders, about equally often
    assert draws != [pair_order(1, "case", "preloaded", "claude", n) for n in range(1, 201)]


def test_a_winner_counts_only_when_both_orders_agree() -> None:
    # Condition shown first as A, and A wins: the condition; shown second as B, and A wins: the baseline.
    assert _side("A", True, True) == "condition" and _side("A", False, True) == "baseline"
    assert _side("tie", True, True) == "tie" and _side(None, True, False) == "undecided"
    assert _counted("condition", "condition") == "condition"
    assert _counted("condition", "baseline") == "tie"  # position bias: the judge picked A both times
    assert _counted("tie", "condition") == "tie"
    assert _counted("undecided", "condition") == "undecided"


def test_judge_specs_are_parsed_and_checked_against_the_registry() -> None:
    assert parse_spec("claude:sonnet") == JudgeSpec(provider="claude", model="sonnet")
    assert parse_spec("stub").label == "stub"
    replay = parse_spec("replay:codex:gpt-5")
    assert replay.provider == "replay" and replay.label == "codex:gpt-5"
    with pytest.raises(UsageError, match="unknown provider 'gpt'"):
        parse_spec("gpt:4")
    with pytest.raises(UsageError, match="names no judge"):
        parse_spec(":x")


class _Scripted:
    """A judge answering from a list, counting the questions that reach it."""

    def __init__(self, answers: list[str]) -> None:
        self.spec = JudgeSpec(provider="claude", model="m")
        self.calls = 0
        self.caches = True
        self.questions: list[Question] = []
        self._answers = answers

    async def answer(self, question: Question, *, folder: str) -> Answer:
        self.calls += 1
        self.questions.append(question)
        return Answer(text=self._answers.pop(0), usage=TokenUsage(input=10, output=2, total=12))


def _case() -> PromptCase:
    return PromptCase(
        id="p",
        category="c",
        prompt="q",
        budget=Budget(timeout_s=1),
        judged=(
            JudgedCheck(id="must", expectation="it is lazy"),
            JudgedCheck(id="nice", expectation="it has an example", required=False),
        ),
        rubric=(Rubric(id="rubric", text="clear", points=4, weight=2.0),),
    )


def _verdict(verdict: str, quote: str = "") -> str:
    return json.dumps({"verdict": verdict, "evidence": [quote] if quote else [], "reason": verdict})


def test_verdicts_fold_into_the_grade_by_the_stated_weights(tmp_path: Path) -> None:
    judge = _Scripted([_verdict("pass", "lazy"), _verdict("fail"), json.dumps({"score": 2, "evidence": []})])
    session = JudgeSession(judge, VerdictStore(cassettes=None, cache=tmp_path), workdir=str(tmp_path / "w"))
    lane = Grade(
        passed=True, score=0.5, checks=(CheckOutcome(id="s", kind="workflow", required=True, passed=True),)
    )
    judged = anyio.run(
        lambda: judge_trial(session, _case(), Trace(final_text="it is lazy"), lane, workspace=None)
    )
    grade = judged.grade
    assert grade.passed  # the optional check failed, the required one passed
    # lane 0.5 (weight 1), judged checks 1/2 (weight 1), rubric 2/4 (weight 2): (0.5 + 0.5 + 1.0) / 4
    assert grade.score == 0.5
    assert [(c.id, c.kind, c.passed) for c in grade.checks] == [
        ("s", "workflow", True),
        ("must", "judge", True),
        ("nice", "judge", False),
    ]
    assert judged.file.usage == TokenUsage(input=30, output=6, total=36)
    # Asked again (a replayed run re-graded): every answer comes from the cache, nobody is asked.
    again = anyio.run(
        lambda: judge_trial(session, _case(), Trace(final_text="it is lazy"), lane, workspace=None)
    )
    assert judge.calls == 3 and {r.source for r in again.file.records} == {"cache"}
    assert again.file.usage is None and again.grade == grade


def test_the_case_grader_notes_reach_every_question_and_make_their_own_key(tmp_path: Path) -> None:
    answers = [_verdict("pass", "lazy"), _verdict("fail"), json.dumps({"score": 2, "evidence": []})]
    judge = _Scripted(answers * 2)
    session = JudgeSession(judge, VerdictStore(cassettes=None, cache=tmp_path), workdir=str(tmp_path / "w"))
    lane = Grade(passed=True, score=1.0)
    notes = "A good answer says the body runs only when the generator is iterated."
    noted = msgspec.structs.replace(_case(), grader_notes=notes)
    for case in (_case(), noted):
        anyio.run(partial(judge_trial, session, case, Trace(final_text="it is lazy"), lane, workspace=None))
    plain_asked, noted_asked = judge.questions[:3], judge.questions[3:]
    assert judge.calls == 6  # the same checks with notes are new questions, never the cached verdicts
    assert all(notes not in q.prompt and not q.notes for q in plain_asked)
    assert all(notes in q.prompt and q.notes == notes for q in noted_asked)
    assert [q.kind for q in noted_asked] == ["check", "check", "rubric"]
    long = msgspec.structs.replace(_case(), grader_notes="x" * 5000, judged=_case().judged[:1], rubric=())
    judge_long = _Scripted([_verdict("fail")])
    session = JudgeSession(judge_long, VerdictStore(cassettes=None, cache=None), workdir=str(tmp_path))
    judged = anyio.run(
        lambda: judge_trial(session, long, Trace(final_text="it is lazy"), lane, workspace=None)
    )
    assert judged.file.records[0].material_cuts == ("the grader notes: 1000 of 5000 characters cut",)


def test_a_labelled_line_may_carry_grader_notes(tmp_path: Path) -> None:
    path = tmp_path / "labelled.jsonl"
    line = {"expectation": "e", "material": "m", "label": "pass", "grader_notes": "a good answer says m"}
    path.write_text(json.dumps(line) + "\n" + json.dumps({**line, "grader_notes": 3}) + "\n")
    with pytest.raises(UsageError, match=r"labelled.jsonl:2: \$.grader_notes must be a string"):
        read_labelled(path)
    path.write_text(json.dumps(line) + "\n")
    (item,), _digest = read_labelled(path)
    assert item.grader_notes == "a good answer says m"


def test_an_undecided_required_check_is_reported_and_fails(tmp_path: Path) -> None:
    judge = _Scripted(["no idea", _verdict("pass", "lazy"), "also no idea"])
    session = JudgeSession(judge, VerdictStore(cassettes=None, cache=None), workdir=str(tmp_path))
    lane = Grade(passed=True, score=1.0)
    judged = anyio.run(
        lambda: judge_trial(session, _case(), Trace(final_text="it is lazy"), lane, workspace=None)
    )
    assert not judged.grade.passed
    assert judged.undecided_required == (
        "judged check 'must': the judge's answer holds no JSON object: no idea",
    )
    assert judged.warnings == ("rubric 'rubric': the judge's answer holds no JSON object: also no idea",)
    assert "rubric" not in [i.name for i in judged.grade.items]  # an undecided rating is no rating
