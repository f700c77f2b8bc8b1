"""The grading entry point: one call per trial, dispatched on the case's lane."""

from __future__ import annotations

from ..model import Case, DogfoodCase, ExecutionCase, PromptCase
from ..results import Grade
from ..trace import Trace
from .context import GradeContext
from .dogfood import grade_dogfood
from .execution import grade_execution
from .prompt import grade_prompt

__all__ = ("grade",)


async def grade(case: Case, trace: Trace, ctx: GradeContext) -> Grade:
    """Grade one trial of ``case`` by its lane's pass rule (``PASS_RULES``) and score.

    A requirement that fails is data in the Grade; an exception from here means the grader itself (or a
    case that bypassed validation) is broken, and the runner records it as a grader error.
    """
    match case:
        case PromptCase():
            return grade_prompt(case, trace, ctx)
        case ExecutionCase():
            return await grade_execution(case, trace, ctx)
        case DogfoodCase():
            return await grade_dogfood(case, trace, ctx)
    raise TypeError(
        f"cannot grade {type(case).__name__}: expected a PromptCase, ExecutionCase or DogfoodCase"
    )
