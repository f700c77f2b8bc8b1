"""Dogfood-lane grading: the proof bundle and the report, their evidence, and the declared checks."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import anyio.to_thread

from ..model import DogfoodCase, ReportRequirement
from ..results import CheckOutcome, Grade, ScoreItem
from ..trace import Trace, shell_commands
from ..workspaces.paths import UnsafePathError, resolve_inside
from .antipatterns import effective_rules, scan_commands
from .artifacts import ARTIFACT_EXTENSIONS, evaluate_artifacts, walk_files
from .context import GradeContext
from .execution import PROVIDER_FAILED
from .patterns import LineIndex, find_first, find_forbidden, show_pattern
from .prompt import response_text
from .report import (
    evidence_references,
    findings_lines,
    has_command,
    has_numbered_steps,
    has_outcome_statement,
    has_section,
)
from .rules import requirement_reasons
from .sessions import still_running
from .skills import select_skills, skill_loaded
from .verifiers import run_verifiers
from .workflow import evaluate_workflow

__all__ = ("REPORT_NAME", "grade_dogfood")

REPORT_NAME: Final = "report.md"
# Kinds of evidence and the extensions that carry them; "text" is a pane capture, a log or notes.
MODALITIES: Final[dict[str, tuple[str, ...]]] = {
    "screenshot": ARTIFACT_EXTENSIONS["screenshot"],
    "recording": ARTIFACT_EXTENSIONS["recording"],
    "text": ("txt", "log", "md"),
}


class _Bundle:
    """What is in the proof bundle, read once: files written since the agent started, and the report."""

    def __init__(self, case: DogfoodCase, trace: Trace, ctx: GradeContext) -> None:
        self.workspace = Path(ctx.workspace)
        self.problem = ""
        try:
            self.root: Path | None = resolve_inside(self.workspace, case.bundle_path, within="the workspace")
        except UnsafePathError as exc:
            self.root, self.problem = None, f"the bundle path {exc}"
        if self.root is not None and not self.root.is_dir():
            self.problem = f"the bundle {case.bundle_path}/ does not exist in the workspace"
            self.root = None
        self.files: list[str] = []
        if self.root is not None:
            base = self.root
            self.files = [
                p.relative_to(base).as_posix()
                for p in walk_files(base)
                if ctx.agent_started_at is None or p.stat().st_mtime >= ctx.agent_started_at
            ]
        self.report_path: Path | None = None
        if self.root is not None:
            # A report.md symlinked out of the bundle is not the agent's report.
            with contextlib.suppress(UnsafePathError):
                self.report_path = resolve_inside(self.root, REPORT_NAME, within="the bundle")
        self.has_report = self.report_path is not None and self.report_path.is_file()
        if self.has_report and self.report_path is not None:
            self.report = self.report_path.read_text(encoding="utf-8", errors="replace")
            self.report_source = f"{case.bundle_path}/{REPORT_NAME}"
        else:
            self.report = response_text(trace)
            self.report_source = "the agent's final text (no report.md in the bundle)"

    def of(self, *extensions: str) -> list[str]:
        return [f for f in self.files if Path(f).suffix.lower().lstrip(".") in extensions]

    def resolve(self, reference: str) -> Path | None:
        """The bundle file a report reference names (relative to the bundle or the workspace), if any."""
        if self.root is None:
            return None
        candidates = [reference] if os.path.isabs(reference) else [reference, reference.removeprefix("./")]
        for base in (self.root, self.workspace):
            for candidate in candidates:
                path = Path(candidate) if os.path.isabs(candidate) else base / candidate
                resolved = path.resolve()
                if resolved.is_file() and resolved.is_relative_to(self.root.resolve()):
                    return resolved
        return None


def _bundle_checks(case: DogfoodCase, bundle: _Bundle) -> list[CheckOutcome]:
    demanded = case.proof_bundle
    renderer = case.validation_profile == "interactive-renderer"
    checks: list[CheckOutcome] = []

    def missing(what: str) -> str:
        return f"{bundle.problem}, so there is no {what}" if bundle.problem else f"the bundle has no {what}"

    def add(kind: str, wanted: bool, found: Sequence[str], what: str) -> None:
        if not wanted:
            return
        message = f"{what}: {', '.join(found[:3])}" if found else missing(what)
        checks.append(
            CheckOutcome(
                id=f"bundle-{kind}", kind="bundle", required=True, passed=bool(found), message=message
            )
        )

    add(
        "screenshot",
        demanded.screenshot or renderer,
        bundle.of(*MODALITIES["screenshot"]),
        "screenshot (png, svg, jpg, jpeg, html)",
    )
    add(
        "recording",
        demanded.recording or renderer,
        bundle.of(*MODALITIES["recording"]),
        "recording (cast, webm, mp4, gif)",
    )
    notes = [f for f in bundle.of("md") if f != REPORT_NAME]
    add("notes", demanded.notes, notes, "notes (notes.md or another .md besides report.md)")
    manifest: list[str] = []
    manifest_problem = ""
    if "manifest.json" in bundle.files and bundle.root is not None:
        try:
            json.loads((bundle.root / "manifest.json").read_text(encoding="utf-8"))
            manifest = ["manifest.json"]
        except (ValueError, OSError) as exc:
            manifest_problem = f"manifest.json does not parse as JSON: {exc}"
    if demanded.manifest and manifest_problem:
        checks.append(
            CheckOutcome(
                id="bundle-manifest", kind="bundle", required=True, passed=False, message=manifest_problem
            )
        )
    else:
        add("manifest", demanded.manifest, manifest, "manifest (manifest.json that parses)")
    # The report may fall back to the final text, so its file is scored here but gated by the requirements.
    checks.append(
        CheckOutcome(
            id="bundle-report",
            kind="bundle",
            required=False,
            passed=bundle.has_report,
            message=f"{REPORT_NAME} is in the bundle" if bundle.has_report else missing(REPORT_NAME),
        )
    )
    return checks


def _requirement(requirement: ReportRequirement, report: str, index: LineIndex) -> CheckOutcome:
    problems: list[str] = []
    if requirement.section and not has_section(report, requirement.section):
        problems.append(f"no {requirement.section!r} heading")
    for pattern in requirement.required_patterns:
        if find_first(pattern, report, index=index) is None:
            problems.append(f"the report never mentions {show_pattern(pattern)}")
    for pattern in requirement.forbidden_patterns:
        used = [m for m in find_forbidden(pattern, report, index=index) if not m.negated]
        if used:
            problems.append(f"the report uses forbidden {show_pattern(pattern)} at line {used[0].line}")
    message = "; ".join(problems) if problems else "present"
    if requirement.description:
        message = f"{requirement.description}: {message}"
    return CheckOutcome(
        id=requirement.id, kind="report", required=requirement.required, passed=not problems, message=message
    )


def _report_item(case: DogfoodCase, outcomes: Sequence[CheckOutcome], source: str) -> ScoreItem | None:
    if not outcomes:
        return None
    weights = [1.0 if r.required else 0.5 for r in case.report_requirements]
    found = sum(w for w, o in zip(weights, outcomes, strict=True) if o.passed)
    missing = ", ".join(repr(o.id) for o in outcomes if not o.passed)
    reason = f"{found:g}/{sum(weights):g} weighted requirements found in {source}" + (
        f"; missing: {missing}" if missing else ""
    )
    return ScoreItem(name="report-completeness", score=found / sum(weights), max_score=1.0, reason=reason)


def _evidence_item(case: DogfoodCase, bundle: _Bundle) -> ScoreItem:
    report_file = (
        bundle.report_path.resolve() if bundle.has_report and bundle.report_path is not None else None
    )
    references: list[str] = []
    real: list[Path] = []
    dangling: list[str] = []
    for reference in evidence_references(bundle.report):
        path = bundle.resolve(reference)
        if (path is not None and path == report_file) or (
            path is None and Path(reference).name == REPORT_NAME
        ):
            continue  # the report naming itself is not evidence
        references.append(reference)
        if path is None:
            dangling.append(reference)
        else:
            real.append(path)
    share = len(real) / len(references) if references else 0.0
    # A claim is backed by what was seen: a text capture always, plus the pictures the case demands. The
    # manifest describes the bundle rather than backing a finding, so it is not a modality here.
    renderer = case.validation_profile == "interactive-renderer"
    demanded = {"text"}
    demanded |= {"screenshot"} if case.proof_bundle.screenshot or renderer else set()
    demanded |= {"recording"} if case.proof_bundle.recording or renderer else set()
    covered = {m for m in demanded for p in real if p.suffix.lower().lstrip(".") in MODALITIES[m]}
    coverage = len(covered) / len(demanded)
    parts = [f"{len(real)}/{len(references)} referenced evidence files exist in the bundle"]
    if dangling:
        parts.append(f"missing: {', '.join(dangling[:5])}")
    parts.append(f"modalities referenced: {len(covered)}/{len(demanded)} ({', '.join(sorted(demanded))})")
    return ScoreItem(
        name="evidence-quality", score=(share + coverage) / 2, max_score=1.0, reason="; ".join(parts)
    )


def _taxonomy_item(case: DogfoodCase, report: str) -> ScoreItem | None:
    if not case.taxonomy:
        return None
    lines = findings_lines(report)
    if not lines:
        return ScoreItem(name="taxonomy-use", score=0.0, max_score=1.0, reason="the report lists no findings")
    labels = [re.compile(rf"(?<!\w){re.escape(label)}(?!\w)", re.IGNORECASE) for label in case.taxonomy]
    labelled = sum(any(label.search(line) for label in labels) for line in lines)
    reason = f"{labelled}/{len(lines)} findings carry a taxonomy label"
    return ScoreItem(name="taxonomy-use", score=labelled / len(lines), max_score=1.0, reason=reason)


def _reproducibility_item(report: str) -> ScoreItem:
    cues = {
        "numbered steps": has_numbered_steps(report),
        "a concrete command or key sequence": has_command(report),
        "expected vs actual or how consistently it reproduces": has_outcome_statement(report),
    }
    missing = [name for name, ok in cues.items() if not ok]
    reason = "has " + ", ".join(cues) if not missing else f"missing {', '.join(missing)}"
    return ScoreItem(
        name="reproducibility", score=sum(cues.values()) / len(cues), max_score=1.0, reason=reason
    )


def _bundle_and_report(case: DogfoodCase, bundle: _Bundle) -> tuple[list[CheckOutcome], list[CheckOutcome]]:
    """The bundle's checks and the report's requirements of one dogfood trial."""
    index = LineIndex(bundle.report)
    report_checks = [_requirement(r, bundle.report, index) for r in case.report_requirements]
    return _bundle_checks(case, bundle), report_checks


async def grade_dogfood(case: DogfoodCase, trace: Trace, ctx: GradeContext) -> Grade:
    """Grade a dogfood trial by the rule in ``PASS_RULES["dogfood"]``."""
    # What reads the bundle, the report and the commands runs off the loop, let go of when the trial is
    # cancelled: a report or a command list may be long, and tmux is asked about sessions (that blocks).
    bundle = await anyio.to_thread.run_sync(_Bundle, case, trace, ctx, abandon_on_cancel=True)
    bundle_checks, report_checks = await anyio.to_thread.run_sync(
        _bundle_and_report, case, bundle, abandon_on_cancel=True
    )
    verifiers = await run_verifiers(case.verifiers, ctx)
    artifacts = await anyio.to_thread.run_sync(  # a walk of the bundle
        lambda: evaluate_artifacts(
            case.artifacts,
            bundle.root or Path(ctx.workspace) / case.bundle_path,
            workspace=Path(ctx.workspace),
            not_before=ctx.agent_started_at,
        ),
        abandon_on_cancel=True,
    )
    commands = shell_commands(trace)
    rules = effective_rules(ctx.suite_rules, case.anti_patterns)
    findings, workflow = await anyio.to_thread.run_sync(
        lambda: (
            scan_commands(commands, rules, running=still_running(ctx)),
            evaluate_workflow(case.workflow, commands, corpus="commands", gates=False),
        ),
        abandon_on_cancel=True,
    )

    held = sum(c.passed for c in bundle_checks)
    items = [
        ScoreItem(
            name="bundle-completeness",
            score=held / len(bundle_checks),
            max_score=1.0,
            reason=f"{held}/{len(bundle_checks)} bundle checks hold"
            + (f" ({bundle.problem})" if bundle.problem else ""),
        )
    ]
    optional = (
        _report_item(case, report_checks, bundle.report_source),
        _evidence_item(case, bundle),
        _taxonomy_item(case, bundle.report),
        _reproducibility_item(bundle.report),
    )
    items.extend(item for item in optional if item is not None)
    score = sum(i.score for i in items) / len(items)

    checks = (*bundle_checks, *report_checks, *artifacts, *verifiers, *workflow)
    threshold_ok = score >= case.pass_threshold
    passed = ctx.provider_ok and all(c.passed for c in checks if c.required) and threshold_ok
    reasons: list[str] = []
    if not passed:
        reasons.extend(() if ctx.provider_ok else (PROVIDER_FAILED,))
        reasons.extend(requirement_reasons(checks))
        if not threshold_ok:
            reasons.append(
                f"the score {score:.2f} is below the case's pass_threshold {case.pass_threshold:.2f}"
            )
    candidates = (*ctx.skills, *(() if case.expected_skill is None else (case.expected_skill,)))
    return Grade(
        passed=passed,
        score=score,
        items=tuple(items),
        checks=checks,
        findings=findings,
        reasons=tuple(reasons),
        selected_skills=select_skills(trace, trace.final_text, candidates),
        skill_loaded=skill_loaded(case.expected_skill, trace),
    )
