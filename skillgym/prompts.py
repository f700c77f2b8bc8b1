"""What the agent is told: the case's prompt or task, the condition's injected text, the lane's frame."""

from __future__ import annotations

from .model import Case, DogfoodCase, ExecutionCase, PromptCase

_PROMPT_FRAME = (
    "Answer in text only; do not run commands or edit files. Say which skill, if any, you would use, "
    "and list the concrete steps you would take, in order."
)
_WORK_FRAME = (
    "Work in the current directory (the workspace). Write every file you are asked to produce there, "
    "using the relative paths given. Use real commands; the results are checked on disk afterwards."
)


def build_prompt(case: Case, *, injected: str) -> str:
    """The full prompt of one trial. Grader notes are never part of it."""
    parts: list[str] = []
    if injected.strip():
        parts.append(injected.strip())
    if isinstance(case, PromptCase):
        if case.context.strip():
            parts.append(case.context.strip())
        parts += [case.prompt.strip(), _PROMPT_FRAME]
        return "\n\n".join(parts) + "\n"
    parts.append(f"Task: {case.task.strip()}")
    if case.fixture:
        # The variable, not this machine's path: a recording then replays on any checkout.
        parts.append(
            f'The program under test is started with: python3 "$SKILLGYM_FIXTURES/{case.fixture}.py"'
        )
    if isinstance(case, ExecutionCase):
        parts.append(_WORK_FRAME)
    if isinstance(case, DogfoodCase):
        parts.append(_dogfood_frame(case))
    return "\n\n".join(parts) + "\n"


def _dogfood_frame(case: DogfoodCase) -> str:
    # Where to leave things is part of the task; what a good bundle and report contain (sections,
    # taxonomy, evidence kinds) is what the skill under test teaches, so it is not spelled out here.
    lines = [
        _WORK_FRAME,
        f"Put your proof bundle in {case.bundle_path}/ with your report in {case.bundle_path}/report.md.",
    ]
    lines += [f"- {req}" for req in case.bundle_requirements]
    return "\n".join(lines)
