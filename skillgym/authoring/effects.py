"""What the execution and dogfood lanes share: a task, a fixture, workflow sugar, verifiers and artifacts."""

from __future__ import annotations

from ..errors import DefinitionError
from ..model import ArtifactKind, ArtifactRequirement, JudgedCheck, Verifier
from .assertions import ARTIFACT_KINDS, AssertionsBuilder, raw_verifier
from .base import CaseBuilder
from .checks import check_choice, check_id, check_int, check_text, stamp
from .graph import check_unique
from .workflow import WorkflowBuilder


class EffectsBuilder(CaseBuilder):
    """A case where the agent really works in a workspace, judged by what it leaves behind."""

    def __init__(self, case_id: str, opened_at: str) -> None:
        super().__init__(case_id, opened_at)
        self._task: str = ""
        self._fixture: str | None = None
        self._verifier_parts: list[AssertionsBuilder | Verifier] = []
        self._verifier_ids: set[str] = set()  # every verifier id recorded so far, in any part
        self._artifacts: list[ArtifactRequirement] = []

    def task(self, text: str) -> None:
        """What the agent is asked to do."""
        at = self._use("task")
        self._task = self._once(
            "c.task()", check_text(text, what="task", case_id=self._case_id, origin=at), at
        )

    def fixture(self, name: str) -> None:
        """The program under test, ``fixtures/<name>.py`` in the suite; its own log backs a.fixture_*()."""
        at = self._use("fixture")
        self._fixture = self._once(
            "c.fixture()", check_id(name, what="fixture name", case_id=self._case_id, origin=at), at
        )

    def workflow(self) -> WorkflowBuilder:
        """Open ``with c.workflow() as w:`` to chain the steps the agent's commands should show."""
        at = self._use("workflow")
        builder = WorkflowBuilder(case_id=self._case_id, opened_at=at, step_ids=self._step_ids)
        self._workflow_parts.append(builder)
        return self._open_child(builder)

    def assertions(self) -> AssertionsBuilder:
        """Open ``with c.assertions() as a:`` to record verifiers of the trial's real effects."""
        at = self._use("assertions")
        builder = AssertionsBuilder(
            case_id=self._case_id,
            opened_at=at,
            verifier_ids=self._verifier_ids,
            fixture=lambda: self._fixture,
        )
        self._verifier_parts.append(builder)
        return self._open_child(builder)

    def artifact(
        self,
        kind: ArtifactKind,
        *path_patterns: str,
        min_count: int = 1,
        required: bool = True,
        description: str = "",
    ) -> None:
        """Evidence the agent must leave: ``min_count`` files of ``kind``, optionally matching globs."""
        at = self._use("artifact")
        self._artifacts.append(
            ArtifactRequirement(
                artifact=check_choice(
                    kind, ARTIFACT_KINDS, what="artifact kind", case_id=self._case_id, origin=at
                ),
                description=check_text(
                    description, what="description", case_id=self._case_id, origin=at, allow_empty=True
                ),
                required=bool(required),
                min_count=check_int(min_count, what="min_count", case_id=self._case_id, origin=at),
                path_patterns=tuple(
                    check_text(p, what="artifact path pattern", case_id=self._case_id, origin=at)
                    for p in path_patterns
                ),
                origin=at,
            )
        )

    def raw_verifier(self, verifier: Verifier) -> None:
        """Append a verifier Struct as given (its origin is filled in when empty)."""
        at = self._use("raw_verifier")
        checked = raw_verifier(verifier, case_id=self._case_id, origin=at)
        self._verifier_parts.append(checked)
        self._verifier_ids.add(checked.id)

    def raw_artifact_requirement(self, requirement: ArtifactRequirement) -> None:
        """Append an ArtifactRequirement Struct as given (its origin is filled in when empty)."""
        at = self._use("raw_artifact_requirement")
        if not isinstance(requirement, ArtifactRequirement):
            raise DefinitionError(
                f"expected a skillgym.model.ArtifactRequirement, got {type(requirement).__name__}",
                case_id=self._case_id,
                origin=at,
            )
        check_choice(
            requirement.artifact, ARTIFACT_KINDS, what="artifact kind", case_id=self._case_id, origin=at
        )
        self._artifacts.append(stamp(requirement, at))

    def _missing(self) -> list[str]:
        missing = super()._missing()
        if "c.task()" not in self._set_at:
            missing.append('a task (call c.task("..."))')
        return missing

    def _recorded_verifiers(self) -> list[Verifier]:
        """Verifiers recorded so far, without the checks ``_compiled_verifiers`` runs."""
        verifiers: list[Verifier] = []
        for part in self._verifier_parts:
            verifiers.extend(part._recorded() if isinstance(part, AssertionsBuilder) else (part,))
        return verifiers

    def _assertion_judged(self) -> tuple[JudgedCheck, ...]:
        """Judged checks recorded with ``a.judge()`` in the assertions blocks."""
        return tuple(
            j
            for part in self._verifier_parts
            if isinstance(part, AssertionsBuilder)
            for j in part._judged_checks()
        )

    def _compiled_verifiers(self) -> tuple[Verifier, ...]:
        verifiers: list[Verifier] = []
        for part in self._verifier_parts:
            verifiers.extend(part._compile() if isinstance(part, AssertionsBuilder) else (part,))
        check_unique([(v.id, v.origin) for v in verifiers], what="verifier id", case_id=self._case_id)
        return tuple(verifiers)
