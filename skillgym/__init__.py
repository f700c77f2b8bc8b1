"""skillgym: measure how well coding agents use a skill."""

from __future__ import annotations

from .authoring import AssertionsBuilder as AssertionsBuilder
from .authoring import DogfoodBuilder as DogfoodBuilder
from .authoring import ExecutionBuilder as ExecutionBuilder
from .authoring import PromptBuilder as PromptBuilder
from .authoring import ProofBundleBuilder as ProofBundleBuilder
from .authoring import ReportBuilder as ReportBuilder
from .authoring import StepBuilder as StepBuilder
from .authoring import WorkflowBuilder as WorkflowBuilder
from .authoring import anti_pattern as anti_pattern
from .authoring import condition as condition
from .authoring import dogfood_case as dogfood_case
from .authoring import execution_case as execution_case
from .authoring import gate as gate
from .authoring import judged_by as judged_by
from .authoring import prompt_case as prompt_case
from .authoring import replace_default_conditions as replace_default_conditions
from .authoring import secret as secret
from .authoring import skill as skill
from .authoring import trials as trials
from .authoring import workspace_preset as workspace_preset
from .custom_verifier import VerifierContext as VerifierContext
from .errors import CollectionError as CollectionError
from .errors import DefinitionError as DefinitionError
from .errors import RecorderClosedError as RecorderClosedError
from .errors import SkillgymError as SkillgymError
from .errors import UsageError as UsageError
from .fingerprint import fingerprint as fingerprint
from .model import AntiPatternRule as AntiPatternRule
from .model import ArtifactExists as ArtifactExists
from .model import ArtifactRequirement as ArtifactRequirement
from .model import Budget as Budget
from .model import Case as Case
from .model import Command as Command
from .model import CommandCheck as CommandCheck
from .model import Condition as Condition
from .model import CustomVerifier as CustomVerifier
from .model import DogfoodCase as DogfoodCase
from .model import ExecutionCase as ExecutionCase
from .model import FileContains as FileContains
from .model import FileExists as FileExists
from .model import FixtureLogContains as FixtureLogContains
from .model import JudgedCheck as JudgedCheck
from .model import NoLiveSessions as NoLiveSessions
from .model import Pattern as Pattern
from .model import PromptCase as PromptCase
from .model import ReportRequirement as ReportRequirement
from .model import Rubric as Rubric
from .model import SkillInstall as SkillInstall
from .model import TrialPolicy as TrialPolicy
from .model import WorkflowCheck as WorkflowCheck
from .model import WorkspacePreset as WorkspacePreset
from .results import CheckOutcome as CheckOutcome

__version__ = "0.1.0"

__all__ = (
    "AntiPatternRule",
    "ArtifactExists",
    "ArtifactRequirement",
    "AssertionsBuilder",
    "Budget",
    "Case",
    "CheckOutcome",
    "CollectionError",
    "Command",
    "CommandCheck",
    "Condition",
    "CustomVerifier",
    "DefinitionError",
    "DogfoodBuilder",
    "DogfoodCase",
    "ExecutionBuilder",
    "ExecutionCase",
    "FileContains",
    "FileExists",
    "FixtureLogContains",
    "JudgedCheck",
    "NoLiveSessions",
    "Pattern",
    "PromptBuilder",
    "PromptCase",
    "ProofBundleBuilder",
    "RecorderClosedError",
    "ReportBuilder",
    "ReportRequirement",
    "Rubric",
    "SkillInstall",
    "SkillgymError",
    "StepBuilder",
    "TrialPolicy",
    "UsageError",
    "VerifierContext",
    "WorkflowBuilder",
    "WorkflowCheck",
    "WorkspacePreset",
    "__version__",
    "anti_pattern",
    "condition",
    "dogfood_case",
    "execution_case",
    "fingerprint",
    "gate",
    "judged_by",
    "prompt_case",
    "replace_default_conditions",
    "secret",
    "skill",
    "trials",
    "workspace_preset",
)
