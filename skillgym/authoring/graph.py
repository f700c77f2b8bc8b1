"""Whole-case checks run at finalize: unique ids, and workflow dependencies that exist and never loop."""

from __future__ import annotations

import difflib
from collections.abc import Container, Sequence

from ..errors import DefinitionError
from ..model import WorkflowCheck


def free_step_id(stem: str, taken: Container[str]) -> str:
    """``stem`` when no step has it yet, else the first free one of ``stem-2``, ``stem-3``, ..."""
    ident, n = stem, 1
    while ident in taken:
        n += 1
        ident = f"{stem}-{n}"
    return ident


def free_verifier_id(stem: str, taken: Container[str]) -> str:
    """The first free one of ``stem-1``, ``stem-2``, ..."""
    n = 1
    while f"{stem}-{n}" in taken:
        n += 1
    return f"{stem}-{n}"


def check_unique(items: Sequence[tuple[str, str]], *, what: str, case_id: str) -> None:
    """``items`` are ``(id, origin)`` pairs; the second use of an id is the error, naming both places."""
    seen: dict[str, str] = {}
    for ident, origin in items:
        if ident in seen:
            raise DefinitionError(
                f"duplicate {what} {ident!r}: first defined at {seen[ident]}, again here; rename one of them "
                "(or pass id=... to choose another)",
                case_id=case_id,
                origin=origin,
            )
        seen[ident] = origin


def check_workflow(checks: Sequence[WorkflowCheck], *, case_id: str) -> None:
    """Step ids are unique, every ``depends_on`` names a step of the case, and no dependency loops."""
    by_id = {c.id: c for c in checks}
    if len(by_id) < len(checks):
        check_unique([(c.id, c.origin) for c in checks], what="step id", case_id=case_id)
    # When every step depends only on steps recorded before it (the usual case), there is no cycle.
    earlier: set[str] = set()
    in_order = True
    for check in checks:
        for dep in check.depends_on:
            if dep not in earlier:
                in_order = False
            if dep not in by_id:
                close = difflib.get_close_matches(dep, list(by_id), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                known = ", ".join(by_id)
                raise DefinitionError(
                    f"step {check.id!r} depends on unknown step {dep!r}{hint}; known steps: {known}; "
                    "fix the id in s.after(...) / depends_on=",
                    case_id=case_id,
                    origin=check.origin,
                )
        earlier.add(check.id)
    cycle = None if in_order else _find_cycle(checks)
    if cycle is not None:
        raise DefinitionError(
            f"workflow steps depend on each other in a cycle: {' -> '.join(cycle)}; remove one of these "
            "s.after(...) / depends_on links",
            case_id=case_id,
            origin=by_id[cycle[0]].origin,
        )


def _find_cycle(checks: Sequence[WorkflowCheck]) -> list[str] | None:
    """The first dependency cycle met walking steps in registration order, as ``[a, b, a]``."""
    edges = {c.id: c.depends_on for c in checks}
    done: set[str] = set()
    for start in edges:
        if start in done:
            continue
        # Iterative depth-first walk; ``path`` is the current chain, ``on_path`` its members.
        path: list[str] = [start]
        on_path = {start}
        stack = [iter(edges[start])]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                finished = path.pop()
                on_path.discard(finished)
                done.add(finished)
                continue
            if nxt in on_path:
                return [*path[path.index(nxt) :], nxt]
            if nxt in done:
                continue
            path.append(nxt)
            on_path.add(nxt)
            stack.append(iter(edges[nxt]))
    return None
