"""Tests for skillgym.grading.antipatterns: default rules, merging, negation, loops and orphaned sessions."""

from __future__ import annotations

import pytest

from skillgym.grading.antipatterns import (
    DEFAULT_RULES,
    effective_rules,
    has_error,
    scan_commands,
    scan_text,
)
from skillgym.model import AntiPatternRule, Pattern
from skillgym.results import Finding


def fired(text: str, *, negation: bool = True) -> list[tuple[str, str, bool]]:
    return [(f.rule_id, f.severity, f.negated) for f in scan_text(text, DEFAULT_RULES, negation=negation)]


def rule_ids(findings: tuple[Finding, ...]) -> list[str]:
    return [f.rule_id for f in findings]


def test_default_rule_table() -> None:
    assert [(r.id, r.severity) for r in DEFAULT_RULES] == [
        ("blind-sleep", "error"),
        ("adhoc-screenshot", "error"),
        ("screen-usage", "error"),
        ("user-tmux-server", "warning"),
        ("orphaned-session", "warning"),
    ]
    assert all(r.description and r.suggested_fix and r.patterns for r in DEFAULT_RULES)


@pytest.mark.parametrize(
    "text",
    [
        "sleep 2",
        "  sleep 0.5",
        "tmux -L sg send-keys -t app 'x' Enter && sleep 1",
        "echo hi; sleep 3",
        "true || sleep 1",
        "cat log | sleep 1",
        "python3 -c 'import time; time.sleep(2)'",
        "- sleep 5",
        "$ sleep 5",
        "Then sleep 5 and look.",
    ],
)
def test_blind_sleep_fires(text: str) -> None:
    assert fired(text) == [("blind-sleep", "error", False)]


@pytest.mark.parametrize(
    "text",
    [
        "while ! grep -q READY out.txt; do sleep 0.1; done",
        "until tmux -L sg capture-pane -p -t app | grep -q READY; do sleep 0.2; done",
        "for i in $(seq 50); do grep -q x f && break; sleep 0.1; done",
        "sleep 1  # retry until the deadline",
        "echo sleeping",
        "I will not just wait.",
        "# sleep 5",
        "// sleep 5",
        "time.sleep(delay)",
    ],
)
def test_blind_sleep_does_not_fire(text: str) -> None:
    assert "blind-sleep" not in [r for r, _, _ in fired(text)]


def test_sleep_inside_multi_line_loops_is_pacing() -> None:
    shell = "until grep -q READY out.txt; do\n  sleep 0.2\ndone\nsleep 1"
    python = "while not ready():\n    time.sleep(0.1)\ntime.sleep(2)"
    assert [(f.line, f.matched_text) for f in scan_text(shell, DEFAULT_RULES, negation=False)] == [
        (4, "sleep 1")
    ]
    assert [(f.line, f.matched_text) for f in scan_text(python, DEFAULT_RULES, negation=False)] == [
        (3, "time.sleep(2)")
    ]


def test_a_prose_do_does_not_open_a_loop() -> None:
    assert rule_ids(scan_text("Do not wait for it, do this:\nsleep 2", DEFAULT_RULES, negation=True)) == [
        "blind-sleep"
    ]


def test_negated_occurrences_are_kept_as_info() -> None:
    findings = scan_text("Never use `sleep 5` here.", DEFAULT_RULES, negation=True)
    assert len(findings) == 1
    finding = findings[0]
    assert (finding.rule_id, finding.severity, finding.negated) == ("blind-sleep", "info", True)
    assert "negation" in finding.message
    assert not has_error(findings)


def test_instead_of_sleep_never_gates() -> None:
    for text in (
        "Poll instead of sleep.",
        "instead of `sleep 2`, poll",
        "never use sleep",
        "avoid `sleep 3`",
    ):
        assert not has_error(scan_text(text, DEFAULT_RULES, negation=True)), text


@pytest.mark.parametrize(
    "text",
    [
        "import -window root shot.png",
        "scrot shot.png",
        "gnome-screenshot -f a.png",
        "xwd -root > a.xwd",
        "xdotool key Return",
    ],
)
def test_adhoc_screenshot(text: str) -> None:
    assert fired(text) == [("adhoc-screenshot", "error", False)]


def test_adhoc_screenshot_negated() -> None:
    assert fired("Rather than scrot, capture the pane.") == [("adhoc-screenshot", "info", True)]


@pytest.mark.parametrize("text", ["screen -dmS app python3 app.py", "cd x && screen -r app", "screen"])
def test_screen_usage(text: str) -> None:
    assert fired(text) == [("screen-usage", "error", False)]


@pytest.mark.parametrize(
    "text", ["Screen output shows READY", "- screen recordings help", "scripts/screenshot.sh app a.svg"]
)
def test_screen_as_a_word_is_not_usage(text: str) -> None:
    assert "screen-usage" not in [r for r, _, _ in fired(text)]


@pytest.mark.parametrize(
    "text",
    [
        "tmux send-keys -t app hi Enter",
        "/usr/bin/tmux -f /dev/null ls",
        "tmux -2 capture-pane -p -S - -t app",
    ],
)
def test_user_tmux_server(text: str) -> None:
    assert fired(text) == [("user-tmux-server", "warning", False)]


@pytest.mark.parametrize(
    "text",
    [
        "tmux -L skillgym send-keys -t app hi Enter",
        "tmux -Lskillgym ls",
        'tmux -L "$TMUX_SOCKET" ls',
        "tmux -f /dev/null -S /tmp/s/sock capture-pane -p -S - -t app",
        "I'll drive it with tmux to be safe",
        "the tmux-tui skill",
        "echo $TMUX",
    ],
)
def test_private_or_prose_tmux_is_fine(text: str) -> None:
    assert "user-tmux-server" not in [r for r, _, _ in fired(text)]


def test_orphaned_sessions_pair_by_name() -> None:
    commands = [
        "tmux -L sg new-session -d -s app 'python3 app.py'",
        "tmux -L sg new -d -s other",
        "tmux -L sg kill-session -t app",
    ]
    findings = scan_commands(commands, DEFAULT_RULES)
    assert [(f.rule_id, f.line, f.severity) for f in findings] == [("orphaned-session", 2, "warning")]
    assert "session 'other'" in findings[0].message
    assert "command 2" in findings[0].message


def test_commented_out_sessions_and_kills_do_not_count() -> None:
    created = ["tmux -L sg new -d -s a", "# tmux -L sg kill-session -t a"]
    assert rule_ids(scan_commands(created, DEFAULT_RULES)) == ["orphaned-session"]
    assert scan_commands(["# tmux -L sg new -d -s a", "// tmux -L sg new -d -s b"], DEFAULT_RULES) == ()


def test_kill_server_ends_every_session() -> None:
    commands = ["tmux -L sg new -d -s a", "tmux -L sg new -d -s b", "tmux -L sg kill-server"]
    assert scan_commands(commands, DEFAULT_RULES) == ()


def test_unnamed_sessions_pair_in_order() -> None:
    assert scan_commands(["tmux -L sg new -d", "tmux -L sg kill-session"], DEFAULT_RULES) == ()
    assert rule_ids(
        scan_commands(["tmux -L sg new -d", "tmux -L sg new -d", "tmux -L sg kill-session"], DEFAULT_RULES)
    ) == ["orphaned-session"]


def test_scan_commands_counts_lines_across_commands_and_never_negates() -> None:
    findings = scan_commands(["ls", "echo ok\n# never sleep\nsleep 2", "not then sleep 3"], DEFAULT_RULES)
    assert [(f.line, f.matched_text, f.negated) for f in findings] == [
        (4, "sleep 2", False),
        (5, "sleep 3", False),
    ]
    assert "command 2" in findings[0].message
    assert "command 3" in findings[1].message
    # The same words in prose are a negation.
    assert fired("not then sleep 3") == [("blind-sleep", "info", True)]


def test_findings_are_deduplicated_and_sorted() -> None:
    text = "scrot a.png\nsleep 1\nsleep 1; scrot b.png"
    findings = scan_text(text, (*DEFAULT_RULES, DEFAULT_RULES[0]), negation=False)
    assert [(f.line, f.rule_id) for f in findings] == [
        (1, "adhoc-screenshot"),
        (2, "blind-sleep"),
        (3, "adhoc-screenshot"),
        (3, "blind-sleep"),
    ]


def test_suite_rule_with_a_default_id_replaces_it() -> None:
    softer = AntiPatternRule(id="blind-sleep", severity="warning", patterns=(Pattern(regex=r"\bsleep 9\b"),))
    rules = effective_rules((softer,))
    assert len(rules) == len(DEFAULT_RULES)
    assert rules[0] is softer
    assert fired_with("sleep 2", rules) == []
    assert fired_with("sleep 9", rules) == [("blind-sleep", "warning")]


def test_other_suite_and_case_rules_extend() -> None:
    suite = AntiPatternRule(id="no-rm", severity="error", patterns=(Pattern(regex=r"\brm -rf\b"),))
    case = AntiPatternRule(id="no-curl", severity="warning", patterns=(Pattern(regex=r"\bcurl\b"),))
    rules = effective_rules((suite,), (case,))
    assert [r.id for r in rules] == [*(r.id for r in DEFAULT_RULES), "no-rm", "no-curl"]
    assert fired_with("rm -rf x; curl y", rules) == [("no-curl", "warning"), ("no-rm", "error")]


def test_case_rule_with_the_same_id_replaces_too() -> None:
    case = AntiPatternRule(id="screen-usage", severity="info", patterns=(Pattern(regex=r"\bscreen\b"),))
    assert effective_rules((), (case,))[2] is case


def fired_with(text: str, rules: tuple[AntiPatternRule, ...]) -> list[tuple[str, str]]:
    return [(f.rule_id, f.severity) for f in scan_text(text, rules, negation=False)]
