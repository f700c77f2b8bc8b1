"""What a judge reads of one trial: the answer, the commands with their output, named files, within a budget.

The budget is fixed and documented (README, "Judged checks"): the final answer keeps up to
``ANSWER_BUDGET`` characters, the commands and their outputs ``COMMANDS_BUDGET`` together (each output
``OUTPUT_BUDGET``), the named files ``FILES_BUDGET`` together (each ``FILE_BUDGET``). A cut keeps the head
and the tail of the text and says, in the material itself, how many characters it left out, so the judge
knows it is not seeing everything.

Blindness: the material never names the condition, and holds the skill's text only when the expectation
is about the skill (it names the skill, or says "skill"): the same text for every condition, so it cannot
tell the judge which condition a trial ran under.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Final

from ..model import Data
from ..trace import Trace

ANSWER_BUDGET: Final = 12_000
COMMANDS_BUDGET: Final = 12_000
OUTPUT_BUDGET: Final = 1_500
FILES_BUDGET: Final = 16_000
FILE_BUDGET: Final = 8_000
SKILL_BUDGET: Final = 8_000
NOTES_BUDGET: Final = 4_000  # the case's grader notes, shown beside the material as the reference
_HEAD_SHARE: Final = 2 / 3  # a cut keeps more of the start (the setup) than of the end (the conclusion)
_ABOUT_SKILLS = re.compile(r"\bskills?\b|SKILL\.md", re.IGNORECASE)


class Material(Data, frozen=True, kw_only=True):
    """One trial's material as the judge sees it: ``text`` is what the prompt shows, ``cuts`` what was cut."""

    text: str
    cuts: tuple[str, ...] = ()


def cut(text: str, budget: int, *, what: str, cuts: list[str]) -> str:
    """``text`` within ``budget`` characters: its head and tail around a note of what was left out."""
    if len(text) <= budget:
        return text
    left_out = len(text) - budget
    head = int(budget * _HEAD_SHARE)
    tail = budget - head
    cuts.append(f"{what}: {left_out} of {len(text)} characters cut")
    note = f"\n[... {left_out} characters of {what} cut by skillgym's judge budget ...]\n"
    return text[:head] + note + (text[-tail:] if tail else "")


def about_skill(expectation: str, skill_names: Sequence[str]) -> bool:
    """Whether ``expectation`` is about the skill itself, so the judge may read the skill's text."""
    if _ABOUT_SKILLS.search(expectation):
        return True
    lowered = expectation.casefold()
    return any(name.casefold() in lowered for name in skill_names if name)


TRIAL_DIR_SHOWN: Final = "<trial-dir>"


def trial_material(
    trace: Trace,
    *,
    workspace: str | None,
    files: Sequence[str] = (),
    skill_text: str = "",
    trial_dir: str | None = None,
) -> Material:
    """The material of one trial: final answer, commands with outputs, ``files`` read from ``workspace``.

    ``skill_text`` is given only when the expectation is about the skill (see ``about_skill``). A named
    file that is missing or unreadable is shown as such: its absence is evidence too. ``trial_dir``, the
    trial's folder, is shown as ``<trial-dir>`` wherever it occurs: its path names the condition.
    """
    if trial_dir:
        return _hidden(
            trial_material(trace, workspace=workspace, files=files, skill_text=skill_text), trial_dir
        )
    cuts: list[str] = []
    parts = [
        "## Final answer",
        cut(
            trace.final_text.strip() or "(no final answer)", ANSWER_BUDGET, what="the final answer", cuts=cuts
        ),
    ]
    commands = _commands(trace, cuts)
    if commands:
        parts += ["## Commands run (in order, with exit code and output)", commands]
    if files:
        parts += ["## Named files", _files(files, workspace, cuts)]
    if skill_text:
        parts += ["## The skill's text", cut(skill_text, SKILL_BUDGET, what="the skill's text", cuts=cuts)]
    return Material(text="\n\n".join(parts), cuts=tuple(cuts))


def answer_material(trace: Trace, *, trial_dir: str | None = None) -> Material:
    """Only the final answer and the commands: what a blind pairwise comparison shows of one side."""
    return trial_material(trace, workspace=None, trial_dir=trial_dir)


def _hidden(material: Material, trial_dir: str) -> Material:
    text = material.text
    for form in {trial_dir, os.path.realpath(trial_dir)}:
        text = text.replace(form, TRIAL_DIR_SHOWN)
    return Material(text=text, cuts=material.cuts)


def _commands(trace: Trace, cuts: list[str]) -> str:
    lines: list[str] = []
    for n, call in enumerate(trace.tool_calls, start=1):
        if call.command is None:
            continue
        code = "?" if call.exit_code is None else str(call.exit_code)
        output = cut(call.output.strip(), OUTPUT_BUDGET, what=f"the output of command {n}", cuts=cuts)
        lines.append(
            f"$ {call.command}\n[exit {code}]\n{output}" if output else f"$ {call.command}\n[exit {code}]"
        )
    if not lines:
        return ""
    return cut("\n\n".join(lines), COMMANDS_BUDGET, what="the commands", cuts=cuts)


def _files(files: Sequence[str], workspace: str | None, cuts: list[str]) -> str:
    shown: list[str] = []
    for name in files:
        shown.append(f"### {name}\n{_read(name, workspace, cuts)}")
    return cut("\n\n".join(shown), FILES_BUDGET, what="the named files", cuts=cuts)


def _read(name: str, workspace: str | None, cuts: list[str]) -> str:
    if workspace is None:
        return "(not available: the trial kept no workspace)"
    root = os.path.realpath(workspace)
    path = os.path.realpath(os.path.join(root, name))
    if os.path.commonpath([root, path]) != root:
        return "(not shown: the path leaves the workspace)"
    try:
        with open(path, "rb") as handle:
            raw = handle.read(FILE_BUDGET * 4 + 1)
    except FileNotFoundError:
        return "(this file does not exist)"
    except IsADirectoryError:
        return "(a directory, not a file)"
    except OSError as exc:
        return f"(unreadable: {exc.strerror or exc})"
    if b"\0" in raw[:4096]:
        return f"(a binary file of {os.path.getsize(path)} bytes)"
    text = raw.decode("utf-8", errors="replace")
    if len(raw) > FILE_BUDGET * 4:
        text += "\n[... the rest of the file was not read ...]"
    return cut(text, FILE_BUDGET, what=f"file {name}", cuts=cuts)
