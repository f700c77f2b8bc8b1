"""Checker validity: the graders catch an agent that does nothing, and a cassette missing the key step.

A verifier that passes no matter what the agent did is worse than none. Each test here removes or
replaces what the agent did and expects the check that should notice to fail.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillgym.model import Suite

from .conftest import SUITE, RunSuite, needs_tmux

pytestmark = [pytest.mark.integration, needs_tmux]

NULL_AGENT = """
import json, sys
sys.stdin.read()
print(json.dumps({"type": "result", "text": "I looked at the task and did nothing."}))
"""


def test_a_null_agent_fails_every_execution_and_dogfood_case(
    suite: Suite, run_suite: RunSuite, tmp_path: Path
) -> None:
    agent = tmp_path / "null_agent.py"
    agent.write_text(NULL_AGENT)
    run = run_suite(
        "--lane", "execution", "--lane", "dogfood", "--condition", "preloaded",
        "--provider", "command", "--agent-command", f"{sys.executable} {agent}",
        "--concurrency", "8",
    )  # fmt: skip
    expected = {(c.lane, c.id, "preloaded") for c in suite.cases if c.lane != "prompt"}
    assert set(run.results) == expected
    for key, result in run.results.items():
        assert result["status"] == "failed", key  # failed on its merits, not an infrastructure error
        assert run.failed_checks(key), f"{key} failed without a failing required check"


def _edit(path: Path, edit: Callable[[str], str | None]) -> int:
    """Apply ``edit`` to every Bash command in a cassette: None drops the call and its result."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[str] = [lines[0]]
    dropped: set[str] = set()
    changed = 0
    for raw in lines[1:]:
        event: dict[str, Any] = json.loads(raw)
        content = (event.get("message") or {}).get("content") or []
        block = content[0] if isinstance(content, list) and content else {}
        if block.get("type") == "tool_use" and block.get("name") == "Bash":
            command = block["input"]["command"]
            new = edit(command)
            if new is None:
                dropped.add(block["id"])
                changed += 1
                continue
            if new != command:
                block["input"]["command"] = new
                changed += 1
        if block.get("type") == "tool_result" and block.get("tool_use_id") in dropped:
            continue
        out.append(json.dumps(event, ensure_ascii=False))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return changed


def drop(pattern: str) -> Callable[[str], str | None]:
    return lambda command: None if re.search(pattern, command) else command


def replace(pattern: str, by: str) -> Callable[[str], str | None]:
    return lambda command: re.sub(pattern, by, command)


def both(
    first: Callable[[str], str | None], then: Callable[[str], str | None]
) -> Callable[[str], str | None]:
    """``first``, then ``then`` on what it left (a dropped command stays dropped)."""
    return lambda command: None if (edited := first(command)) is None else then(edited)


# Until the session ends the recorder also samples the pane every 0.1 s, so a replay that takes longer
# than that from the reply to cleanup.sh records the reply without any stop. A recorder that samples only
# at start and at stop leaves the reply to the stop alone.
SAMPLES_ONLY_WHEN_STOPPED = replace(r"record\.sh start ", "record.sh --interval 3600 start ")


# fmt: off
MUTATIONS = [
    # (lane, case, what the edited agent skipped, the edit, the check that must catch it)
    ("execution", "hello-prompt", "ending the session", drop(r"cleanup\.sh"), "no-live-sessions-1"),
    ("execution", "hello-prompt", "sending the input", drop(r"send-keys"), "fixture-received-1"),
    ("execution", "hello-prompt", "saving the screen", drop(r"capture-pane"), "file-contains-1"),
    ("execution", "scrollback-demo", "capturing the history", replace(r" -S -", ""), "file-contains-2"),
    ("execution", "resize-demo", "resizing", drop(r"resize-window"), "resized-to-100x30"),
    ("execution", "crash-recovery", "keeping the pane", replace(r"\S*/run\.sh ", ""), "file-contains-2"),
    ("execution", "color-grid", "the screenshot", drop(r"screenshot\.sh"), "file-contains-1"),
    ("execution", "export-proof", "stopping the recorder",
     both(SAMPLES_ONLY_WHEN_STOPPED, drop(r"record\.sh stop")), "command-1"),
    ("dogfood", "exploratory-qa", "a long line", drop(r"-l 'The quick"), "fixture-received-1"),
    ("dogfood", "paste-input-repro", "a real paste", drop(r"paste-buffer"), "fixture-received-1"),
    ("dogfood", "resize-regression", "recording", drop(r"record\.sh"), "bundle-recording"),
    ("dogfood", "evidence-completeness", "the manifest", drop(r"manifest\.json"), "bundle-manifest"),
]
# fmt: on


@pytest.fixture
def suite_copy(tmp_path: Path) -> Path:
    """A copy of the example suite whose cassettes a test may edit."""
    return Path(shutil.copytree(SUITE, tmp_path / "evals", ignore=shutil.ignore_patterns("__pycache__")))


@pytest.mark.parametrize(
    ("lane", "case", "skipped", "edit", "check"), MUTATIONS, ids=[f"{m[1]}-without-{m[2]}" for m in MUTATIONS]
)
def test_a_cassette_without_the_key_step_fails_the_check_that_should_catch_it(
    run_suite: RunSuite,
    suite_copy: Path,
    lane: str,
    case: str,
    skipped: str,
    edit: Callable[[str], str | None],
    check: str,
) -> None:
    cassette = suite_copy / "cassettes/claude/scripted" / lane / case / "preloaded.jsonl"
    assert _edit(cassette, edit) > 0, f"the edit for {skipped!r} matched no command in {cassette}"
    run = run_suite("--suite", str(suite_copy), "--case", case, "--condition", "preloaded")
    key = (lane, case, "preloaded")
    assert run.results[key]["status"] == "failed", run.results[key]["grade"]
    assert check in run.failed_checks(key), run.results[key]["grade"]["reasons"]


def test_a_recorder_that_samples_only_when_stopped_still_records_the_reply(
    run_suite: RunSuite, suite_copy: Path
) -> None:
    cassette = suite_copy / "cassettes/claude/scripted/execution/export-proof/preloaded.jsonl"
    assert _edit(cassette, SAMPLES_ONLY_WHEN_STOPPED) == 1
    run = run_suite("--suite", str(suite_copy), "--case", "export-proof", "--condition", "preloaded")
    key = ("execution", "export-proof", "preloaded")
    assert run.results[key]["status"] == "passed", run.results[key]["grade"]["reasons"]


def test_a_fixed_sleep_instead_of_waiting_fails_on_the_anti_pattern(
    run_suite: RunSuite, suite_copy: Path
) -> None:
    cassette = suite_copy / "cassettes/claude/scripted/execution/hello-prompt/preloaded.jsonl"
    assert _edit(cassette, replace(r"^\S*wait-for\.sh .*$", "sleep 2")) == 2
    run = run_suite("--suite", str(suite_copy), "--case", "hello-prompt", "--condition", "preloaded")
    key = ("execution", "hello-prompt", "preloaded")
    assert run.results[key]["status"] == "failed"
    assert run.failed_checks(key) == set()  # every effect is there: only the habit is wrong
    assert run.findings(key) == {"blind-sleep"}
