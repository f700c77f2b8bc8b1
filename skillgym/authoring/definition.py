"""Case definitions: ``with prompt_case(id) as c:`` or ``@prompt_case`` compiles and registers a case."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Generic, TypeVar, overload

import msgspec

from ..errors import DefinitionError
from ..fingerprint import fingerprint
from ..model import Case
from ..registry import current_registry
from .base import CaseBuilder
from .checks import check_id
from .dogfood import DogfoodBuilder
from .execution import ExecutionBuilder
from .prompt import PromptBuilder
from .recorder import caller_origin

_B = TypeVar("_B", bound=CaseBuilder)
_F = TypeVar("_F", bound=Callable[..., object])


class CaseDefinition(Generic[_B]):
    """One case to define: ``with ... as c:`` (``c`` is the lane's builder), or decorate ``def build(c):``.

    Both forms end in the same finalize: compile, validate, fingerprint and register. When the body raises,
    nothing is registered and the exception propagates unchanged. Either way the builder is then closed.
    """

    def __init__(self, builder_type: type[_B], case_id: str, origin: str) -> None:
        self._builder_type = builder_type
        self._case_id = case_id
        self._origin = origin
        self._builder: _B | None = None

    @property
    def case_id(self) -> str:
        return self._case_id

    def __enter__(self) -> _B:
        return self._start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        builder = self._builder
        if builder is None:
            raise RuntimeError("CaseDefinition.__exit__ called without __enter__")
        if exc_type is not None:
            builder._close(discard=True)
            return
        finalize(builder)

    def __call__(self, func: _F) -> _F:
        """Call ``func`` at once with a fresh builder, finalize the case, and return ``func`` unchanged."""
        builder = self._start()
        try:
            func(builder)
        except BaseException:
            builder._close(discard=True)
            raise
        finalize(builder)
        return func

    def _start(self) -> _B:
        if self._builder is not None:
            lane = self._builder_type.lane
            raise DefinitionError(
                f"{lane}_case({self._case_id!r}) from {self._origin} was already used; a definition makes "
                f"one case: call {lane}_case(...) again for the next one",
                case_id=self._case_id,
                origin=caller_origin(),
            )
        self._builder = self._builder_type(self._case_id, self._origin)
        return self._builder


def finalize(builder: CaseBuilder) -> Case:
    """Compile and validate the builder, set the fingerprint, register the case; the builder ends closed."""
    try:
        case = builder._compile()
        registry = current_registry()
        case = msgspec.structs.replace(case, fingerprint=fingerprint(case, secrets=registry.secrets))
        registry.add_case(case)
    finally:
        builder._close()
    return case


def _define(builder_type: type[_B], target: str | _F) -> CaseDefinition[_B] | _F:
    origin = caller_origin()
    if callable(target):
        name = getattr(target, "__name__", "")
        case_id = check_id(
            name.replace("_", "-"), what="case id (from the function name)", case_id=None, origin=origin
        )
        return CaseDefinition(builder_type, case_id, origin)(target)
    case_id = check_id(target, what="case id", case_id=None, origin=origin)
    return CaseDefinition(builder_type, case_id, origin)


@overload
def prompt_case(case_id: str, /) -> CaseDefinition[PromptBuilder]: ...
@overload
def prompt_case(case_id: _F, /) -> _F: ...
def prompt_case(case_id: str | _F, /) -> CaseDefinition[PromptBuilder] | _F:
    """A prompt case: does the agent pick the right skill and plan the right steps (text only)."""
    return _define(PromptBuilder, case_id)


@overload
def execution_case(case_id: str, /) -> CaseDefinition[ExecutionBuilder]: ...
@overload
def execution_case(case_id: _F, /) -> _F: ...
def execution_case(case_id: str | _F, /) -> CaseDefinition[ExecutionBuilder] | _F:
    """An execution case: the agent performs a task in a workspace; verifiers check the real effects."""
    return _define(ExecutionBuilder, case_id)


@overload
def dogfood_case(case_id: str, /) -> CaseDefinition[DogfoodBuilder]: ...
@overload
def dogfood_case(case_id: _F, /) -> _F: ...
def dogfood_case(case_id: str | _F, /) -> CaseDefinition[DogfoodBuilder] | _F:
    """A dogfood case: exploratory QA that leaves a proof bundle and a report, graded for evidence."""
    return _define(DogfoodBuilder, case_id)
