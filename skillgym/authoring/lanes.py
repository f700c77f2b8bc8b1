"""Lane misuse: a method of another lane's builder becomes an error that says which lane and what to do."""

from __future__ import annotations

import difflib

from ..errors import DefinitionError
from ..model import LANES, Lane
from .assertions import AssertionsBuilder
from .recorder import Recorder, caller_origin
from .report import ProofBundleBuilder, ReportBuilder
from .steps import StepBuilder
from .workflow import WorkflowBuilder

# Lane builders by lane, filled as the lane modules define their classes.
_LANE_BUILDERS: dict[str, type[Recorder]] = {}
# Nested recorders and the block that records their methods, for "c.file_exists() goes inside ..." hints.
_NESTED: tuple[tuple[type[Recorder], str], ...] = (
    (StepBuilder, "`with c.step(id) as s:`"),
    (WorkflowBuilder, "`with c.workflow() as w:`"),
    (AssertionsBuilder, "`with c.assertions() as a:`"),
    (ReportBuilder, "`with c.report() as r:`"),
    (ProofBundleBuilder, "`with c.proof_bundle() as b:`"),
)
# What to do instead, where a better fix exists than "define the case in the other lane".
_FIXES: dict[str, str] = {
    "prompt": "say what the agent must do with c.task(...)",
    "task": "give the agent's request with c.prompt(...)",
    "must_mention": (
        "check the commands the agent ran with a step (`with c.step(id) as s: s.must_mention(...)`) and real "
        "effects with `with c.assertions() as a:`"
    ),
    "must_not_mention": (
        "forbid commands with a step (`with c.step(id) as s: s.must_not_mention(...)`) or c.anti_pattern(...)"
    ),
    "assertions": (
        "a prompt case is graded on the answer text: use c.must_mention(...) or `with c.step(id) as s:`; "
        "write an execution_case to check real effects"
    ),
    "workflow": "a prompt case has no commands to check: describe the plan with `with c.step(id) as s:`",
}


class LaneError(DefinitionError, AttributeError):
    """A method of another lane's builder was called (an AttributeError too, so ``hasattr`` stays False)."""


def register_lane(lane: Lane, builder: type[Recorder]) -> None:
    """Record ``builder`` as the builder of ``lane``, for the misuse messages of the other lanes."""
    _LANE_BUILDERS[lane] = builder


def no_such_method(builder: Recorder, lane: Lane, name: str) -> AttributeError:
    """The error for ``builder.<name>``: another lane's method, a nested block's method, or a plain typo."""
    kind = type(builder).__name__
    if name.startswith("_"):
        return AttributeError(f"{kind!r} object has no attribute {name!r}", name=name, obj=builder)
    at = caller_origin()
    lanes = [
        other for other in LANES if other != lane and callable(getattr(_LANE_BUILDERS.get(other), name, None))
    ]
    if lanes:
        constructors = " or ".join(f"{other}_case({builder.case_id!r})" for other in lanes)
        fix = _FIXES.get(name) or f"define the case with {constructors} instead, or remove the call"
        return LaneError(
            f"c.{name}() belongs to {' and '.join(lanes)} cases, not to {lane} cases; {fix}",
            case_id=builder.case_id,
            origin=at,
        )
    for nested, block in _NESTED:
        if callable(getattr(nested, name, None)):
            return LaneError(
                f"c.{name}() is not a case method: it is recorded inside {block}",
                case_id=builder.case_id,
                origin=at,
            )
    public = [n for n in dir(type(builder)) if not n.startswith("_")]
    close = difflib.get_close_matches(name, public, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return AttributeError(f"{kind!r} object has no attribute {name!r}{hint}", name=name, obj=builder)
