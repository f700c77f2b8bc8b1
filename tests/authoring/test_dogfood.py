"""Tests for the dogfood lane builder: bundle settings, proof-bundle and report sugar, verifiers."""

from __future__ import annotations

import re

import msgspec
import pytest

from skillgym.authoring import DogfoodBuilder, ProofBundleBuilder, ReportBuilder, dogfood_case
from skillgym.errors import DefinitionError
from skillgym.fingerprint import fingerprint
from skillgym.model import (
    ArtifactRequirement,
    Budget,
    DogfoodCase,
    NoLiveSessions,
    Pattern,
    ProofBundle,
    ReportRequirement,
)
from skillgym.registry import Registry, use_registry

from .support import at


def _minimal(c: DogfoodBuilder) -> None:
    c.category("qa")
    c.task("explore the app")
    with c.report() as r:
        r.title()


def _dogfood(build: object) -> DogfoodCase:
    with use_registry(Registry()) as reg:
        with dogfood_case("d") as c:
            c.category("qa")
            c.task("explore the app")
            build(c)  # type: ignore[operator]
        (case,) = reg.cases
    assert isinstance(case, DogfoodCase)
    return case


def test_full_dogfood_case_compiles_to_the_exact_struct() -> None:
    with use_registry(Registry()) as reg:
        with dogfood_case("exploratory-qa") as c:  # @case
            c.category("qa")
            c.fixture("hello-prompt")
            c.task("Explore hello-prompt and leave a proof bundle")
            c.bundle_path("proof/bundle")
            c.bundle_requirement("a snapshot after each input", "a report.md")
            c.validation_profile("interactive-renderer")
            c.pass_threshold(0.75)
            c.taxonomy("focus/input", "rendering")
            with c.proof_bundle() as b:
                b.requires_screenshot().requires_notes()
            with c.report() as r:
                r.title()  # @title
                r.reproduction_steps()  # @steps
                r.findings_with_severity()  # @findings
                r.evidence_references()  # @evidence
            with c.assertions() as a:
                a.no_live_sessions()  # @sessions
            c.artifact("recording", "*.cast")  # @artifact
        (case,) = reg.cases
    expected = DogfoodCase(
        id="exploratory-qa",
        category="qa",
        fixture="hello-prompt",
        task="Explore hello-prompt and leave a proof bundle",
        budget=Budget(timeout_s=600.0, max_turns=30),
        bundle_path="proof/bundle",
        bundle_requirements=("a snapshot after each input", "a report.md"),
        validation_profile="interactive-renderer",
        pass_threshold=0.75,
        taxonomy=("focus/input", "rendering"),
        proof_bundle=ProofBundle(screenshot=True, notes=True),
        report_requirements=(
            ReportRequirement(
                id="title",
                description="a title heading",
                required_patterns=(Pattern(regex=r"^\s*#\s+\S", flags="im"),),
                origin=at("title"),
            ),
            ReportRequirement(
                id="reproduction-steps",
                description="numbered steps that reproduce the behaviour",
                section="Reproduction steps",
                required_patterns=(Pattern(regex=r"^\s*1[.)]\s", flags="im"),),
                origin=at("steps"),
            ),
            ReportRequirement(
                id="findings",
                description="each finding with its severity",
                section="Findings",
                required_patterns=(Pattern(regex=r"\b(?:critical|high|medium|low)\b", flags="i"),),
                origin=at("findings"),
            ),
            ReportRequirement(
                id="evidence",
                description="references to evidence files in the bundle",
                section="Evidence",
                required_patterns=(Pattern(regex=r"\S+\.(?:png|svg|cast|txt|json|md|log)\b", flags="i"),),
                origin=at("evidence"),
            ),
        ),
        verifiers=(NoLiveSessions(id="no-live-sessions-1", origin=at("sessions")),),
        artifacts=(
            ArtifactRequirement(artifact="recording", path_patterns=("*.cast",), origin=at("artifact")),
        ),
        origin=at("case"),
    )
    # Where each call was made is kept apart (see test_origins_name_each_call); it is no part of the case.
    assert msgspec.structs.replace(case, origins={}) == msgspec.structs.replace(
        expected, fingerprint=fingerprint(expected)
    )
    assert case.fingerprint == fingerprint(msgspec.structs.replace(case, origins={}))


def test_defaults() -> None:
    case = _dogfood(_report_title)
    assert case.bundle_path == "bundle"
    assert case.validation_profile == "contract-reporting"
    assert case.pass_threshold == 0.6
    assert case.proof_bundle == ProofBundle()
    assert case.budget == Budget(timeout_s=600.0, max_turns=30)


def _report_title(c: DogfoodBuilder) -> None:
    with c.report() as r:
        r.title()


def test_report_sugar_defaults_match_real_report_text() -> None:
    case = _dogfood(
        lambda c: _with_report(
            c, lambda r: r.title().reproduction_steps().findings_with_severity().evidence_references()
        )
    )
    report = (
        "# Paste drops characters\n\n## Reproduction steps\n  1. start\n2) type\n\n"
        "- High: lost input\nsee shots/after.png"
    )
    for requirement in case.report_requirements:
        (pattern,) = requirement.required_patterns
        flags = (re.I if "i" in pattern.flags else 0) | (re.M if "m" in pattern.flags else 0)
        assert re.search(pattern.regex, report, flags), requirement.id
        assert not re.search(pattern.regex, "nothing to see here", flags), requirement.id


def _with_report(c: DogfoodBuilder, build: object) -> None:
    with c.report() as r:
        build(r)  # type: ignore[operator]


def test_section_and_sugar_overrides() -> None:
    case = _dogfood(
        lambda c: _with_report(
            c,
            lambda r: (
                r.section(
                    "Expected vs actual",
                    r"expected",
                    re.compile("actual", re.M),
                    forbidden=["TODO"],
                    required=False,
                )
                .section("Checklist", id="check-list", description="pass/fail list")
                .title(patterns=[r"^# Bug:"], required=False)
            ),
        )
    )
    first, second, third = (msgspec.structs.replace(r, origin="") for r in case.report_requirements)
    assert first == ReportRequirement(
        id="expected-vs-actual",
        required=False,
        section="Expected vs actual",
        required_patterns=(Pattern(regex="expected", flags="i"), Pattern(regex="actual", flags="m")),
        forbidden_patterns=(Pattern(regex="TODO", flags="i"),),
    )
    assert second == ReportRequirement(id="check-list", description="pass/fail list", section="Checklist")
    assert third == ReportRequirement(
        id="title",
        description="a title heading",
        required=False,
        required_patterns=(Pattern(regex="^# Bug:"),),
    )


def test_report_section_cannot_require_and_forbid_the_same_pattern() -> None:
    with use_registry(Registry()), dogfood_case("d") as c:
        _minimal(c)
        with c.report() as r:
            with pytest.raises(DefinitionError) as info:
                r.section("Findings", "severity", forbidden=["severity"])  # @clash
            r.section("Findings", "severity")
    assert info.value.origin == at("clash")
    assert "report section 'Findings' both requires and forbids 'severity'" in str(info.value)


def test_raw_report_requirement_on_the_case_and_in_the_block() -> None:
    one = ReportRequirement(id="one", section="One")
    two = ReportRequirement(id="two", section="Two", origin="given.py:9")
    with use_registry(Registry()) as reg:
        with dogfood_case("d") as c:
            c.category("qa")
            c.task("explore")
            c.raw_report_requirement(one)  # @one
            with c.report() as r:
                r.raw(two)
        (case,) = reg.cases
    assert case.report_requirements == (msgspec.structs.replace(one, origin=at("one")), two)  # type: ignore[union-attr]


def test_raw_report_requirement_rejects_other_types() -> None:
    with use_registry(Registry()), dogfood_case("d") as c:
        _minimal(c)
        with pytest.raises(DefinitionError, match=r"expected a skillgym\.model\.ReportRequirement"):
            c.raw_report_requirement("Title")  # type: ignore[arg-type]


def test_proof_bundle_flags_merge_across_blocks() -> None:
    def build(c: DogfoodBuilder) -> None:
        with c.proof_bundle() as b:
            b.requires_recording()
        with c.proof_bundle() as b:
            b.requires_manifest()

    case = _dogfood(build)
    assert case.proof_bundle == ProofBundle(recording=True, manifest=True)
    assert case.report_requirements == ()


def test_artifact_alone_is_enough_evidence() -> None:
    case = _dogfood(lambda c: c.artifact("notes"))
    assert [a.artifact for a in case.artifacts] == ["notes"]


def test_workflow_sugar_is_available_in_dogfood() -> None:
    def build(c: DogfoodBuilder) -> None:
        _report_title(c)
        with c.workflow() as w:
            w.create_session().destroy()

    case = _dogfood(build)
    assert [w.id for w in case.workflow] == ["create-session", "destroy"]
    assert all(not w.required for w in case.workflow)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.bundle_path("/tmp/bundle"), "bundle path '/tmp/bundle' is absolute"),
        (lambda c: c.bundle_path("../bundle"), "bundle path '../bundle' climbs out with '..'"),
        (lambda c: c.bundle_path(""), "bundle path is empty"),
        (lambda c: c.pass_threshold(1.5), "pass threshold must be between 0 and 1, got 1.5"),
        (lambda c: c.pass_threshold(-0.1), "pass threshold must be a number at least 0"),
        (lambda c: c.validation_profile("strict"), "unknown validation profile 'strict'"),
        (lambda c: c.bundle_requirement(), "c.bundle_requirement() needs at least one text"),
        (lambda c: c.taxonomy(), "c.taxonomy() needs at least one label"),
    ],
)
def test_bad_dogfood_arguments(call: object, message: str) -> None:
    with use_registry(Registry()), pytest.raises(DefinitionError) as info:
        _dogfood(call)
    assert message in str(info.value)


def test_builder_types_are_exported_for_annotations() -> None:
    def bundle(b: ProofBundleBuilder) -> None:
        b.requires_notes()

    def report(r: ReportBuilder) -> None:
        r.title()

    def build(c: DogfoodBuilder) -> None:
        with c.proof_bundle() as b:
            bundle(b)
        with c.report() as r:
            report(r)

    case = _dogfood(build)
    assert case.proof_bundle.notes
    assert case.report_requirements[0].id == "title"


def test_raw_report_requirement_turns_str_patterns_into_patterns() -> None:
    given = ReportRequirement(id="sev", required_patterns=("severity",), origin="given.py:2")  # type: ignore[arg-type]
    with use_registry(Registry()) as reg:
        with dogfood_case("d") as c:
            c.category("qa")
            c.task("explore")
            c.raw_report_requirement(given)
        (case,) = reg.cases
    assert case.report_requirements == (  # type: ignore[union-attr]
        ReportRequirement(id="sev", required_patterns=(Pattern(regex="severity"),), origin="given.py:2"),
    )
