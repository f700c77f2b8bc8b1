"""Dogfood evidence: ``c.proof_bundle()`` names the evidence to leave, ``c.report()`` the report's content."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

import msgspec

from ..errors import DefinitionError
from ..model import ProofBundle, ReportRequirement
from . import vocabulary
from .checks import (
    PatternLike,
    check_id,
    check_patterns,
    check_text,
    refuse_contradiction,
    slug,
    stamp,
    to_patterns,
)
from .recorder import Block


class ProofBundleBuilder(Block):
    """Records which kinds of evidence the proof bundle must hold."""

    def __init__(self, *, case_id: str, opened_at: str) -> None:
        super().__init__(case_id=case_id, opened_at=opened_at)
        self._flags: dict[str, bool] = {}

    def requires_screenshot(self) -> Self:
        """The bundle holds at least one screenshot."""
        self._use("requires_screenshot")
        self._flags["screenshot"] = True
        return self

    def requires_recording(self) -> Self:
        """The bundle holds at least one terminal recording."""
        self._use("requires_recording")
        self._flags["recording"] = True
        return self

    def requires_notes(self) -> Self:
        """The bundle holds the tester's notes."""
        self._use("requires_notes")
        self._flags["notes"] = True
        return self

    def requires_manifest(self) -> Self:
        """The bundle holds a manifest listing its files."""
        self._use("requires_manifest")
        self._flags["manifest"] = True
        return self

    def _recorded(self) -> bool:
        return not self._discarded and bool(self._flags)

    def _compile(self, base: ProofBundle) -> ProofBundle:
        """``base`` with this block's requirements added (unchanged when the block raised)."""
        if self._discarded:
            return base
        if not self._flags:
            raise DefinitionError(
                "the proof_bundle block requires nothing; add b.requires_screenshot() (or recording, notes, "
                "manifest) or remove the block",
                case_id=self._case_id,
                origin=self._opened_at,
            )
        return ProofBundle(
            screenshot=base.screenshot or self._flags.get("screenshot", False),
            recording=base.recording or self._flags.get("recording", False),
            notes=base.notes or self._flags.get("notes", False),
            manifest=base.manifest or self._flags.get("manifest", False),
        )


class ReportBuilder(Block):
    """Records what the dogfood report must contain; the sugar's sections and patterns come from
    ``skillgym.authoring.vocabulary.REPORT`` and every sugar method takes ``patterns=`` to replace them."""

    def __init__(self, *, case_id: str, opened_at: str) -> None:
        super().__init__(case_id=case_id, opened_at=opened_at)
        self._requirements: list[ReportRequirement] = []

    def title(self, *, patterns: Sequence[PatternLike] | None = None, required: bool = True) -> Self:
        """The report opens with a title heading."""
        return self._sugar("title", self._use("title"), patterns, required)

    def reproduction_steps(
        self, *, patterns: Sequence[PatternLike] | None = None, required: bool = True
    ) -> Self:
        """A "Reproduction steps" section with a numbered list."""
        return self._sugar("reproduction_steps", self._use("reproduction_steps"), patterns, required)

    def findings_with_severity(
        self, *, patterns: Sequence[PatternLike] | None = None, required: bool = True
    ) -> Self:
        """A "Findings" section whose findings carry a severity (critical, high, medium, low)."""
        return self._sugar("findings_with_severity", self._use("findings_with_severity"), patterns, required)

    def evidence_references(
        self, *, patterns: Sequence[PatternLike] | None = None, required: bool = True
    ) -> Self:
        """An "Evidence" section that names evidence files (png, svg, cast, txt, json, md, log)."""
        return self._sugar("evidence_references", self._use("evidence_references"), patterns, required)

    def section(
        self,
        name: str,
        *patterns: PatternLike,
        required: bool = True,
        forbidden: Sequence[PatternLike] = (),
        id: str | None = None,
        description: str = "",
    ) -> Self:
        """A section headed ``name`` holding every pattern and none of ``forbidden``."""
        at = self._use("section")
        name = check_text(name, what="report section name", case_id=self._case_id, origin=at)
        ident = (
            slug(name)
            if id is None
            else check_id(id, what="report requirement id", case_id=self._case_id, origin=at)
        )
        where = f"in report section {name!r}"
        wanted = (
            to_patterns(patterns, call="r.section()", where=where, case_id=self._case_id, origin=at)
            if patterns
            else ()
        )
        if isinstance(forbidden, str):
            forbidden = (forbidden,)
        refused = (
            to_patterns(forbidden, call="r.section()", where=where, case_id=self._case_id, origin=at)
            if forbidden
            else ()
        )
        refuse_contradiction(
            refused,
            [(p, at) for p in wanted],
            subject=f"report section {name!r}",
            case_id=self._case_id,
            origin=at,
        )
        self._requirements.append(
            ReportRequirement(
                id=ident,
                description=description,
                required=required,
                section=name,
                required_patterns=wanted,
                forbidden_patterns=refused,
                origin=at,
            )
        )
        return self

    def raw(self, requirement: ReportRequirement) -> Self:
        """Append a ReportRequirement as given (its origin is filled in when empty)."""
        at = self._use("raw")
        self._requirements.append(raw_report_requirement(requirement, case_id=self._case_id, origin=at))
        return self

    def _sugar(self, name: str, at: str, override: Sequence[PatternLike] | None, required: bool) -> Self:
        phrase = vocabulary.REPORT[name]
        if override is None:
            found = vocabulary.patterns(phrase)
        else:
            if isinstance(override, str):
                override = (override,)
            where = f"in report requirement {phrase.id!r}"
            found = to_patterns(
                override, call=f"r.{name}(patterns=...)", where=where, case_id=self._case_id, origin=at
            )
        self._requirements.append(
            ReportRequirement(
                id=phrase.id,
                description=vocabulary.describe(phrase),
                required=required,
                section=phrase.section,
                required_patterns=found,
                origin=at,
            )
        )
        return self

    def _recorded(self) -> tuple[ReportRequirement, ...]:
        return () if self._discarded else tuple(self._requirements)

    def _compile(self) -> tuple[ReportRequirement, ...]:
        """The recorded requirements (none when the block raised); an empty block is an error at its line."""
        if self._discarded:
            return ()
        if not self._requirements:
            raise DefinitionError(
                "the report block requires nothing; add r.title(), r.reproduction_steps(), r.section(...) "
                "or remove the block",
                case_id=self._case_id,
                origin=self._opened_at,
            )
        return tuple(self._requirements)


def raw_report_requirement(requirement: object, *, case_id: str, origin: str) -> ReportRequirement:
    """Check a hand-built ReportRequirement and give it the caller's origin when it has none."""
    if not isinstance(requirement, ReportRequirement):
        raise DefinitionError(
            f"expected a skillgym.model.ReportRequirement, got {type(requirement).__name__}",
            case_id=case_id,
            origin=origin,
        )
    check_id(requirement.id, what="report requirement id", case_id=case_id, origin=origin)
    where = f"in report requirement {requirement.id!r}"
    required = check_patterns(requirement.required_patterns, where=where, case_id=case_id, origin=origin)
    forbidden = check_patterns(requirement.forbidden_patterns, where=where, case_id=case_id, origin=origin)
    if required != requirement.required_patterns or forbidden != requirement.forbidden_patterns:
        # A str (or compiled re.Pattern) given for a Pattern becomes one: the grader reads .regex and .flags.
        requirement = msgspec.structs.replace(
            requirement, required_patterns=required, forbidden_patterns=forbidden
        )
    return stamp(requirement, origin)
