"""Golden: a few example cases compile to exactly these Structs (origins and fingerprints aside).

When one of these cases changes on purpose, update the Struct here in the same change: the diff then
shows what the agent sees and how it is graded, not just that a fingerprint moved.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from skillgym.model import (
    Budget,
    Case,
    DogfoodCase,
    ExecutionCase,
    FileContains,
    FixtureLogContains,
    NoLiveSessions,
    Pattern,
    PromptCase,
    ProofBundle,
    ReportRequirement,
    Suite,
    WorkflowCheck,
)

CONDITIONS = ("none", "self-load", "preloaded", "stale")
TAXONOMY = (
    "rendering corruption",
    "resize/layout",
    "focus/input",
    "scrollback",
    "alt-screen",
    "copy/paste",
    "performance/startup",
    "crash/recovery",
)
WAITS = r"(?:\bcapture-pane\b|\bwait[-_]?(?:for|until)\w*)"


def waits_for(text: str) -> str:
    return f"(?:{WAITS}.*{text}|{text}.*{WAITS})"


def _step(step_id: str, description: str, regex: str, after: str | None) -> WorkflowCheck:
    return WorkflowCheck(
        id=step_id,
        description=description,
        required=False,
        required_patterns=(Pattern(regex=regex),),
        depends_on=(after,) if after else (),
    )


EXPECTED: dict[str, Case] = {
    "wait-for-output": PromptCase(
        id="wait-for-output",
        category="trigger",
        expected_skill="tmux-tui",
        conditions=CONDITIONS,
        workflow=(
            WorkflowCheck(
                id="observe-readiness",
                required_patterns=(Pattern(regex="wait"), Pattern(regex="Listening on port 3000")),
                forbidden_patterns=(Pattern(regex=r"\bsleep\b"),),
            ),
        ),
        budget=Budget(timeout_s=30.0),
        prompt="I need to wait until my server prints 'Listening on port 3000' before running tests",
    ),
    "hello-prompt": ExecutionCase(
        id="hello-prompt",
        category="session",
        expected_skill="tmux-tui",
        conditions=CONDITIONS,
        workflow=(
            _step(
                "create-session",
                "start the program in a new tmux session",
                r"\btmux\b.*\bnew(?:-session)?(?:[^\w-]|$)",
                None,
            ),
            _step(
                "wait-for",
                "wait until the screen shows 'READY>' (no blind sleep)",
                waits_for("READY>"),
                "create-session",
            ),
            _step(
                "input",
                "send 'hello world' to the program",
                r"\btmux\b.*\bsend-keys\b.*hello\ world",
                "wait-for",
            ),
            _step(
                "wait-for-2",
                "wait until the screen shows 'ECHO: hello world' (no blind sleep)",
                waits_for(r"ECHO:\ hello\ world"),
                "input",
            ),
            _step("snapshot", "capture the pane's text", r"\bcapture-pane\b", "wait-for-2"),
            _step("destroy", "end the tmux session", r"\bkill-(?:session|server)\b", "snapshot"),
        ),
        budget=Budget(timeout_s=120.0, max_turns=12),
        workspace="tui-smoke",
        task=(
            "Send 'hello world' to the program, wait for its answer, save the screen to snapshot.txt, "
            "end the session"
        ),
        fixture="hello-prompt",
        verifiers=(
            FileContains(
                id="file-contains-1", path="snapshot.txt", pattern=Pattern(regex=r"ECHO:\s*hello world")
            ),
            FixtureLogContains(
                id="fixture-received-1",
                fixture="hello-prompt",
                event="input",
                pattern=Pattern(regex=r"hello\ world", flags=""),
            ),
            NoLiveSessions(id="no-live-sessions-1"),
        ),
        reference_steps=6,
    ),
    "exploratory-qa": DogfoodCase(
        id="exploratory-qa",
        category="qa",
        expected_skill="tui-qa",
        conditions=CONDITIONS,
        budget=Budget(timeout_s=600.0, max_turns=30),
        workspace="qa-lab",
        task=(
            "Explore the hello-prompt REPL as a QA engineer: try normal input, an empty line, a long line "
            "(over 80 characters), symbols such as !@#$%^&*, and 'exit'. Report every bug you find, with "
            "evidence."
        ),
        fixture="hello-prompt",
        proof_bundle=ProofBundle(screenshot=True, notes=True, manifest=True),
        report_requirements=(
            ReportRequirement(
                id="title",
                description="a title heading",
                required_patterns=(Pattern(regex=r"^\s*#\s+\S", flags="im"),),
            ),
            ReportRequirement(
                id="reproduction-steps",
                description="numbered steps that reproduce the behaviour",
                section="Reproduction steps",
                required_patterns=(Pattern(regex=r"^\s*1[.)]\s", flags="im"),),
            ),
            ReportRequirement(
                id="findings",
                description="each finding with its severity",
                section="Findings",
                required_patterns=(Pattern(regex=r"\b(?:critical|high|medium|low)\b"),),
            ),
            ReportRequirement(
                id="evidence",
                description="references to evidence files in the bundle",
                section="Evidence",
                required_patterns=(Pattern(regex=r"\S+\.(?:png|svg|cast|txt|json|md|log)\b"),),
            ),
            ReportRequirement(
                id="finds-truncation",
                section="Findings",
                required_patterns=(Pattern(regex="64|truncat|cut off|cut short"),),
            ),
        ),
        verifiers=(
            FixtureLogContains(
                id="fixture-received-1",
                description="a long line really was sent",
                fixture="hello-prompt",
                event="input",
                pattern=Pattern(regex=".{81,}", flags=""),
            ),
            FixtureLogContains(
                id="fixture-received-2",
                fixture="hello-prompt",
                event="input",
                pattern=Pattern(regex="exit", flags=""),
            ),
            NoLiveSessions(id="no-live-sessions-1"),
        ),
        taxonomy=TAXONOMY,
    ),
}


def _without_places(value: Any) -> Any:
    """The case as builtins with ``origin``, ``origins`` and ``fingerprint`` dropped at every level."""
    if isinstance(value, dict):
        dropped = ("origin", "origins", "fingerprint")
        return {k: _without_places(v) for k, v in value.items() if k not in dropped}
    if isinstance(value, (list, tuple)):
        return [_without_places(v) for v in value]
    return value


@pytest.mark.parametrize("case_id", sorted(EXPECTED))
def test_case_compiles_to_the_expected_struct(suite: Suite, case_id: str) -> None:
    (case,) = [c for c in suite.cases if c.id == case_id]
    assert type(case) is type(EXPECTED[case_id])
    assert _without_places(msgspec.to_builtins(case)) == _without_places(
        msgspec.to_builtins(EXPECTED[case_id])
    )
    assert case.origin.startswith("evals/") and len(case.fingerprint) == 64
