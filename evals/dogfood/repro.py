"""Dogfood lane, bug reproduction: reproduce a reported bug, classify it, and prove it with evidence."""

import re

from _tui_qa import TAXONOMY, core_report

from skillgym import FixtureLogContains, Pattern, dogfood_case

with dogfood_case("rendering-bug-repro") as c:
    c.category("bug-repro")
    c.fixture("unicode-grid")
    c.workspace("qa-lab")
    c.expect_skill("tui-qa")
    c.taxonomy(*TAXONOMY)
    c.task(
        "Users say the Unicode table looks broken in terminals narrower than 80 columns. Reproduce it: "
        "capture the table at 100 columns (before) and at 60 columns (after), and report the difference."
    )
    c.validation_profile("interactive-renderer")
    with c.report() as r:
        core_report(r)
        r.section("Reproduction steps", r"resize-window|-x\s*60|60\s*columns", id="narrows-terminal")
        r.section("Findings", r"rendering corruption", id="labelled-rendering")
        r.section("Findings", r"expected", r"actual", id="expected-vs-actual")
    c.artifact("screenshot", "bundle/*.svg", min_count=2, description="before and after screenshots")
    with c.assertions() as a:
        a.raw(
            FixtureLogContains(
                id="narrow-resize",
                description="the program was really resized below 80 columns",
                fixture="unicode-grid",
                event="resize",
                pattern=Pattern(regex=r"^[1-7]?\dx\d+$", flags=""),
            )
        )
        a.fixture_printed(r"\(compact\)", description="the program drew its narrow layout")
        a.no_live_sessions()

with dogfood_case("paste-input-repro") as c:
    c.category("bug-repro")
    c.fixture("hello-prompt")
    c.workspace("qa-lab")
    c.expect_skill("tui-qa")
    c.taxonomy(*TAXONOMY)
    c.task(
        "A user says text pasted into the hello-prompt REPL comes back with strange characters around it. "
        "Reproduce it with a real (bracketed) paste, compare with typing the same text, and report it."
    )
    with c.proof_bundle() as b:
        b.requires_notes().requires_manifest()
    with c.report() as r:
        core_report(r)
        r.section("Reproduction steps", r"paste-buffer", id="uses-paste")
        r.section("Findings", r"copy/paste", id="labelled-paste")
        r.section("Findings", r"200~", id="names-the-markers")
    with c.assertions() as a:
        a.fixture_received(
            re.compile(r"\x1b\[200~"), description="a bracketed paste really reached the program"
        )
        a.no_live_sessions()

with dogfood_case("resize-regression") as c:
    c.category("bug-repro")
    c.fixture("resize-demo")
    c.workspace("qa-lab")
    c.expect_skill("tui-qa")
    c.taxonomy(*TAXONOMY)
    c.task(
        "Check for a resize regression: start at 80x24, grow to 120x40, shrink back to 80x24, and capture "
        "the program's SIZE line at every step. Report what it shows against what it should show."
    )
    with c.proof_bundle() as b:
        b.requires_recording().requires_notes()
    with c.report() as r:
        core_report(r)
        r.section("Reproduction steps", r"120x40|-x\s*120", id="grows")
        r.section("Findings", r"resize/layout", id="labelled-resize")
        r.section("Findings", r"SIZE: 120x40", r"80x24", id="stale-size")
    with c.assertions() as a:
        for size in ("120x40", "80x24"):
            a.raw(
                FixtureLogContains(
                    id=f"resized-to-{size}",
                    description=f"the program really was resized to {size}",
                    fixture="resize-demo",
                    event="resize",
                    pattern=Pattern(regex=f"^{size}$", flags=""),
                )
            )
        a.no_live_sessions()
