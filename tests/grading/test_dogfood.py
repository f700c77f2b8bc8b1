"""Tests for the dogfood lane on small proof bundles built in tmp_path."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from skillgym.grading import GradeContext, grade
from skillgym.model import (
    ArtifactRequirement,
    Budget,
    DogfoodCase,
    FixtureLogContains,
    NoLiveSessions,
    Pattern,
    ProofBundle,
    ReportRequirement,
)
from skillgym.results import Grade
from skillgym.trace import Trace

pytestmark = pytest.mark.anyio

MakeCtx = Callable[..., GradeContext]

REPORT = """\
# hello-prompt exploratory QA

## Summary
Echo works; empty input is odd.

## Reproduction steps
1. Start it: `tmux -L qa new-session -d -s app 'python3 hello-prompt.py'`
2. Send an empty line: `tmux -L qa send-keys -t app '' Enter`
3. Capture: `tmux -L qa capture-pane -p -t app > snapshots/empty.txt`

Expected: a new prompt. Actual: `ECHO: ` with nothing after it. Reproduces consistently (3/3 runs).

## Findings
- [severity: low] [focus/input] empty input echoes an empty line (evidence: snapshots/empty.txt)
- [severity: medium] [rendering corruption] prompt drawn twice after exit (evidence: snapshots/exit.svg)

## Evidence
- snapshots/empty.txt, snapshots/exit.svg, recording.cast, notes.md
"""

CASE = DogfoodCase(
    id="exploratory-qa",
    category="qa",
    task="Explore hello-prompt and leave a proof bundle in bundle/",
    fixture="hello-prompt",
    expected_skill="tui-qa",
    bundle_path="bundle",
    proof_bundle=ProofBundle(screenshot=True, notes=True, manifest=True),
    report_requirements=(
        ReportRequirement(id="title", required_patterns=(Pattern(regex=r"^\s*#\s+\S", flags="im"),)),
        ReportRequirement(
            id="reproduction-steps",
            section="Reproduction steps",
            required_patterns=(Pattern(regex=r"^\s*1[.)]\s", flags="im"),),
        ),
        ReportRequirement(
            id="findings",
            section="Findings",
            required_patterns=(Pattern(regex=r"\b(?:critical|high|medium|low)\b"),),
        ),
        ReportRequirement(id="evidence", section="Evidence", required=False),
    ),
    verifiers=(
        FixtureLogContains(
            id="fixture-received-1", fixture="hello-prompt", event="input", pattern=Pattern(regex="exit")
        ),
        NoLiveSessions(id="no-live-sessions"),
    ),
    taxonomy=("rendering corruption", "resize/layout", "focus/input", "crash/recovery"),
    budget=Budget(timeout_s=600),
)


def build_bundle(ctx: GradeContext, *, report: str | None = REPORT, skip: tuple[str, ...] = ()) -> Path:
    bundle = Path(ctx.workspace) / "bundle"
    files = {
        "snapshots/empty.txt": "READY> \nECHO: \n",
        "snapshots/exit.svg": "<svg/>",
        "recording.cast": '{"version": 2}\n',
        "notes.md": "Tried hello, empty input, exit.\n",
        "manifest.json": json.dumps({"files": ["snapshots/empty.txt"]}),
    }
    if report is not None:
        files["report.md"] = report
    for name, text in files.items():
        if name in skip:
            continue
        path = bundle / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    log = Path(ctx.fixture_log_dir) / "hello-prompt.jsonl"
    log.write_text(json.dumps({"t": 1.0, "event": "input", "text": "exit"}) + "\n", encoding="utf-8")
    return bundle


def items(result: Grade) -> dict[str, float]:
    return {i.name: i.score for i in result.items}


async def test_a_complete_bundle_passes(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    build_bundle(ctx)
    result = await grade(CASE, Trace(final_text="Report in bundle/report.md"), ctx)
    assert result.passed, result.reasons
    assert items(result) == {
        "bundle-completeness": 1.0,
        "report-completeness": 1.0,
        "evidence-quality": 1.0,
        "taxonomy-use": 1.0,
        "reproducibility": 1.0,
    }
    assert result.score == 1.0
    assert {c.id for c in result.checks if c.kind == "verifier"} == {"fixture-received-1", "no-live-sessions"}


async def test_a_missing_proof_bundle_kind_fails(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    build_bundle(ctx, skip=("snapshots/exit.svg",))
    result = await grade(CASE, Trace(), ctx)
    assert not result.passed
    assert result.reasons == (
        "required proof-bundle 'bundle-screenshot' is missing: "
        "the bundle has no screenshot (png, svg, jpg, jpeg, html)",
    )
    assert items(result)["bundle-completeness"] == pytest.approx(3 / 4)
    # The report still names the svg, which is not there: that counts against the evidence.
    assert items(result)["evidence-quality"] == pytest.approx((3 / 4 + 1 / 2) / 2)


async def test_referenced_but_missing_evidence_counts_against(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    report = REPORT + "- snapshots/ghost.png, ../outside.txt\n"
    (Path(ctx.workspace) / "outside.txt").write_text("not in the bundle", encoding="utf-8")
    build_bundle(ctx, report=report)
    result = await grade(CASE, Trace(), ctx)
    evidence = next(i for i in result.items if i.name == "evidence-quality")
    assert evidence.score == pytest.approx((4 / 6 + 1) / 2)
    assert "missing: snapshots/ghost.png, ../outside.txt" in evidence.reason
    assert result.passed  # evidence quality ranks; the score still clears the threshold


async def test_without_report_md_the_final_text_is_graded_and_said_so(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    build_bundle(ctx, report=None)
    result = await grade(CASE, Trace(final_text=REPORT), ctx)
    report_item = next(i for i in result.items if i.name == "report-completeness")
    assert "the agent's final text (no report.md in the bundle)" in report_item.reason
    assert report_item.score == 1.0
    assert items(result)["bundle-completeness"] == pytest.approx(3 / 4)
    assert result.passed


async def test_a_missing_required_section_fails_despite_a_high_score(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    build_bundle(ctx, report=REPORT.replace("## Findings", "## Observations"))
    result = await grade(CASE, Trace(), ctx)
    assert result.score >= 0.8
    assert not result.passed
    assert result.reasons == ("required report requirement 'findings' is not met: no 'Findings' heading",)


async def test_score_below_the_threshold_fails(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    build_bundle(ctx)
    strict = msgspec.structs.replace(CASE, pass_threshold=1.0)
    thin = REPORT.replace("Reproduces consistently (3/3 runs).", "").replace(
        "Expected: a new prompt. Actual:", ""
    )
    build_bundle(ctx, report=thin)
    result = await grade(strict, Trace(), ctx)
    assert not result.passed
    assert items(result)["reproducibility"] == pytest.approx(2 / 3)
    assert result.reasons == ("the score 0.93 is below the case's pass_threshold 1.00",)


async def test_required_verifiers_are_evaluated(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    build_bundle(ctx)
    (Path(ctx.fixture_log_dir) / "hello-prompt.jsonl").unlink()
    result = await grade(CASE, Trace(), ctx)
    assert not result.passed
    assert result.reasons[0].startswith(
        "required verifier 'fixture-received-1' failed: the fixture never ran"
    )


async def test_required_artifacts_are_evaluated_in_the_bundle(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    build_bundle(ctx)
    (Path(ctx.workspace) / "elsewhere.cast").write_text("{}", encoding="utf-8")
    case = msgspec.structs.replace(
        CASE,
        artifacts=(ArtifactRequirement(artifact="recording", min_count=2, description="two recordings"),),
    )
    result = await grade(case, Trace(), ctx)
    assert not result.passed
    assert result.reasons == (
        "required artifact 'artifact-recording' is missing: two recordings: "
        "found 1 recording (cast, webm, mp4, gif) file(s), need 2: recording.cast",
    )


async def test_interactive_renderer_always_needs_screenshot_and_recording(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    build_bundle(ctx, skip=("recording.cast",))
    case = msgspec.structs.replace(
        CASE, validation_profile="interactive-renderer", proof_bundle=ProofBundle()
    )
    result = await grade(case, Trace(), ctx)
    assert not result.passed
    assert [c.id for c in result.checks if c.kind == "bundle"] == [
        "bundle-screenshot",
        "bundle-recording",
        "bundle-report",
    ]
    assert result.reasons[0].startswith("required proof-bundle 'bundle-recording' is missing")


async def test_a_manifest_that_does_not_parse_is_missing(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    bundle = build_bundle(ctx)
    (bundle / "manifest.json").write_text("{not json", encoding="utf-8")
    result = await grade(CASE, Trace(), ctx)
    assert not result.passed
    assert result.reasons[0].startswith(
        "required proof-bundle 'bundle-manifest' is missing: manifest.json does not parse"
    )


async def test_notes_must_be_more_than_the_report(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    build_bundle(ctx, skip=("notes.md",))
    result = await grade(CASE, Trace(), ctx)
    assert [c.id for c in result.checks if c.kind == "bundle" and not c.passed] == ["bundle-notes"]


async def test_taxonomy_use_is_the_share_of_labelled_findings(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    build_bundle(ctx, report=REPORT.replace("[rendering corruption] ", ""))
    assert items(await grade(CASE, Trace(), ctx))["taxonomy-use"] == 0.5
    untaxed = msgspec.structs.replace(CASE, taxonomy=())
    assert "taxonomy-use" not in items(await grade(untaxed, Trace(), ctx))


async def test_no_bundle_scores_low_and_fails(make_ctx: MakeCtx) -> None:
    result = await grade(CASE, Trace(final_text="I looked around."), make_ctx())
    assert not result.passed
    assert items(result)["bundle-completeness"] == 0.0
    assert (
        "the bundle bundle/ does not exist in the workspace, so there is no screenshot" in result.reasons[0]
    )


async def test_a_bundle_path_cannot_leave_the_workspace(make_ctx: MakeCtx, tmp_path: Path) -> None:
    ctx = make_ctx()
    outside = tmp_path / "outside-bundle"
    outside.mkdir()
    (outside / "report.md").write_text(REPORT, encoding="utf-8")
    result = await grade(msgspec.structs.replace(CASE, bundle_path="../outside-bundle"), Trace(), ctx)
    assert not result.passed
    assert "escapes the workspace through '..'" in next(
        i.reason for i in result.items if i.name == "bundle-completeness"
    )


async def test_dogfood_scans_only_commands(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    build_bundle(ctx, report=REPORT + textwrap.dedent("\n```sh\nsleep 5\nscrot a.png\n```\n"))
    result = await grade(CASE, Trace(), ctx)
    assert result.findings == ()
