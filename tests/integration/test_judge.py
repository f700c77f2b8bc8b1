"""The judge end to end: the real Claude Code and Codex CLIs in judge mode against the scripted server.

The agent is the stub provider (canned answers, no model request), so every request the server sees
comes from the judge; the server plays the judge's answers: pass, fail, malformed, a refusal, HTTP errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from skillgym.judge.pairwise import pair_order
from tests.conftest import run_dirs, run_files, write_suite

from .model_server import Fail, ModelServer, Say, Usage
from .support import ANTHROPIC_KEY, OPENAI_KEY, agent_env, leaked, skillgym

pytestmark = pytest.mark.integration

MODEL = "judge-scripted"
EXPECTATION = "the answer explains that yield makes the function lazy"
ANSWER = "Yield turns the function into a generator: it is lazy and computes values on demand."
BASELINE_ANSWER = "Yield returns a value."
JUDGE_USAGE = Usage(input=900, output=60, cache_read=100, cache_write=10)

SUITE = {
    "suite.py": """
        from skillgym import skill

        skill("pyhelp", "skills/pyhelp")
    """,
    "skills/pyhelp/SKILL.md": """
        ---
        name: pyhelp
        description: Explains Python. Use it for questions about Python.
        ---
        Explain generators by their laziness.
    """,
    "cases.py": f"""
        from skillgym import prompt_case

        with prompt_case("lazy") as c:
            c.category("explain")
            c.prompt("What does yield do in Python?")
            c.expect_skill(None)
            with c.step("explains") as s:
                s.judge({EXPECTATION!r})
    """,
    "stubs/lazy/none.md": BASELINE_ANSWER,
    "stubs/lazy/preloaded.md": ANSWER,
}


def _verdict(verdict: str, evidence: list[str], reason: str = "checked") -> Say:
    text = json.dumps({"verdict": verdict, "evidence": evidence, "reason": reason, "confidence": 0.9})
    return Say(text=text, usage=JUDGE_USAGE)


PASS = _verdict("pass", ["it is lazy and computes values on demand"], "it says the function is lazy")
FAIL = _verdict("fail", [], "nothing about laziness")


@pytest.fixture
def claude_env(claude_cli: Path, model_server: ModelServer) -> dict[str, str]:
    return agent_env(
        SKILLGYM_CLAUDE=str(claude_cli), ANTHROPIC_BASE_URL=model_server.url, ANTHROPIC_API_KEY=ANTHROPIC_KEY
    )


@pytest.fixture
def codex_env(codex_cli: Path, model_server: ModelServer) -> dict[str, str]:
    return agent_env(
        SKILLGYM_CODEX=str(codex_cli),
        SKILLGYM_CODEX_BASE_URL=f"{model_server.url}/v1",
        OPENAI_API_KEY=OPENAI_KEY,
    )


def _suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "evals", SUITE)


def _judge_run(
    tmp_path: Path, env: dict[str, str], judge: str, *, condition: str = "preloaded", output: str = "runs"
) -> tuple[dict[str, Any], dict[str, Any], Path]:
    suite = tmp_path / "evals" if (tmp_path / "evals").is_dir() else _suite(tmp_path)
    done = skillgym(
        "run",
        "--suite",
        str(suite),
        "--provider",
        "stub",
        "--condition",
        condition,
        "--judge",
        judge,
        "--judge-cache",
        str(tmp_path / "judge-cache"),
        "--output",
        str(tmp_path / output),
        cwd=tmp_path,
        env=env,
    )
    # 3: every trial errored (a grader-error is not the agent's doing), so the run is inconclusive
    assert done.returncode in (0, 1, 3), done.stdout + done.stderr
    (result_path,) = run_files(tmp_path / output, "trials/**/result.json")
    result = json.loads(result_path.read_text())
    judged = json.loads((result_path.parent / "judge.json").read_text())
    return result, judged, result_path.parent


def _check(result: dict[str, Any]) -> dict[str, Any]:
    (check,) = [c for c in result["grade"]["checks"] if c["kind"] == "judge"]
    return check


@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_a_pass_verdict_passes_with_quoted_evidence_usage_apart_and_no_tools(
    cli: str, tmp_path: Path, model_server: ModelServer, request: pytest.FixtureRequest
) -> None:
    env = request.getfixturevalue(f"{cli}_env")
    model_server.script([PASS])
    result, judged, trial_dir = _judge_run(tmp_path, env, f"{cli}:{MODEL}")
    assert result["status"] == "passed", result
    check = _check(result)
    assert check["id"] == "explains-judge" and check["passed"] and check["required"]
    assert check["expectation"] == EXPECTATION
    assert check["evidence"] == "it is lazy and computes values on demand"
    assert check["message"] == "it says the function is lazy"
    (record,) = judged["records"]
    assert record["source"] == "judge" and record["judge"] == f"{cli}:{MODEL}"
    assert record["prompt_version"] and len(record["input_digest"]) == 64
    assert json.loads(record["raw_answer"])["verdict"] == "pass"
    # The judge's tokens are its own: the stub agent reported none, and they never mix.
    assert result["usage"] is None
    assert result["judge_usage"]["input"] == 900 and result["judge_usage"]["output"] == 60
    assert result["judge_usage"]["total"] == 900 + 60 + 100 + 10
    report = json.loads(run_files(tmp_path / "runs", "report.json")[0].read_text())
    assert report["judge"]["usage"]["total"] == 1070 and report["tokens"] is None
    (asked,) = model_server.requests
    sent = json.dumps(asked.body)
    assert EXPECTATION in sent and "yield" in sent.lower()
    # Blind: the condition's name and the skill's text never reach the judge.
    assert "preloaded" not in sent and "Explain generators by their laziness" not in sent
    assert _offered_tools(cli, asked.body) == []
    assert leaked(ANTHROPIC_KEY if cli == "claude" else OPENAI_KEY, trial_dir.parents[5]) == []


@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_the_case_grader_notes_reach_the_judge_as_its_reference(
    cli: str, tmp_path: Path, model_server: ModelServer, request: pytest.FixtureRequest
) -> None:
    env = request.getfixturevalue(f"{cli}_env")
    notes = "A good answer says the body runs only when the caller iterates the generator."
    cases = SUITE["cases.py"].replace(
        "c.expect_skill(None)", f"c.expect_skill(None)\n            c.grader_notes({notes!r})"
    )
    write_suite(tmp_path / "evals", {**SUITE, "cases.py": cases})
    model_server.script([PASS])
    result, judged, _ = _judge_run(tmp_path, env, f"{cli}:{MODEL}")
    assert result["status"] == "passed", result
    (asked,) = model_server.requests
    sent = json.dumps(asked.body)
    assert "What a good result looks like" in sent and notes in sent and EXPECTATION in sent
    assert judged["records"][0]["material_cuts"] == []


def _offered_tools(cli: str, body: dict[str, Any]) -> list[str]:
    """Names of the tools the CLI offered its model: judge mode must offer none that acts."""
    names = [t.get("name") or t.get("type") for t in body.get("tools") or []]
    if cli == "codex":  # its one tool no flag turns off asks the user, which headless exec cannot do
        return [n for n in names if n != "request_user_input"]
    return names


@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_a_fail_verdict_fails_the_trial_and_the_second_grading_asks_nobody(
    cli: str, tmp_path: Path, model_server: ModelServer, request: pytest.FixtureRequest
) -> None:
    env = request.getfixturevalue(f"{cli}_env")
    model_server.script([FAIL])
    result, judged, _ = _judge_run(tmp_path, env, f"{cli}:{MODEL}")
    assert result["status"] == "failed" and result["error_class"] is None
    assert _check(result)["message"] == "nothing about laziness"
    assert judged["records"][0]["source"] == "judge"
    assert len(model_server.requests) == 1
    # Graded again: the verdict comes from the cache; the server sees no request at all.
    model_server.script([])
    again, judged_again, _ = _judge_run(tmp_path, env, f"{cli}:{MODEL}", output="again")
    assert model_server.requests == []
    assert again["status"] == "failed"
    assert judged_again["records"][0]["source"] == "cache"
    assert again["judge_usage"] is None  # a cached answer costs nothing in this run


def test_the_judge_s_time_is_its_own_not_the_agent_s(
    tmp_path: Path, model_server: ModelServer, request: pytest.FixtureRequest
) -> None:
    env = request.getfixturevalue("claude_env")
    model_server.script([msgspec.structs.replace(PASS, delay_s=3.0)])
    result, _, _ = _judge_run(tmp_path, env, f"claude:{MODEL}")
    assert result["status"] == "passed"
    # The stub agent answers at once; the judge took over 3 s, and that is judge_s, not duration_s.
    assert result["judge_s"] >= 3.0
    assert result["duration_s"] < 1.5
    assert result["finished_at"] - result["started_at"] >= result["duration_s"] + 3.0


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (Say(text="It looks fine to me, I would say it passes."), "the judge's answer holds no JSON object"),
        (Say(text='{"verdict": "maybe", "evidence": []}'), '\'verdict\' must be "pass" or "fail"'),
        (Say(text="I can't help with grading this material."), "the judge refused to grade"),
        (
            _verdict("pass", ["a quote the material never had"]),
            "the judge said pass but quoted no evidence found in the material",
        ),
    ],
)
@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_an_undecided_judge_is_a_grader_error_never_a_pass(
    cli: str,
    answer: Say,
    problem: str,
    tmp_path: Path,
    model_server: ModelServer,
    request: pytest.FixtureRequest,
) -> None:
    env = request.getfixturevalue(f"{cli}_env")
    model_server.script([answer])
    result, judged, _ = _judge_run(tmp_path, env, f"{cli}:{MODEL}")
    assert result["status"] == "errored" and result["error_class"] == "grader-error", result
    assert problem in result["error_message"]
    check = _check(result)
    assert not check["passed"] and check["message"].startswith("the judge could not decide")
    assert judged["records"][0]["verdict"]["decided"] is False
    # An answer that could not be read is not cached: the next grading asks again.
    model_server.script([PASS])
    again, _, _ = _judge_run(tmp_path, env, f"{cli}:{MODEL}", output="again")
    assert again["status"] == "passed" and len(model_server.requests) == 1


@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_an_http_error_of_the_judge_is_a_grader_error(
    cli: str, tmp_path: Path, model_server: ModelServer, request: pytest.FixtureRequest
) -> None:
    env = request.getfixturevalue(f"{cli}_env")
    model_server.script([Fail(status=500, message="overloaded", kind="api_error")] * 12)
    result, judged, _ = _judge_run(tmp_path, env, f"{cli}:{MODEL}")
    assert result["status"] == "errored" and result["error_class"] == "grader-error", result
    assert "the judge gave no answer" in result["error_message"]
    assert "500" in result["error_message"]
    assert judged["records"][0]["source"] is None


def test_pairwise_swaps_the_order_and_counts_only_agreeing_verdicts(
    tmp_path: Path, model_server: ModelServer, claude_env: dict[str, str]
) -> None:
    suite = _suite(tmp_path)
    # The agent run: both conditions, graded by the stub judge (no request to the server).
    done = skillgym(
        "run",
        "--suite",
        str(suite),
        "--provider",
        "stub",
        "--condition",
        "none",
        "--condition",
        "preloaded",
        "--judge",
        "stub",
        "--trials",
        "2",
        "--output",
        str(tmp_path / "runs"),
        cwd=tmp_path,
        env=claude_env,
    )
    assert done.returncode in (0, 1), done.stderr
    assert model_server.requests == []
    (run_dir,) = run_dirs(tmp_path / "runs")
    # Trial 1: both orders prefer the preloaded answer. Trial 2: both orders say "A" (position bias).
    first = [pair_order(7, "lazy", "preloaded", "stub", n) for n in (1, 2)]
    mine = ("A" if first[0] else "B", "B" if first[0] else "A")
    script = [_winner(mine[0]), _winner(mine[1]), _winner("A"), _winner("A")]
    model_server.script(script)
    compared = skillgym(
        "judge",
        "compare",
        str(run_dir),
        "--judge",
        f"claude:{MODEL}",
        "--seed",
        "7",
        "--no-judge-cache",  # both trials' pairs are the same question: a cache would answer the second
        cwd=tmp_path,
        env=claude_env,
    )
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert len(model_server.requests) == 4
    shown = [_answers(r.body) for r in model_server.requests]
    for n, pair in enumerate(((shown[0], shown[1]), (shown[2], shown[3]))):
        one, two = pair
        assert two == (one[1], one[0])  # the second asking swaps A and B
        assert one[0] == (ANSWER if first[n] else BASELINE_ANSWER)
    pairwise = json.loads((run_dir / "pairwise.json").read_text())
    (row,) = pairwise["cases"]
    assert (row["wins"], row["ties"], row["losses"], row["swap_disagreements"]) == (1, 1, 0, 1)
    (condition,) = pairwise["conditions"]
    assert condition["condition"] == "preloaded" and condition["position_bias"] == 0.5
    assert "swap disagreed in 1 of 2 pairs" in compared.stdout
    report = (run_dir / "report.md").read_text()
    assert "### Blind pairwise comparison" in report


def _winner(side: str) -> Say:
    return Say(text=json.dumps({"winner": side, "reason": "compared", "confidence": 0.8}), usage=JUDGE_USAGE)


def _answers(body: dict[str, Any]) -> tuple[str, str]:
    text = json.dumps(body["messages"])
    decoded = json.loads(text)
    flat = json.dumps(decoded)
    a_at, b_at = flat.index("# Answer A"), flat.index("# Answer B")
    a = ANSWER if ANSWER in flat[a_at:b_at] else BASELINE_ANSWER
    b = ANSWER if ANSWER in flat[b_at:] else BASELINE_ANSWER
    return a, b


def test_calibration_figures_with_a_real_cli_judge(
    tmp_path: Path, model_server: ModelServer, claude_env: dict[str, str]
) -> None:
    suite = _suite(tmp_path)
    labelled = tmp_path / "labelled.jsonl"
    items = [
        ("a", "the answer names the port", "Server listening on port 3000", "pass"),
        ("b", "the answer names the port", "Server started", "fail"),
        ("c", "the answer waits for output", "sleep 5 && run tests", "fail"),
        ("d", "the answer waits for output", "wait-for 'READY>' then run tests", "pass"),
    ]
    labelled.write_text(
        "".join(
            json.dumps({"id": i, "expectation": e, "material": m, "label": lab}) + "\n"
            for i, e, m, lab in items
        )
    )
    # The judge gets a and c right, calls b a pass (wrong), and answers d with no JSON (undecided).
    model_server.script(
        [
            _verdict("pass", ["listening on port 3000"]),
            _verdict("pass", ["Server started"]),
            _verdict("fail", []),
            Say(text="hmm"),
        ]
    )
    done = skillgym(
        "judge",
        "check",
        str(labelled),
        "--suite",
        str(suite),
        "--judge",
        f"claude:{MODEL}",
        "--no-judge-cache",
        "--json",
        cwd=tmp_path,
        env=claude_env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(done.stdout)
    assert figures["accuracy"] == 0.5
    assert figures["confusion"] == {
        "pass_pass": 1,
        "pass_fail": 0,
        "fail_pass": 1,
        "fail_fail": 1,
        "pass_undecided": 1,
        "fail_undecided": 0,
    }
    # Kappa over the three decided items: observed 2/3, chance 2/3*1/3 + 1/3*2/3 = 4/9, kappa 0.4.
    assert figures["kappa"] == 0.4
    assert [(m["id"], m["judged"]) for m in figures["misses"]] == [("b", "pass"), ("d", "undecided")]
    assert figures["judge_calls"] == 4
    stored = json.loads((suite / "judge" / "calibration.json").read_text())
    assert stored["entries"][0]["judge"] == f"claude:{MODEL}" and stored["entries"][0]["kappa"] == 0.4
