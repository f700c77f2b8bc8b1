"""The Agent Skills eval format both ways: ``skillgym import evals`` and ``skillgym export skill-creator``."""

from __future__ import annotations

from .importer import Imported as Imported
from .importer import import_evals as import_evals
from .schema import AgentEval as AgentEval
from .schema import EvalSet as EvalSet
from .schema import EvalsFormatError as EvalsFormatError
from .schema import TriggerQuery as TriggerQuery
from .schema import TriggerSet as TriggerSet
from .schema import read_eval_file as read_eval_file

__all__ = (
    "AgentEval",
    "EvalSet",
    "EvalsFormatError",
    "Imported",
    "TriggerQuery",
    "TriggerSet",
    "import_evals",
    "read_eval_file",
)
