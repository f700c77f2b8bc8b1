"""The dogfood lane builder: exploratory QA that leaves a proof bundle and a report, graded for evidence."""

from __future__ import annotations

from typing import ClassVar

from ..errors import DefinitionError
from ..model import Budget, DogfoodCase, Lane, ProofBundle, ReportRequirement, ValidationProfile
from .checks import check_choice, check_number, check_relative_path, check_text
from .effects import EffectsBuilder
from .graph import check_unique
from .report import ProofBundleBuilder, ReportBuilder, raw_report_requirement

VALIDATION_PROFILES: tuple[ValidationProfile, ...] = ("contract-reporting", "interactive-renderer")


class DogfoodBuilder(EffectsBuilder):
    """Records a dogfood case: task, bundle, proof-bundle and report requirements, verifiers, artifacts."""

    lane: ClassVar[Lane] = "dogfood"
    default_budget: ClassVar[Budget] = Budget(timeout_s=600.0, max_turns=30)

    def __init__(self, case_id: str, opened_at: str) -> None:
        super().__init__(case_id, opened_at)
        self._bundle_path: str = "bundle"
        self._bundle_requirements: list[str] = []
        self._validation_profile: ValidationProfile = "contract-reporting"
        self._pass_threshold: float = 0.6
        self._taxonomy: list[str] = []
        self._bundles: list[ProofBundleBuilder] = []
        self._report_parts: list[ReportBuilder | ReportRequirement] = []

    def bundle_path(self, path: str) -> None:
        """Where the agent writes the proof bundle, relative to the trial's output directory."""
        at = self._use("bundle_path")
        self._bundle_path = self._once(
            "c.bundle_path()",
            check_relative_path(path, what="bundle path", case_id=self._case_id, origin=at),
            at,
        )

    def bundle_requirement(self, *texts: str) -> None:
        """Plain-language requirements for the bundle, shown to the agent."""
        at = self._use("bundle_requirement")
        if not texts:
            raise DefinitionError(
                "c.bundle_requirement() needs at least one text", case_id=self._case_id, origin=at
            )
        self._bundle_requirements.extend(
            check_text(t, what="bundle requirement", case_id=self._case_id, origin=at) for t in texts
        )

    def validation_profile(self, profile: ValidationProfile) -> None:
        """How the bundle is validated: "contract-reporting" or "interactive-renderer"."""
        at = self._use("validation_profile")
        chosen = check_choice(
            profile, VALIDATION_PROFILES, what="validation profile", case_id=self._case_id, origin=at
        )
        self._validation_profile = self._once("c.validation_profile()", chosen, at)

    def pass_threshold(self, x: float) -> None:
        """The score (0 to 1) a trial must reach, on top of its required items, to pass."""
        at = self._use("pass_threshold")
        value = check_number(x, what="pass threshold", case_id=self._case_id, origin=at, inclusive=True)
        if value > 1:
            raise DefinitionError(
                f"pass threshold must be between 0 and 1, got {x!r}; write 0.75 for 75%",
                case_id=self._case_id,
                origin=at,
            )
        self._pass_threshold = self._once("c.pass_threshold()", value, at)

    def taxonomy(self, *labels: str) -> None:
        """Issue labels the report should classify its findings with (scored when given)."""
        at = self._use("taxonomy")
        if not labels:
            raise DefinitionError("c.taxonomy() needs at least one label", case_id=self._case_id, origin=at)
        for label in labels:
            text = check_text(label, what="taxonomy label", case_id=self._case_id, origin=at)
            if text not in self._taxonomy:
                self._taxonomy.append(text)

    def proof_bundle(self) -> ProofBundleBuilder:
        """Open ``with c.proof_bundle() as b:`` to say which evidence the bundle must hold."""
        at = self._use("proof_bundle")
        builder = ProofBundleBuilder(case_id=self._case_id, opened_at=at)
        self._bundles.append(builder)
        return self._open_child(builder)

    def report(self) -> ReportBuilder:
        """Open ``with c.report() as r:`` to say what the report must contain."""
        at = self._use("report")
        builder = ReportBuilder(case_id=self._case_id, opened_at=at)
        self._report_parts.append(builder)
        return self._open_child(builder)

    def raw_report_requirement(self, requirement: ReportRequirement) -> None:
        """Append a ReportRequirement Struct as given (its origin is filled in when empty)."""
        at = self._use("raw_report_requirement")
        self._report_parts.append(raw_report_requirement(requirement, case_id=self._case_id, origin=at))

    def _recorded_evidence(self) -> bool:
        reports = any(
            bool(p._recorded()) if isinstance(p, ReportBuilder) else True for p in self._report_parts
        )
        bundle = any(b._recorded() for b in self._bundles)
        return reports or bundle or bool(self._artifacts)

    def _missing(self) -> list[str]:
        missing = super()._missing()
        if not self._recorded_evidence():
            missing.append(
                "evidence to grade (add `with c.report() as r:` with r.title()..., "
                "`with c.proof_bundle() as b:` with b.requires_screenshot()..., or c.artifact(...))"
            )
        return missing

    def _build(self) -> DogfoodCase:
        requirements: list[ReportRequirement] = []
        for part in self._report_parts:
            requirements.extend(part._compile() if isinstance(part, ReportBuilder) else (part,))
        check_unique(
            [(r.id, r.origin) for r in requirements], what="report requirement id", case_id=self._case_id
        )
        bundle = ProofBundle()
        for builder in self._bundles:
            bundle = builder._compile(bundle)
        return DogfoodCase(
            id=self._case_id,
            category=self._category,
            budget=self._budget,
            task=self._task,
            fixture=self._fixture,
            bundle_path=self._bundle_path,
            bundle_requirements=tuple(self._bundle_requirements),
            validation_profile=self._validation_profile,
            proof_bundle=bundle,
            report_requirements=tuple(requirements),
            verifiers=self._compiled_verifiers(),
            artifacts=tuple(self._artifacts),
            taxonomy=tuple(self._taxonomy),
            pass_threshold=self._pass_threshold,
        )
