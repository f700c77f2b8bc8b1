"""Grading: each lane's strict pass rule and continuous score, from a case, a trace and its trial."""

from __future__ import annotations

from .antipatterns import DEFAULT_RULES as DEFAULT_RULES
from .antipatterns import effective_rules as effective_rules
from .antipatterns import scan_commands as scan_commands
from .antipatterns import scan_text as scan_text
from .context import GradeContext as GradeContext
from .grader import grade as grade
from .negation import FLIP_VERBS as FLIP_VERBS
from .negation import NEGATORS as NEGATORS
from .patterns import PatternError as PatternError
from .patterns import PatternMatch as PatternMatch
from .patterns import find_all as find_all
from .patterns import find_forbidden as find_forbidden
from .rules import PASS_RULES as PASS_RULES
from .skills import select_skills as select_skills
from .verifiers import run_verifier as run_verifier
from .verifiers import run_verifiers as run_verifiers

__all__ = (
    "DEFAULT_RULES",
    "FLIP_VERBS",
    "NEGATORS",
    "PASS_RULES",
    "GradeContext",
    "PatternError",
    "PatternMatch",
    "effective_rules",
    "find_all",
    "find_forbidden",
    "grade",
    "run_verifier",
    "run_verifiers",
    "scan_commands",
    "scan_text",
    "select_skills",
)
