"""The authoring DSL: cases as ``with`` blocks or decorated builder functions, plus suite definitions."""

from __future__ import annotations

from .assertions import AssertionsBuilder as AssertionsBuilder
from .definition import dogfood_case as dogfood_case
from .definition import execution_case as execution_case
from .definition import prompt_case as prompt_case
from .dogfood import DogfoodBuilder as DogfoodBuilder
from .execution import ExecutionBuilder as ExecutionBuilder
from .prompt import PromptBuilder as PromptBuilder
from .report import ProofBundleBuilder as ProofBundleBuilder
from .report import ReportBuilder as ReportBuilder
from .steps import StepBuilder as StepBuilder
from .suite import anti_pattern as anti_pattern
from .suite import condition as condition
from .suite import gate as gate
from .suite import judged_by as judged_by
from .suite import replace_default_conditions as replace_default_conditions
from .suite import secret as secret
from .suite import skill as skill
from .suite import trials as trials
from .suite import workspace_preset as workspace_preset
from .workflow import WorkflowBuilder as WorkflowBuilder

__all__ = (
    "AssertionsBuilder",
    "DogfoodBuilder",
    "ExecutionBuilder",
    "PromptBuilder",
    "ProofBundleBuilder",
    "ReportBuilder",
    "StepBuilder",
    "WorkflowBuilder",
    "anti_pattern",
    "condition",
    "dogfood_case",
    "execution_case",
    "gate",
    "judged_by",
    "prompt_case",
    "replace_default_conditions",
    "secret",
    "skill",
    "trials",
    "workspace_preset",
)
