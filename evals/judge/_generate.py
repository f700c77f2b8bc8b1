"""Write the suite's synthetic judge verdicts (judge ``claude:scripted``) for its judged checks.

    python evals/judge/_generate.py            # every judged check of every case, under every condition
    python evals/judge/_generate.py --list     # what would be written

No model wrote these. Like the agent cassettes (``cassettes/README.md``), they are scripted: for each
judged check and rubric and each condition's scripted answer, ``VERDICTS`` below holds the verdict a
careful human grader gives, with quotes copied from that answer. The question each verdict answers is
built by skillgym's own code (the material of the replayed trace, the fixed judge prompt), so its key is
the one a run computes and ``--judge replay`` finds it. Record a real judge's verdicts instead with
``skillgym run --judge claude:MODEL --judge-record`` and name it in ``judged_by(...)``.

This file starts with ``_``: the suite loader never imports it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUITE = HERE.parent
sys.path[:0] = [str(SUITE.parent)]

from skillgym.judge.grading import judge_notes, task_text  # noqa: E402
from skillgym.judge.material import trial_material  # noqa: E402
from skillgym.judge.questions import JUDGE_PROMPT_VERSION, check_prompt, rubric_prompt  # noqa: E402
from skillgym.judge.store import StoredAnswer, VerdictStore, question_key, verdicts_dir  # noqa: E402
from skillgym.loader import load_suite  # noqa: E402
from skillgym.providers.cassette import cassette_candidates  # noqa: E402
from skillgym.providers.replay import _load  # noqa: E402

JUDGE = "claude:scripted"
MODEL = "scripted"
SKILLED = ("self-load", "preloaded")  # the same answer under both: the skill's plan

# (case, check or rubric id, condition) -> (verdict or score, quotes from that answer, reason)
VERDICTS: dict[tuple[str, str, str], tuple[str | int, tuple[str, ...], str]] = {
    ("session-creation", "clean-up-judge", "none"): (
        "pass",
        ("nohup ./build.sh > build.log 2>&1 &",),
        "no terminal session is started at all, so none is left behind",
    ),
    ("session-creation", "clean-up-judge", "stale"): (
        "fail",
        ("Leave the session running afterwards",),
        "the screen session is deliberately left running",
    ),
    ("session-creation", "waits-for-the-end-judge", "none"): (
        "pass",
        ("`wait <pid>` in the same shell gives the exit code",),
        "it waits on the process itself and reads its exit code",
    ),
    ("session-creation", "waits-for-the-end-judge", "stale"): (
        "fail",
        ("sleep 5",),
        "a fixed five-second sleep, then the log is taken whatever the build's state",
    ),
    ("session-creation", "keeps-everything-judge", "none"): (
        "pass",
        ("nohup ./build.sh > build.log 2>&1 &", "`build.log` has everything it printed"),
        "stdout and stderr go to the log from the first line",
    ),
    ("session-creation", "keeps-everything-judge", "stale"): (
        "fail",
        ("screen -S build -X hardcopy build.log",),
        "hardcopy writes only the current screen",
    ),
    ("session-creation", "rubric", "none"): (
        3,
        ("`ps -p <pid>` tells you whether it is still running",),
        "three clear steps; `wait <pid>` works only from the shell that started it, which it says",
    ),
    ("session-creation", "rubric", "stale"): (
        1,
        ("sleep 5",),
        "runnable, but the fixed sleep and the session left running would surprise a teammate",
    ),
    ("interactive-cli", "wait-for-each-question-judge", "none"): (
        "pass",
        ('expect "name"  { send "alice\\r" }',),
        "expect sends each answer only once its prompt text has appeared",
    ),
    ("interactive-cli", "wait-for-each-question-judge", "stale"): (
        "fail",
        ("sleep 2",),
        "answers are typed after fixed sleeps, whether or not the question is on screen",
    ),
}
for _condition in SKILLED:
    VERDICTS |= {
        ("session-creation", "clean-up-judge", _condition): (
            "pass",
            ("scripts/cleanup.sh build` (it confirms no session is left on the socket)",),
            "the one session it starts is ended with cleanup.sh",
        ),
        ("session-creation", "waits-for-the-end-judge", _condition): (
            "pass",
            ("Wait for the end with a deadline rather than a fixed sleep",),
            "exit-status.sh returns as soon as the build exits",
        ),
        ("session-creation", "keeps-everything-judge", _condition): (
            "pass",
            ("Save everything it printed, scrollback included",),
            "capture-pane -S - starts at the first line of the history",
        ),
        ("session-creation", "rubric", _condition): (
            4,
            ("Check on it any time",),
            "numbered, complete steps with the commands to run, from start to cleanup",
        ),
        ("interactive-cli", "wait-for-each-question-judge", _condition): (
            "pass",
            ("wait-for.sh install 'port' 30`, then",),
            "each send-keys follows a wait for that question's text",
        ),
    }


def _answer(verdict: str | int, quotes: tuple[str, ...], reason: str) -> str:
    head = {"score": verdict} if isinstance(verdict, int) else {"verdict": verdict}
    return json.dumps({**head, "evidence": list(quotes), "reason": reason, "confidence": 0.9})


def main() -> int:
    parser = argparse.ArgumentParser(description="write the suite's synthetic judge verdicts")
    parser.add_argument("--list", action="store_true", help="print what would be written, write nothing")
    args = parser.parse_args()
    suite = load_suite(SUITE)
    store = VerdictStore(cassettes=verdicts_dir(SUITE), cache=None, record=True)
    wanted = set(VERDICTS)
    for case in suite.cases:
        if not case.judged and not case.rubric:
            continue
        task = task_text(case)
        notes = judge_notes(case, [])
        for condition in case.conditions:
            own, shared = cassette_candidates(
                SUITE,
                provider="claude",
                model=MODEL,
                lane=case.lane,
                case=case.id,
                condition=condition,
                trial=1,
            )
            with tempfile.TemporaryDirectory() as scratch:
                _meta, trace = _load(own if own.exists() else shared, Path(scratch) / "stdout.txt")
            material = trial_material(trace, workspace=None).text
            questions = [
                (c.id, check_prompt(task=task, expectation=c.expectation, material=material, notes=notes))
                for c in case.judged
            ]
            questions += [
                (
                    r.id,
                    rubric_prompt(task=task, rubric=r.text, points=r.points, material=material, notes=notes),
                )
                for r in case.rubric
            ]
            for ident, prompt in questions:
                slot = (case.id, ident, condition)
                if slot not in VERDICTS:
                    raise SystemExit(f"no scripted verdict for {slot}: add one to VERDICTS")
                wanted.discard(slot)
                verdict, quotes, reason = VERDICTS[slot]
                flat = " ".join(material.split()).lower()
                missing = [q for q in quotes if " ".join(q.split()).lower() not in flat]
                if missing:
                    raise SystemExit(f"{slot}: quotes not in the answer: {missing}")
                key = question_key(JUDGE, prompt)
                if args.list:
                    print(f"{case.id} {ident} {condition} -> {key[:16]}.json")
                    continue
                store.keep(
                    StoredAnswer(
                        key=key,
                        judge=JUDGE,
                        model=MODEL,
                        prompt_version=JUDGE_PROMPT_VERSION,
                        raw_answer=_answer(verdict, quotes, reason),
                        recorded_at=1764460800.0,  # fixed, so regenerating changes no byte
                    )
                )
    if wanted:
        raise SystemExit(f"verdicts for checks the suite no longer has: {sorted(wanted)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
