"""Why a run's trials errored, grouped by error class and message, for the lines a run ends with."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from .results import TrialResult

TOP: Final = 5
_MAX_MESSAGE: Final = 240


def error_reasons(results: Iterable[TrialResult], *, top: int = TOP) -> list[str]:
    """Lines naming the ``top`` commonest (error class, message) pairs, each with its count and a trial.

    A message is grouped with its trial's own names taken out (``<case>``, ``<condition>``), so one
    problem that every trial of a suite hits is one line. Most frequent first, ties in the order the trials
    are given; empty when no trial errored.
    """
    groups: dict[tuple[str, str], list[str]] = {}
    for result in results:
        if result.status == "errored":
            key = (result.error_class or "error", generic_message(result))
            groups.setdefault(key, []).append(result.id.key)
    if not groups:
        return []
    ranked = sorted(groups.items(), key=lambda item: -len(item[1]))  # stable: ties keep their order
    total = sum(len(keys) for keys in groups.values())
    lines = [f"why {total} trial(s) errored:"]
    for (error_class, message), keys in ranked[:top]:
        if len(message) > _MAX_MESSAGE:
            message = message[: _MAX_MESSAGE - 3] + "..."
        example = keys[0] if len(keys) == 1 else f"{keys[0]} and {len(keys) - 1} more"
        lines.append(f"  {len(keys)} x {error_class}: {message or '(no message)'} ({example})")
    if len(ranked) > top:
        rest = sum(len(keys) for _, keys in ranked[top:])
        lines.append(f"  ... {len(ranked) - top} other reason(s) for {rest} trial(s): see report.md")
    return lines


def generic_message(result: TrialResult) -> str:
    """The error message on one line, with the trial's key, case id and condition as placeholders.

    The case id is replaced wherever it stands alone; the condition, often an everyday word (``none``),
    only inside a path or quotes (``stubs/x/none.md``, ``'none'``).
    """
    text = " ".join((result.error_message or "").split())
    trial = result.id
    text = text.replace(trial.key, "<trial>")
    text = re.sub(rf"(?<![\w.-]){re.escape(trial.case_id)}(?![\w-])", "<case>", text)
    return re.sub(rf"(?<=[/'\"]){re.escape(trial.condition)}(?=[/'\".])", "<condition>", text)
