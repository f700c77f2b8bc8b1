"""Execution-lane grading: verifiers judge real effects; workflow and anti-patterns read the commands run."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import anyio.to_thread

from ..model import ExecutionCase
from ..results import CheckOutcome, Grade, ScoreItem
from ..trace import Trace, shell_commands
from .antipatterns import effective_rules, has_error, scan_commands
from .artifacts import evaluate_artifacts
from .context import GradeContext
from .rules import anti_pattern_reasons, requirement_reasons
from .sessions import still_running
from .skills import select_skills, skill_loaded
from .verifiers import run_verifiers
from .workflow import compliance, evaluate_workflow

__all__ = ("PROVIDER_FAILED", "efficiency", "grade_execution")

PROVIDER_FAILED: Final = "the provider did not succeed (the trial's error says why)"


def efficiency(reference_steps: int, commands: int) -> tuple[float, str]:
    """reference / max(reference, commands run); doing nothing is not efficient, so no command scores 0."""
    if commands == 0:
        return 0.0, "no command ran"
    score = reference_steps / max(reference_steps, commands)
    return score, f"{commands} command(s) run for a reference of {reference_steps}"


def _rate(name: str, outcomes: list[CheckOutcome], noun: str) -> ScoreItem | None:
    if not outcomes:
        return None
    held = sum(o.passed for o in outcomes)
    failed = ", ".join(repr(o.id) for o in outcomes if not o.passed)
    reason = f"{held}/{len(outcomes)} {noun} hold" + (f"; failed: {failed}" if failed else "")
    return ScoreItem(name=name, score=held / len(outcomes), max_score=1.0, reason=reason)


async def grade_execution(case: ExecutionCase, trace: Trace, ctx: GradeContext) -> Grade:
    """Grade an execution trial by the rule in ``PASS_RULES["execution"]``; the score only ranks."""
    commands = shell_commands(trace)
    workspace = Path(ctx.workspace)
    rules = effective_rules(ctx.suite_rules, case.anti_patterns)
    # Off the loop, and let go of when the trial is cancelled: tmux is asked whether a session the
    # commands never ended still runs (that blocks), and the commands may be long.
    findings, workflow = await anyio.to_thread.run_sync(
        lambda: (
            scan_commands(commands, rules, running=still_running(ctx)),
            # Workflow steps are scored, never gating here: the pass rule judges effects, not the route.
            evaluate_workflow(case.workflow, commands, corpus="commands", gates=False),
        ),
        abandon_on_cancel=True,
    )
    verifiers = await run_verifiers(case.verifiers, ctx)
    artifacts = await anyio.to_thread.run_sync(  # a walk of the workspace
        lambda: evaluate_artifacts(
            case.artifacts,
            workspace,
            workspace=workspace,
            not_before=ctx.agent_started_at,
            skip=(Path(ctx.fixture_log_dir),),
        ),
        abandon_on_cancel=True,
    )

    items: list[ScoreItem] = [
        ScoreItem(
            name="provider",
            score=float(ctx.provider_ok),
            max_score=1.0,
            reason="the provider succeeded" if ctx.provider_ok else PROVIDER_FAILED,
        )
    ]
    if (
        item := _rate("required-verifiers", [v for v in verifiers if v.required], "required verifiers")
    ) is not None:
        items.append(item)
    share = compliance(case.workflow, workflow)
    if share is not None:
        held = sum(o.passed for o in workflow)
        reason = f"{held}/{len(workflow)} workflow steps found in the commands run (weighted {share:.2f})"
        items.append(ScoreItem(name="workflow-compliance", score=share, max_score=1.0, reason=reason))
    errors = [f for f in findings if f.severity == "error" and not f.negated]
    items.append(
        ScoreItem(
            name="anti-pattern-avoidance",
            score=0.0 if errors else 1.0,
            max_score=1.0,
            reason=f"{len(errors)} error-level finding(s): {', '.join(sorted({f.rule_id for f in errors}))}"
            if errors
            else "no error-level anti-pattern in the commands run",
        )
    )
    if case.reference_steps is not None:
        value, reason = efficiency(case.reference_steps, len(commands))
        items.append(ScoreItem(name="efficiency", score=value, max_score=1.0, reason=reason))
    score = sum(i.score for i in items) / len(items)

    checks = (*verifiers, *artifacts, *workflow)
    passed = (
        ctx.provider_ok
        and all(v.passed for v in verifiers if v.required)
        and all(a.passed for a in artifacts if a.required)
        and not has_error(findings)
    )
    provider = () if ctx.provider_ok else (PROVIDER_FAILED,)
    reasons = () if passed else (*provider, *requirement_reasons(checks), *anti_pattern_reasons(findings))
    candidates = (*ctx.skills, *(() if case.expected_skill is None else (case.expected_skill,)))
    return Grade(
        passed=passed,
        score=score,
        items=tuple(items),
        checks=checks,
        findings=findings,
        reasons=tuple(reasons),
        selected_skills=select_skills(trace, trace.final_text, candidates),
        skill_loaded=skill_loaded(case.expected_skill, trace),
    )
