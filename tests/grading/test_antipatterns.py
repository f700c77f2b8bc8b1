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
from skillgym.grading.loops import strip_comment
from skillgym.grading.sessions import OpenSession
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
        # Loop words in a comment or a file name do not make a fixed sleep poll.
        "sleep 1  # retry until the deadline",
        "sleep 2 && echo done",
        "sleep 3; make > build-done.txt",
        # Another way to run the same program.
        "/bin/sleep 3",
        "env sleep 3",
        "env -i PATH=/bin sleep 3",
        "DELAY=1 sleep 3",
        "nohup /usr/bin/sleep 3",
        # A loop that checks nothing: the sleep is still a fixed wait.
        "while true; do sleep 1; done",
        "for key in a b c; do tmux -L sg send-keys -t app $key; sleep 1; done",
        "until grep -q READY log; do sleep 0.2; done; sleep 5",
        # Quoted text and arguments leave no loop: only an exit word run as a command does.
        "for s in a b c; do tmux -L x send-keys -t $s 'exit' Enter; sleep 2; done",
        "while true; do echo 'press q to exit'; sleep 1; done",
        'while true; do echo "break here"; sleep 1; done',
        "while true; do echo press q to exit; sleep 1; done",
        "sh -c \"while true; do tmux -L x send-keys -t app 'return' Enter; sleep 1; done\"",
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
        "timeout 10 sh -c 'until grep -q READY log; do sleep 0.1; done'",
        "while true; do grep -q READY log && break; sleep 1; done",
        "while sleep 1; do grep -q READY log && break; done",
        "sh -c 'for i in 1 2 3 4 5; do grep -q READY log && exit 0; sleep 1; done; exit 1'",
        "while true; do case $(cat state) in READY) break;; esac; sleep 1; done",
        "while :; do tmux -L x capture-pane -p -t app | grep -q 'exit code' && return; sleep 1; done",
        "for i in 1 2 3; do echo 'try'; if grep -q READY log; then break; fi; sleep 1; done",
        "1. `while ! grep -q READY log; do sleep 1; done`",
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


def test_sleep_in_a_poll_loop_that_spans_lines() -> None:
    shell = "for i in $(seq 50)\ndo\n  grep -q READY log && break\n  sleep 0.1\ndone\nsleep 1"
    single = "while not ready(): time.sleep(0.1)\ntime.sleep(2)"
    python = "for _ in range(50):\n    if ready():\n        break\n    time.sleep(0.1)\ntime.sleep(3)"
    spin = "while True:\n    time.sleep(1)"
    assert [(f.line, f.matched_text) for f in scan_text(shell, DEFAULT_RULES, negation=False)] == [
        (6, "sleep 1")
    ]
    assert [f.matched_text for f in scan_text(single, DEFAULT_RULES, negation=False)] == ["time.sleep(2)"]
    assert [f.matched_text for f in scan_text(python, DEFAULT_RULES, negation=False)] == ["time.sleep(3)"]
    assert [f.matched_text for f in scan_text(spin, DEFAULT_RULES, negation=False)] == ["time.sleep(1)"]


def test_quoted_exit_words_in_a_python_loop_leave_nothing() -> None:
    blind = "while True:\n    send('exit')\n    print(\"break\")\n    time.sleep(1)"
    poll = "for _ in range(50):\n    if 'READY' in pane():\n        break\n    time.sleep(0.1)"
    assert [f.matched_text for f in scan_commands([blind], DEFAULT_RULES)] == ["time.sleep(1)"]
    assert scan_commands([poll], DEFAULT_RULES) == ()


def test_correct_advice_listing_what_to_avoid_passes() -> None:
    for text in (
        "Don't just `sleep 5` and hope.",
        "Avoid: `sleep 5`.",
        "Don't do this: `sleep 5`",
        "Do not use the following: `sleep 5`",
        "**Never**: `sleep 5`",
    ):
        assert not has_error(scan_text(text, DEFAULT_RULES, negation=True)), text


def test_a_negation_does_not_excuse_a_sleep_in_another_clause() -> None:
    for text in ("It didn't start in time: `sleep 5`.", "It won't hurt to `sleep 5`."):
        assert has_error(scan_text(text, DEFAULT_RULES, negation=True)), text


def test_commands_are_judged_without_their_comments() -> None:
    assert scan_commands(["echo ready  # then sleep 5"], DEFAULT_RULES) == ()
    assert scan_commands(["make  # poll until done", "sleep 5"], DEFAULT_RULES)[0].line == 2
    # A quoted # starts no comment, so the sleep after it still runs.
    assert rule_ids(scan_commands(["echo '# note'; sleep 2", 'echo "a # b" && sleep 2'], DEFAULT_RULES)) == [
        "blind-sleep",
        "blind-sleep",
    ]


def test_prose_keeps_issue_numbers_and_apostrophes() -> None:
    assert strip_comment("see #3; sleep 2", prose=True) == "see #3; sleep 2"
    assert strip_comment("don't # sleep 2", prose=True) == "don't"
    assert strip_comment("sleep 2 #3", prose=False) == "sleep 2"
    assert strip_comment("echo \\# x # y", prose=False) == "echo \\# x"


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


def orphans(commands: list[str], rules: tuple[AntiPatternRule, ...] = DEFAULT_RULES) -> list[str]:
    found = scan_commands(commands, rules)
    return [f.message.split("(")[-1].rstrip(")") for f in found if f.rule_id == "orphaned-session"]


def test_a_kill_of_another_name_ends_nothing() -> None:
    assert orphans(["tmux -L sg new-session -d -s a", "tmux -L sg kill-session -t b"]) == [
        "session 'a', command 1"
    ]


def test_kill_server_ends_the_sessions_of_its_own_socket_only() -> None:
    commands = ["tmux -L x new -d -s a", "tmux -L y new -d -s b", "tmux -L y kill-server"]
    assert orphans(commands) == ["session 'a', command 1"]
    assert orphans(["tmux -L x new -d -s a", "tmux kill-server"]) == ["session 'a', command 1"]
    assert orphans(["tmux -S /tmp/s/a new -d -s a", "tmux -S /tmp/s/a kill-server"]) == []
    assert orphans(["tmux -S /tmp/s/a new -d -s a", "tmux -L a kill-server"]) == ["session 'a', command 1"]


def test_kill_session_ends_its_name_on_its_socket_only() -> None:
    commands = ["tmux -L x new -d -s app", "tmux -L y new -d -s app", "tmux -L y kill-session -t app"]
    assert orphans(commands) == ["session 'app', command 1"]
    # -S wins over -L; a target may ask for an exact match and name a window; tmux turns . into _.
    assert orphans(["tmux -L x -S /tmp/s new -s app", "tmux -S /tmp/s kill-session -t =app:0.1"]) == []
    assert orphans(["tmux -L sg new -d -s my.app", "tmux -L sg kill-session -t my_app"]) == []


def test_a_kill_before_the_session_exists_ends_nothing() -> None:
    assert orphans(["tmux -L sg kill-session -t a", "tmux -L sg new -d -s a"]) == ["session 'a', command 2"]


def test_kill_session_all_but_one() -> None:
    commands = ["tmux -L sg new -d -s a", "tmux -L sg new -d -s b", "tmux -L sg kill-session -a -t b"]
    assert orphans(commands) == ["session 'b', command 2"]


def test_sessions_in_prose_commands_and_backticks() -> None:
    plan = "1. `tmux -L sg new-session -d -s app './app'`\n2. Clean up: `tmux -L sg kill-session -t app`"
    assert [f.rule_id for f in scan_text(plan, DEFAULT_RULES, negation=True)] == []
    never = "Start it: `tmux -L sg new -d -s app`. Never run `tmux -L sg kill-session -t app`."
    assert [f.rule_id for f in scan_text(never, DEFAULT_RULES, negation=True)] == ["orphaned-session"]


def test_a_sentence_s_final_period_is_no_part_of_a_session_name() -> None:
    for text in (
        "Start it with `tmux -L sg new -d -s build`. When done, run tmux -L sg kill-session -t build.",
        "Start it with tmux -L sg new -d -s build. When done, run `tmux -L sg kill-session -t build`",
    ):
        assert scan_text(text, DEFAULT_RULES, negation=True) == ()
    assert orphans(["tmux -L sg new -d -s build", "tmux -L sg kill-session -t build."]) == []


CLEANUP = AntiPatternRule(
    id="orphaned-session",
    severity="warning",
    patterns=(
        Pattern(
            regex=r"(?:^\s*|[;&|(`]\s*)(?:[\w.~$/-]*/)?(?P<end>cleanup\.sh)"
            r"(?:[ \t]+(?P<session>[\w.-]+)(?:[^\w.>-]|$)|[^\w.-]|$)",
            flags="i",
        ),
    ),
)


def test_a_suite_can_declare_its_own_session_ending_command() -> None:
    rules = effective_rules((CLEANUP,))
    created = "tmux -L skillgym new-session -d -s hello 'python3 hello.py'"
    assert orphans([created, "scripts/cleanup.sh hello"], rules) == []
    assert orphans([created, "/w/.claude/skills/tmux-tui/scripts/cleanup.sh hello && echo ok"], rules) == []
    assert orphans([created, "scripts/cleanup.sh"], rules) == []  # no name: the whole server
    assert orphans([created, "scripts/cleanup.sh other"], rules) == ["session 'hello', command 1"]
    assert orphans([created, "cat scripts/cleanup.sh"], rules) == ["session 'hello', command 1"]
    # tmux's own commands still count under the suite's rule, and the defaults know nothing of the script.
    assert orphans([created, "tmux -L skillgym kill-session -t hello"], rules) == []
    assert orphans([created, "scripts/cleanup.sh hello"]) == ["session 'hello', command 1"]


def test_declared_creations_and_sockets() -> None:
    rule = AntiPatternRule(
        id="orphaned-session",
        patterns=(
            Pattern(regex=r"start\.sh (?P<session>\w+)"),
            Pattern(regex=r"(?P<end>stop\.sh) (?P<socket>-L \w+) (?P<session>\w+)"),
        ),
    )
    rules = effective_rules((rule,))
    assert orphans(["start.sh app", "stop.sh -L any app"], rules) == []  # a socket it never named: any
    assert orphans(["tmux -L x new -d -s app", "stop.sh -L y app"], rules) == ["session 'app', command 1"]
    assert orphans(["tmux -L x new -d -s app", "stop.sh -L x app"], rules) == []


def test_only_sessions_still_running_are_orphans_when_asked() -> None:
    commands = ["tmux -L sg new -d -s gone 'exit 0'", "tmux -L sg new -d -s stays"]
    asked: list[OpenSession] = []

    def running(session: OpenSession) -> bool:
        asked.append(session)
        return session.session == "stays"

    findings = scan_commands(commands, DEFAULT_RULES, running=running)
    assert [(f.line, f.matched_text) for f in findings] == [(2, "new")]
    assert [(s.socket, s.session) for s in asked] == [(("L", "sg"), "gone"), (("L", "sg"), "stays")]


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
