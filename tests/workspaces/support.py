"""Builders shared by the workspace tests."""

from __future__ import annotations

import os
from pathlib import Path

from skillgym.model import Budget, Condition, ExecutionCase, SkillInstall, Suite, WorkspacePreset
from skillgym.workspaces import TrialLayout, hermetic_env


def make_suite(root: Path) -> Suite:
    return Suite(root=str(root))


def make_case(**overrides: object) -> ExecutionCase:
    fields: dict[str, object] = {
        "id": "hello-prompt",
        "category": "session",
        "task": "say hello",
        "budget": Budget(timeout_s=30),
    }
    fields.update(overrides)
    return ExecutionCase(**fields)  # type: ignore[arg-type]


def make_condition(**overrides: object) -> Condition:
    fields: dict[str, object] = {"id": "self-load"}
    fields.update(overrides)
    return Condition(**fields)  # type: ignore[arg-type]


def make_preset(**overrides: object) -> WorkspacePreset:
    fields: dict[str, object] = {"id": "tui-smoke", "template": "templates/tui"}
    fields.update(overrides)
    return WorkspacePreset(**fields)  # type: ignore[arg-type]


def install(name: str, source: str) -> SkillInstall:
    return SkillInstall(name=name, source=source)


def trial_env(layout: TrialLayout, suite_root: Path, trial_id: str = "run-1/trial-1") -> dict[str, str]:
    return hermetic_env(
        layout,
        trial_id=trial_id,
        suite_root=suite_root,
        passthrough={},
        preset_env={},
        lane="execution",
        condition_env={},
        case_env={},
        parent={"PATH": os.environ.get("PATH", os.defpath)},
    )
