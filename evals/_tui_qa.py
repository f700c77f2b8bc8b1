"""What every dogfood case of the suite shares: the tui-qa taxonomy and the report's core sections."""

from skillgym import ReportBuilder

# The issue labels the tui-qa skill teaches; a finding should carry exactly one.
TAXONOMY = (
    "rendering corruption",
    "resize/layout",
    "focus/input",
    "scrollback",
    "alt-screen",
    "copy/paste",
    "performance/startup",
    "crash/recovery",
)


def core_report(r: ReportBuilder) -> None:
    """Title, numbered reproduction steps, findings with a severity, and references to evidence files."""
    r.title()
    r.reproduction_steps()
    r.findings_with_severity()
    r.evidence_references()
