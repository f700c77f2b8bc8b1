"""The whole example suite replays offline from its cassettes, and the condition comparison means something.

One replay of every lane and condition is shared by the tests here (see ``replay`` in conftest). The
cassettes are scripted (evals/cassettes/_behaviour/), so the outcome of every trial is known; these tests
pin the parts of it that make the suite worth running: the oracle passes, the baseline and the stale
guidance fail for the reasons the skill is about.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from .conftest import Run, needs_tmux

pytestmark = [pytest.mark.integration, needs_tmux]

EXECUTION_AND_DOGFOOD = ("execution", "dogfood")
# Programs these cases make exit (exit, a crash, Ctrl-C): their tmux session ends with them.
# Without the skill, only the cases that do not need it (and three the agent gets right by polling) pass.
NONE_PASSES = {
    "code-review",
    "crash-recovery",
    "documentation",
    "git-operations",
    "plain-file-edit",
    "pure-reasoning",
    "resize-demo",
    "unicode-grid",
    "web-development",
}
ENDS_BY_ITSELF = {"run-command", "crash-recovery", "interrupt-recovery"}


def test_every_trial_replays_without_errors_or_warnings(replay: Run) -> None:
    assert replay.returncode == 1, replay.stderr  # some trials fail: that is the point of the baselines
    assert len(replay.results) == 160
    statuses = Counter(r["status"] for r in replay.results.values())
    assert statuses["errored"] == 0, [k for k, r in replay.results.items() if r["status"] == "errored"]
    left = "still running when the trial ended"
    warned = {
        "/".join(k): others
        for k, r in replay.results.items()
        if (others := [w for w in r["warnings"] if not w.startswith(left)])
    }
    assert not warned, warned  # stale fingerprints or commands that behave differently on replay
    # A session left running (a tmux server and its app) is named, and only where the agent failed.
    leaving = [r for r in replay.results.values() if any(w.startswith(left) for w in r["warnings"])]
    assert leaving and all(r["status"] == "failed" for r in leaving)
    assert (replay.dir / "report.md").is_file() and (replay.dir / "report.json").is_file()


def test_preloaded_the_oracle_passes_every_case(replay: Run) -> None:
    failed = {
        k: r["grade"]["reasons"]
        for k, r in replay.results.items()
        if k[2] == "preloaded" and r["status"] != "passed"
    }
    assert not failed, failed


def test_pass_counts_per_condition_rank_the_conditions(replay: Run) -> None:
    passed = Counter(k[2] for k, r in replay.results.items() if r["status"] == "passed")
    # On a mismatch, say which trials of the odd condition went the other way and why.
    odd = {
        "/".join(k): (r.get("grade") or {}).get("reasons") or r.get("error_message")
        for k, r in replay.results.items()
        if k[2] == "none" and (r["status"] == "passed") != (k[1] in NONE_PASSES)
    }
    assert dict(passed) == {"preloaded": 40, "self-load": 36, "none": 9, "stale": 7}, odd


def test_stale_guidance_fails_every_effects_case_with_a_fixed_sleep(replay: Run) -> None:
    for key, result in replay.results.items():
        lane, _case, condition = key
        if condition != "stale" or lane not in EXECUTION_AND_DOGFOOD:
            continue
        assert result["status"] == "failed", key
        if lane == "execution":
            assert "blind-sleep" in replay.findings(key), key
        if _case not in ENDS_BY_ITSELF:  # there the session ends with the program
            assert "no-live-sessions-1" in replay.failed_checks(key), f"{key}: stale leaves sessions running"


@pytest.mark.parametrize(
    ("case", "check"),
    [
        ("hello-prompt", "no-live-sessions-1"),  # forgot to end the session
        ("scrollback-demo", "file-contains-2"),  # captured the visible screen, not the scrollback
        ("color-grid", "file-contains-3"),  # an SVG of the text, without the colours
        ("export-proof", "command-1"),  # no recorder at hand
        ("run-command", "file-contains-2"),  # the pane closed before BYE could be captured
        ("interrupt-recovery", "file-contains-1"),  # same after Ctrl-C
    ],
)
def test_the_baseline_fails_execution_cases_on_the_real_effect(replay: Run, case: str, check: str) -> None:
    key = ("execution", case, "none")
    assert replay.results[key]["status"] == "failed"
    assert check in replay.failed_checks(key)


def test_the_baseline_uses_the_default_tmux_server_and_blind_sleeps(replay: Run) -> None:
    findings = [
        f["rule_id"]
        for k, r in replay.results.items()
        if k[:1] == ("execution",) and k[2] == "none"
        for f in r["grade"]["findings"]
    ]
    assert "user-tmux-server" in findings and "blind-sleep" in findings


def test_self_load_routes_itself_with_the_skill_tool(replay: Run) -> None:
    routed = [
        r
        for k, r in replay.results.items()
        if k[2] == "self-load" and k[0] == "prompt" and k[1] != "ux-review"
    ]
    triggers = [r for r in routed if r["category"] in ("trigger", "trigger-qa", "anti-pattern")]
    assert triggers and all(r["grade"]["selected_skills"] for r in triggers)
    ux = replay.results[("prompt", "ux-review", "self-load")]
    assert ux["status"] == "failed" and ux["grade"]["selected_skills"] == ["tmux-tui"]


def test_dogfood_baselines_miss_the_evidence_the_qa_skill_asks_for(replay: Run) -> None:
    for case in ("exploratory-qa", "release-readiness", "evidence-completeness"):
        failed = replay.failed_checks(("dogfood", case, "none"))
        assert any(check.startswith("bundle-") for check in failed), (case, failed)
    paste = replay.failed_checks(("dogfood", "paste-input-repro", "none"))
    assert "fixture-received-1" in paste  # typed the text instead of a real bracketed paste


def test_every_trial_reports_token_usage(replay: Run) -> None:
    for key, result in replay.results.items():
        usage = result["usage"]
        assert usage and usage["input"] and usage["output"] and usage["cache_read"] is not None, key
        assert usage["total"] == usage["input"] + usage["output"] + usage["cache_read"] + usage["cache_write"]


def test_judged_checks_replay_from_the_suite_s_recorded_verdicts(replay: Run) -> None:
    judged = {k: r for k, r in replay.results.items() if r["paths"].get("judge")}
    assert {k[1] for k in judged} == {"session-creation", "interactive-cli"}
    for key, result in judged.items():
        records = json.loads((replay.dir / result["paths"]["judge"]).read_text())["records"]
        assert {r["source"] for r in records} == {"cassette"}, key  # no judge was asked: offline and free
        assert result["judge_usage"] is None
    # The judge agrees with the patterns where both look: the stale plan sleeps and leaves its session.
    stale = [
        c
        for c in replay.results[("prompt", "session-creation", "stale")]["grade"]["checks"]
        if c["kind"] == "judge"
    ]
    assert [c["passed"] for c in stale] == [False, False, False]
