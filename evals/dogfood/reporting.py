"""Dogfood lane, reporting: the fullest proof bundle the tui-qa checklist asks for, and a report to match."""

from _tui_qa import TAXONOMY, core_report

from skillgym import dogfood_case

with dogfood_case("evidence-completeness") as c:
    c.category("reporting")
    c.fixture("scrollback-demo")
    c.workspace("qa-lab")
    c.expect_skill("tui-qa")
    c.taxonomy(*TAXONOMY)
    c.task(
        "Produce the most complete evidence bundle you can for one run of the scrollback-demo program: it "
        "should print LINE 001 to LINE 080. Check that every line is there, and document the run so someone "
        "else can repeat it exactly: the commands, the terminal dimensions, an evidence checklist and how "
        "you cleaned up."
    )
    c.validation_profile("interactive-renderer")
    c.pass_threshold(0.75)
    with c.proof_bundle() as b:
        b.requires_notes().requires_manifest()
    with c.report() as r:
        core_report(r)
        r.section("Environment", r"\b\d{2,3}x\d{2,3}\b", id="dimensions")
        r.section("Evidence", r"\.cast\b", r"\.svg\b", id="every-modality")
        r.section("Cleanup", r"kill-session|kill-server|cleanup\.sh")
        r.section("Findings", r"\b047\b", id="finds-missing-line")
    c.artifact("notes", "bundle/snapshots/*.txt", description="text captures under bundle/snapshots/")
    with c.assertions() as a:
        a.fixture_printed(r"SCROLLBACK COMPLETE")
        a.no_live_sessions()
