"""Dogfood lane: exploratory QA of a fixture with a proof bundle and a structured report."""

from skillgym import dogfood_case

with dogfood_case("exploratory-qa") as c:
    c.category("qa")
    c.fixture("hello-prompt")
    c.workspace("tui-smoke")
    c.expect_skill("tui-qa")
    c.task(
        "Explore the hello-prompt program as a QA engineer: try normal input, empty input and 'exit'. "
        "Leave a proof bundle in bundle/ with a pane snapshot, notes and a report.md."
    )
    c.bundle_path("bundle")
    c.validation_profile("contract-reporting")
    with c.proof_bundle() as b:
        b.requires_screenshot()
        b.requires_notes()
    with c.report() as r:
        r.title()
        r.reproduction_steps()
        r.findings_with_severity()
        r.evidence_references()
    with c.assertions() as a:
        a.fixture_received("exit")
        a.no_live_sessions()
