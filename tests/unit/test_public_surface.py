"""The curated public surface, and the README stating the same pass rules the graders implement."""

from __future__ import annotations

import re

import pytest

import skillgym
from skillgym.grading.rules import PASS_RULES
from tests.conftest import REPO

EXPECTED = {
    "prompt_case",
    "secret",
    "gate",
    "execution_case",
    "dogfood_case",
    "skill",
    "trials",
    "TrialPolicy",
    "condition",
    "judged_by",
    "workspace_preset",
    "anti_pattern",
    "PromptBuilder",
    "ExecutionBuilder",
    "DogfoodBuilder",
    "StepBuilder",
    "WorkflowBuilder",
    "AssertionsBuilder",
    "ProofBundleBuilder",
    "ReportBuilder",
    "SkillgymError",
    "DefinitionError",
    "CollectionError",
    "RecorderClosedError",
    "UsageError",
    "fingerprint",
    "__version__",
    "AntiPatternRule",
    "ArtifactExists",
    "ArtifactRequirement",
    "Budget",
    "Case",
    "Command",
    "CommandCheck",
    "Condition",
    "CustomVerifier",
    "DogfoodCase",
    "ExecutionCase",
    "FileContains",
    "FileExists",
    "FixtureLogContains",
    "NoLiveSessions",
    "Pattern",
    "PromptCase",
    "ReportRequirement",
    "SkillInstall",
    "WorkflowCheck",
    "WorkspacePreset",
    "JudgedCheck",
    "Rubric",
    "CheckOutcome",
    "VerifierContext",
    "replace_default_conditions",
}


def test_all_is_the_curated_tuple_and_every_name_resolves() -> None:
    assert isinstance(skillgym.__all__, tuple)
    assert set(skillgym.__all__) == EXPECTED
    for name in skillgym.__all__:
        assert getattr(skillgym, name) is not None


def test_package_is_typed() -> None:
    assert (REPO / "skillgym" / "py.typed").exists()


def test_readme_states_each_lane_pass_rule_verbatim() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- pass-rules.*?-->\n(.*?)<!-- /pass-rules -->", readme, re.S)
    assert block is not None, "README lost its pass-rules block"
    lines = block.group(1).strip().splitlines()
    assert lines == [f"- **{lane}**: {PASS_RULES[lane]}" for lane in ("prompt", "execution", "dogfood")]


def test_cli_help_lists_the_registered_providers_and_reporters(capsys: pytest.CaptureFixture[str]) -> None:
    from skillgym.cli import main
    from skillgym.plugins import PROVIDERS, REPORTERS

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"provider: {', '.join(PROVIDERS.names())} (default replay)" in text
    always = "(the event log and report.json/.md/.html are always written)"
    assert f"add a reporter: {', '.join(REPORTERS.names())} {always}" in text


def test_readme_states_the_environment_layering_order() -> None:
    from skillgym.workspaces import ENV_ORDER_TEXT

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- env-order.*?-->\n(.*?)\n<!-- /env-order -->", readme, re.S)
    assert block is not None, "README lost its env-order block"
    assert block.group(1) == ENV_ORDER_TEXT


def test_run_help_groups_its_flags_into_sections(capsys: pytest.CaptureFixture[str]) -> None:
    from skillgym.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = capsys.readouterr().out
    titles = [
        "selection (what runs):",
        "agent (who answers):",
        "trials (how they run):",
        "output (what is written and shown):",
        "baseline:",
        "token snapshots (at the end of the run):",
    ]
    at = [text.index(title) for title in titles]
    assert at == sorted(at)
    # Each flag sits in its section: --trials after "trials", before "output".
    assert at[2] < text.index("  --trials") < at[3] and at[3] < text.index("  --reporter ") < at[4]
