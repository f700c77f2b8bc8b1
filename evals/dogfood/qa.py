"""Dogfood lane, exploratory QA and release readiness: find what is wrong and back it with evidence."""

import re

from _tui_qa import TAXONOMY, core_report

from skillgym import dogfood_case

with dogfood_case("exploratory-qa") as c:
    c.category("qa")
    c.fixture("hello-prompt")
    c.workspace("qa-lab")
    c.expect_skill("tui-qa")
    c.taxonomy(*TAXONOMY)
    c.task(
        "Explore the hello-prompt REPL as a QA engineer: try normal input, an empty line, a long line (over "
        "80 characters), symbols such as !@#$%^&*, and 'exit'. Report every bug you find, with evidence."
    )
    c.bundle_path("bundle")
    with c.proof_bundle() as b:
        b.requires_screenshot().requires_notes().requires_manifest()
    with c.report() as r:
        core_report(r)
        r.section("Findings", r"64|truncat|cut off|cut short", id="finds-truncation")
    with c.assertions() as a:
        a.fixture_received(re.compile(r".{81,}"), description="a long line really was sent")
        a.fixture_received("exit")
        a.no_live_sessions()

with dogfood_case("release-readiness") as c:
    c.category("release-readiness")
    c.fixture("color-grid")
    c.workspace("qa-lab")
    c.expect_skill("tui-qa")
    c.taxonomy(*TAXONOMY)
    c.task(
        "We are about to ship the colour-grid screen in v2.0. Check it at 100x30 and at 80x24: take a "
        "screenshot at each size, confirm every row (basic, bright, 256-color, truecolor, fg) renders, and "
        "give a checklist with pass/fail per item and a ship-or-hold recommendation."
    )
    c.validation_profile("interactive-renderer")
    with c.proof_bundle() as b:
        b.requires_notes()
    with c.report() as r:
        core_report(r)
        r.section("Checklist", r"\b(pass|fail)\b")
        r.section("Recommendation", r"\b(ship|hold)\b")
        r.section("Findings", r"bleed|background", id="finds-colour-bleed")
    c.artifact("screenshot", "bundle/*.svg", min_count=2, description="one screenshot per terminal size")
    with c.assertions() as a:
        a.fixture_printed(r"COLOR GRID COMPLETE")
        a.no_live_sessions()
