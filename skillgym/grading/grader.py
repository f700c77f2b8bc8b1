"""The grading entry point: one call per trial, dispatched on the case's lane."""

from __future__ import annotations

from typing import Final, assert_never

import anyio.to_thread

from ..model import AntiPatternRule, Case, DogfoodCase, ExecutionCase, PromptCase
from ..results import Grade
from ..trace import Trace
from .context import GradeContext
from .dogfood import grade_dogfood
from .execution import grade_execution
from .prompt import grade_prompt

__all__ = ("grade",)

# How many prompt cases keep their latest grade. A run schedules a case's conditions and trials next to
# each other, so a few hundred covers any concurrency; the bound keeps a long-lived process small.
_RECENT_PROMPT_GRADES: Final = 256
# A trace with this much text or more is graded in a worker thread: below it, the hand-off costs more
# than the grading (a 64 KB answer grades in about a millisecond).
OFF_LOOP_CHARS: Final = 64 * 1024


class _PromptGrade:
    """A prompt grade and everything it was computed from."""

    __slots__ = ("case", "grade", "rules", "skills", "trace")

    def __init__(
        self,
        case: PromptCase,
        trace: Trace,
        skills: tuple[str, ...],
        rules: tuple[AntiPatternRule, ...],
        grade: Grade,
    ) -> None:
        self.case, self.trace, self.skills, self.rules, self.grade = case, trace, skills, rules, grade


_recent: dict[str, _PromptGrade] = {}


def _prompt_grade(case: PromptCase, trace: Trace, ctx: GradeContext) -> Grade:
    # A prompt grade reads only the case, the trace, and the suite's skills and anti-pattern rules: not
    # the condition, the trial or any path in the context. So an equal trace of the same case object
    # (trials whose agent answered the same text) gets the grade already made, an immutable Struct.
    seen = _recent.get(case.id)
    if (
        seen is not None
        and seen.case is case
        and seen.trace == trace
        and seen.skills == ctx.skills
        and seen.rules == ctx.suite_rules
    ):
        return seen.grade
    graded = grade_prompt(case, trace, ctx)
    # Large traces are graded in worker threads, so the cache is shared: each step tolerates another's.
    _recent.pop(case.id, None)
    if len(_recent) >= _RECENT_PROMPT_GRADES:
        _recent.pop(next(iter(_recent), ""), None)
    _recent[case.id] = _PromptGrade(case, trace, ctx.skills, ctx.suite_rules, graded)
    return graded


def _material(trace: Trace) -> int:
    """How many characters grading reads at most: the answer, the messages and every tool call."""
    size = len(trace.final_text) + sum(len(m.text) for m in trace.messages)
    return size + sum(len(c.input) + len(c.output) + len(c.command or "") for c in trace.tool_calls)


async def grade(case: Case, trace: Trace, ctx: GradeContext) -> Grade:
    """Grade one trial of ``case`` by its lane's pass rule (``PASS_RULES``) and score.

    A requirement that fails is data in the Grade; an exception from here means the grader itself (or a
    case that bypassed validation) is broken, and the runner records it as a grader error.
    """
    match case:
        case PromptCase():
            if _material(trace) < OFF_LOOP_CHARS:
                return _prompt_grade(case, trace, ctx)
            # Matching is linear in the text (RE2, which lets go of the interpreter lock while it
            # matches), but a large trace still takes a while: never while the loop should start agents.
            return await anyio.to_thread.run_sync(_prompt_grade, case, trace, ctx, abandon_on_cancel=True)
        case ExecutionCase():
            return await grade_execution(case, trace, ctx)
        case DogfoodCase():
            return await grade_dogfood(case, trace, ctx)
        case _:
            assert_never(case)
