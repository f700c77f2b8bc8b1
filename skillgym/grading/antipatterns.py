"""The anti-pattern engine: default rules for driving terminals, rule merging, and line-by-line scans."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from ..model import AntiPatternRule, Pattern
from ..results import Finding
from .loops import line_starts, poll_loop_spans, strip_comment
from .patterns import compile_pattern, find_all
from .sessions import OpenSession, open_sessions

__all__ = (
    "DEFAULT_RULES",
    "LOOP_AWARE_RULES",
    "ORPHANED_SESSION",
    "TMUX_SESSION_PATTERNS",
    "effective_rules",
    "has_error",
    "scan_commands",
    "scan_text",
)

ORPHANED_SESSION: Final = "orphaned-session"
# A sleep inside a loop that checks something on each turn paces a poll; it is not a blind wait. A regex
# sees one line, so loops (on one line or many) are found in the whole text and matches inside them dropped.
LOOP_AWARE_RULES: Final = frozenset({"blind-sleep"})

# Command position: the start of a line (after a list marker or a shell prompt in prose), after a shell
# separator, a pipe, a backtick or a subshell, or after then/else/do/sudo/exec/nohup/command; then any
# words that run the command after them (env, VAR=value, time, nice, timeout DURATION) and a directory.
_CMD = (
    r"(?:^\s*(?:[-*+]\s+|\d+[.)]\s+|[$>]\s+)?"
    r"|(?:[;&|`(]|\$\()\s*"
    r"|\b(?:then|else|do|sudo|exec|nohup|command)\s+)"
    r"(?:(?:[\w.~-]*/)*(?:env|sudo|nohup|command|time|nice)(?:\s+-[-\w]+)*\s+"
    r"|(?:[\w.~-]*/)*timeout(?:\s+-[-\w]+)*\s+\d\S*\s+"
    r"|[A-Za-z_]\w*=\S*\s+)*"
    r"(?:[\w.~-]*/)*"
)
# tmux's global options come before its command; -L/-S among them choose a private server.
_TMUX_FLAGS = r"(?:\s+-[2CDNluvV]+|\s+-[cfT]\s*\S+)*"
_TMUX_ANY_FLAGS = r"(?:\s+-[2CDNluvV]+|\s+-[cfTLS]\s*\S+)*"
# Matched context stands in for lookbehind, which RE2 lacks: the character before a word, when there is
# one, must not continue it. Every use of the tmux word is followed by whitespace, which ends it.
_BEFORE_TMUX = r"(?:^|[^\w./$-])"
_TMUX_PATH = r"(?:[\w.~-]*/)*tmux"
_TMUX = _BEFORE_TMUX + _TMUX_PATH + _TMUX_ANY_FLAGS
# Full command names and their official aliases (single-letter prefixes left out: too ambiguous in prose).
_TMUX_COMMANDS = tuple(
    word
    for line in (
        "attach-session attach bind-key bind break-pane breakp capture-pane capturep choose-buffer",
        "choose-client choose-tree clear-history clearhist clock-mode command-prompt confirm-before",
        "confirm copy-mode customize-mode delete-buffer deleteb detach-client detach display-menu",
        "menu display-message display display-popup popup display-panes displayp find-window findw",
        "has-session has if-shell if join-pane joinp kill-pane killp kill-server kill-session",
        "kill-window killw last-pane lastp last-window last link-window linkw list-buffers lsb",
        "list-clients lsc list-commands lscm list-keys lsk list-panes lsp list-sessions ls",
        "list-windows lsw load-buffer loadb lock-client lockc lock-server lock lock-session locks",
        "move-pane movep move-window movew new-session new new-window neww next-layout nextl",
        "next-window next paste-buffer pasteb pipe-pane pipep previous-layout prevl previous-window",
        "prev refresh-client refresh rename-session rename rename-window renamew resize-pane resizep",
        "resize-window resizew respawn-pane respawnp respawn-window respawnw rotate-window rotatew",
        "run-shell run save-buffer saveb select-layout selectl select-pane selectp select-window",
        "selectw send-keys send send-prefix server-access set-buffer setb set-environment setenv",
        "set-hook set-option set set-window-option setw show-buffer showb show-environment showenv",
        "show-hooks show-messages showmsgs show-options show show-window-options showw source-file",
        "source split-window splitw start-server start suspend-client suspendc swap-pane swapp",
        "swap-window swapw switch-client switchc unbind-key unbind unlink-window unlinkw wait-for",
        "wait",
    )
    for word in line.split()
)
_TMUX_COMMAND = (
    "(?:" + "|".join(sorted(map(re.escape, _TMUX_COMMANDS), key=len, reverse=True)) + r")(?:[^\w-]|$)"
)

# tmux's own session commands, read by the orphaned-session check whatever the rule's patterns; a suite
# that ends sessions some other way (a cleanup script) declares that command in its own orphaned-session
# rule, with an ``end`` group (README: "Anti-patterns").
TMUX_SESSION_PATTERNS: Final = (
    Pattern(regex=_TMUX + r"\s+(new-session|new)(?:[^\w-]|$)", flags=""),
    Pattern(regex=_TMUX + r"\s+(?P<end>kill-session|kill-server)(?:[^\w-]|$)", flags=""),
)

DEFAULT_RULES: Final[tuple[AntiPatternRule, ...]] = (
    AntiPatternRule(
        id="blind-sleep",
        description="waits a fixed time (sleep N) instead of polling for observable output",
        severity="error",
        patterns=(
            Pattern(regex=_CMD + r"(sleep\s+\d*\.?\d+[smhd]?)\b", flags="i"),
            Pattern(regex=r"\b(time\.sleep\(\s*\d*\.?\d+\s*\))", flags="i"),
        ),
        suggested_fix="poll the pane for the text you expect, with a deadline "
        "(for example scripts/wait-for.sh SESSION 'READY>' 10)",
    ),
    AntiPatternRule(
        id="adhoc-screenshot",
        description="takes an OS-level screenshot instead of capturing the terminal pane",
        severity="error",
        patterns=(
            Pattern(
                regex=r"(?:^|[^\w./-])(import\s+-window|scrot|gnome-screenshot|screencapture|xwd|xdotool)(?:[^\w-]|$)",
                flags="i",
            ),
        ),
        suggested_fix="capture the pane: tmux -L NAME capture-pane -p -t SESSION "
        "(or the skill's screenshot script)",
    ),
    AntiPatternRule(
        id="screen-usage",
        description="drives the program with GNU screen instead of tmux",
        severity="error",
        # Case-sensitive and followed by an option or the end of the command: "Screen output" is prose.
        patterns=(Pattern(regex=_CMD + r"(screen)(?:\s+-|\s*(?:$|[;&|)`]))", flags=""),),
        suggested_fix="use tmux on a private socket: tmux -L NAME new-session -d -s SESSION 'program'",
    ),
    AntiPatternRule(
        id="user-tmux-server",
        description="runs tmux without -L NAME or -S PATH, which touches the user's default tmux server",
        severity="warning",
        patterns=(
            Pattern(
                # Its flags cannot be -L or -S, so a private socket keeps tmux from reaching a command.
                regex=f"{_BEFORE_TMUX}({_TMUX_PATH}){_TMUX_FLAGS}\\s+{_TMUX_COMMAND}",
                flags="",
            ),
        ),
        suggested_fix="pass a private socket to every tmux command: tmux -L NAME ...",
    ),
    AntiPatternRule(
        id=ORPHANED_SESSION,
        description="creates a tmux session that is never killed",
        severity="warning",
        # Procedural: the engine pairs sessions created and ended by name and socket (sessions.py). It always
        # reads tmux's own commands; a suite's rule with this id adds commands of its own.
        patterns=TMUX_SESSION_PATTERNS,
        suggested_fix="end every session you start: tmux -L NAME kill-session -t SESSION",
    ),
)

_COMMENT = re.compile(r"^\s*(?:#|//)")


def effective_rules(
    suite_rules: Iterable[AntiPatternRule] = (), case_rules: Iterable[AntiPatternRule] = ()
) -> tuple[AntiPatternRule, ...]:
    """Defaults, then suite rules, then case rules; a rule replaces an earlier one with the same id."""
    merged: dict[str, AntiPatternRule] = {rule.id: rule for rule in DEFAULT_RULES}
    for rule in (*suite_rules, *case_rules):
        merged[rule.id] = rule  # keeps the replaced rule's position, appends a new id
    return tuple(merged.values())


def has_error(findings: Iterable[Finding]) -> bool:
    """Whether any finding gates: error severity and not negated."""
    return any(f.severity == "error" and not f.negated for f in findings)


def _message(rule: AntiPatternRule, where: str, negated: bool = False) -> str:
    text = rule.description or f"anti-pattern {rule.id!r}"
    if where:
        text += f" ({where})"
    if negated:
        text += "; only in a negation context, so it does not count"
    return text


def _in_any(offset: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start <= offset < end for start, end in spans)


def _orphans(
    rule: AntiPatternRule,
    lines: Sequence[tuple[int, str]],
    *,
    negation: bool,
    locate: Callable[[int], str],
    running: Callable[[OpenSession], bool] | None,
) -> list[Finding]:
    # tmux's own commands always count; the rule's patterns may add commands of the suite's own.
    patterns = tuple(dict.fromkeys((*TMUX_SESSION_PATTERNS, *rule.patterns)))
    return [
        Finding(
            rule_id=rule.id,
            severity=rule.severity,
            message=_message(
                rule,
                ", ".join(p for p in (f"session {s.session!r}" if s.session else "", locate(s.line)) if p),
            ),
            matched_text=s.text,
            line=s.line,
            suggested_fix=rule.suggested_fix,
        )
        for s in open_sessions(patterns, lines, negation=negation)
        if running is None or running(s)
    ]


def scan_text(
    text: str,
    rules: Sequence[AntiPatternRule],
    *,
    negation: bool,
    locate: Callable[[int], str] | None = None,
    running: Callable[[OpenSession], bool] | None = None,
) -> tuple[Finding, ...]:
    """Findings of ``rules`` in ``text``, line by line, deduplicated and sorted by (line, rule id).

    Comment-only lines (``#``, ``//``) are skipped and shell comments (``sleep 5  # wait``) cut off first.
    With ``negation`` (prose), an occurrence after "instead of", "never", "don't" ... is kept with
    ``negated=True`` and severity info, so it never gates. ``locate`` turns a line number into a place
    such as "command 3" for the message. ``running``, where the commands really ran, says whether a
    session they never ended is still running: one whose program exited is no orphan.
    """
    where = locate or (lambda _line: "")
    lines = ["" if _COMMENT.match(line) else strip_comment(line, prose=negation) for line in text.split("\n")]
    starts = line_starts(lines)
    scanned = [(number, line) for number, line in enumerate(lines, 1) if line]
    loops: list[tuple[int, int]] | None = None  # poll loops: found the first time a loop-aware rule matches
    found: dict[tuple[str, int, str, bool], Finding] = {}
    for rule in rules:
        if rule.id == ORPHANED_SESSION:
            for finding in _orphans(rule, scanned, negation=negation, locate=where, running=running):
                found.setdefault((rule.id, finding.line or 0, finding.matched_text, False), finding)
            continue
        # Compiled here, so a broken rule fails named rather than on some line; searched directly per
        # line, because most lines match no rule and need nothing more.
        compiled = [(pattern, compile_pattern(pattern).search) for pattern in rule.patterns]
        loop_aware = rule.id in LOOP_AWARE_RULES
        for number, line in scanned:
            for pattern, search in compiled:
                if search(line) is None:
                    continue
                for match in find_all(pattern, line, negation=negation):
                    if loop_aware:
                        if loops is None:
                            loops = poll_loop_spans("\n".join(lines))
                        if _in_any(starts[number - 1] + match.start, loops):
                            continue  # it paces a loop that polls
                    key = (rule.id, number, match.text, match.negated)
                    found.setdefault(
                        key,
                        Finding(
                            rule_id=rule.id,
                            severity="info" if match.negated else rule.severity,
                            message=_message(rule, where(number), match.negated),
                            matched_text=match.text,
                            line=number,
                            suggested_fix=rule.suggested_fix,
                            negated=match.negated,
                        ),
                    )
    return tuple(sorted(found.values(), key=lambda f: (f.line or 0, f.rule_id, f.matched_text)))


def scan_commands(
    commands: Sequence[str],
    rules: Sequence[AntiPatternRule],
    *,
    running: Callable[[OpenSession], bool] | None = None,
) -> tuple[Finding, ...]:
    """Findings in the shell commands the agent ran, joined in order; lines count across commands.

    Commands are scanned without a negation window: ``sleep 5`` runs whatever words precede it. With
    ``running`` (``sessions.still_running``), a session never ended is an orphan only if still running.
    """
    starts: list[int] = []
    line = 1
    for command in commands:
        starts.append(line)
        line += command.count("\n") + 1

    def locate(number: int) -> str:
        index = max(i for i, start in enumerate(starts) if start <= number)
        return f"command {index + 1}"

    return scan_text(
        "\n".join(commands), rules, negation=False, locate=locate if commands else None, running=running
    )
