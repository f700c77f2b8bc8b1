"""The anti-pattern engine: default rules for driving terminals, rule merging, and line-by-line scans."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from ..model import AntiPatternRule, Pattern
from ..results import Finding
from .patterns import compile_pattern, find_all, is_negated

__all__ = (
    "DEFAULT_RULES",
    "LOOP_AWARE_RULES",
    "ORPHANED_SESSION",
    "effective_rules",
    "has_error",
    "scan_commands",
    "scan_text",
)

ORPHANED_SESSION: Final = "orphaned-session"
# A sleep inside the body of a multi-line poll loop paces the loop; it is not a blind wait. The same-line
# case is in the rule's regex, but a regex sees one line, so the loop structure is tracked here.
LOOP_AWARE_RULES: Final = frozenset({"blind-sleep"})

# Command position: the start of a line (after a list marker or a shell prompt in prose), after a shell
# separator, a pipe, a backtick or a subshell, or after then/else/sudo/exec/nohup/command.
_CMD = (
    r"(?:^\s*(?:[-*+]\s+|\d+[.)]\s+|[$>]\s+)?"
    r"|(?:[;&|`(]|\$\()\s*"
    r"|\b(?:then|else|sudo|exec|nohup|command)\s+)"
)
# A line that polls: its sleep paces a loop rather than hoping the program is ready.
_NOT_POLL = r"^(?!.*\b(?:while|until|for|do|done|retry\w*|poll\w*|deadline)\b)"
# tmux's global options come before its command; -L/-S among them choose a private server.
_TMUX_FLAGS = r"(?:\s+-[2CDNluvV]+|\s+-[cfT]\s*\S+)*"
_TMUX_ANY_FLAGS = r"(?:\s+-[2CDNluvV]+|\s+-[cfTLS]\s*\S+)*"
_TMUX_WORD = r"(?<![\w./$-])(?:[\w.~-]*/)*tmux(?![\w.-])"
_PRIVATE = r"\s+-[2CDNluvV]*[LS]"
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
    "(?:" + "|".join(sorted(map(re.escape, _TMUX_COMMANDS), key=len, reverse=True)) + r")(?![\w-])"
)

DEFAULT_RULES: Final[tuple[AntiPatternRule, ...]] = (
    AntiPatternRule(
        id="blind-sleep",
        description="waits a fixed time (sleep N) instead of polling for observable output",
        severity="error",
        patterns=(
            Pattern(regex=_NOT_POLL + r".*?" + _CMD + r"(sleep\s+\d*\.?\d+[smhd]?)\b", flags="i"),
            Pattern(regex=_NOT_POLL + r".*?\b(time\.sleep\(\s*\d*\.?\d+\s*\))", flags="i"),
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
                regex=r"(?<![\w./-])(import\s+-window|scrot|gnome-screenshot|screencapture|xwd|xdotool)(?![\w-])",
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
        patterns=(Pattern(regex=_CMD + r"(screen)(?=\s+-|\s*(?:$|[;&|)`]))", flags=""),),
        suggested_fix="use tmux on a private socket: tmux -L NAME new-session -d -s SESSION 'program'",
    ),
    AntiPatternRule(
        id="user-tmux-server",
        description="runs tmux without -L NAME or -S PATH, which touches the user's default tmux server",
        severity="warning",
        patterns=(
            Pattern(
                regex=f"({_TMUX_WORD})(?!{_TMUX_FLAGS}{_PRIVATE})(?={_TMUX_FLAGS}\\s+{_TMUX_COMMAND})",
                flags="",
            ),
        ),
        suggested_fix="pass a private socket to every tmux command: tmux -L NAME ...",
    ),
    AntiPatternRule(
        id=ORPHANED_SESSION,
        description="creates a tmux session that is never killed",
        severity="warning",
        # Procedural: these patterns recognise a session being created; the engine pairs each creation
        # with a kill-session or kill-server.
        patterns=(Pattern(regex=_TMUX_WORD + _TMUX_ANY_FLAGS + r"\s+(new-session|new)(?![\w-])", flags=""),),
        suggested_fix="end every session you start: tmux -L NAME kill-session -t SESSION",
    ),
)

_KILL = re.compile(_TMUX_WORD + _TMUX_ANY_FLAGS + r"\s+(kill-session|kill-server)(?![\w-])")
_COMMENT = re.compile(r"^\s*(?:#|//)")
_SHELL_LOOP_OPEN = re.compile(r"(?:\b(?:while|until|for|select)\b.*[;\s]|^\s*)do\s*(?:#.*)?$")
_SHELL_LOOP_CLOSE = re.compile(r"^\s*done\b")
_PY_LOOP = re.compile(r"^(\s*)(?:async\s+)?(?:while|for)\b.*:\s*(?:#.*)?$")
_NAME_FLAG = {"new-session": "-s", "new": "-s", "kill-session": "-t"}


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


def _loop_bodies(lines: Sequence[str]) -> set[int]:
    """Indexes of lines inside a multi-line shell (do ... done) or Python (while/for:) loop body."""
    inside: set[int] = set()
    depth = 0
    headers: list[int] = []  # indentation of the open Python loop headers
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while headers and indent <= headers[-1]:
            headers.pop()
        if _SHELL_LOOP_CLOSE.match(line):
            depth = max(0, depth - 1)
        elif depth or headers:
            inside.add(index)
        if _SHELL_LOOP_OPEN.search(line) and not _COMMENT.match(line):
            depth += 1
        if (header := _PY_LOOP.match(line)) is not None:
            headers.append(len(header.group(1)))
    return inside


def _message(rule: AntiPatternRule, where: str, negated: bool) -> str:
    text = rule.description or f"anti-pattern {rule.id!r}"
    if where:
        text += f" ({where})"
    if negated:
        text += "; only in a negation context, so it does not count"
    return text


def _join(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


def _session_name(line: str, start: int, command: str) -> str | None:
    segment = re.split(r"\s(?:;|&&|\|\|?)\s|\\;", line[start:], maxsplit=1)[0]
    flag = _NAME_FLAG.get(command)
    if flag is None:
        return None
    found = re.search(rf"\s{flag}\s*(['\"]?)([^\s'\";]+)\1", segment)
    if found is None:
        return None
    return re.split(r"[:.]", found.group(2).lstrip("="), maxsplit=1)[0] or None


def _orphans(
    rule: AntiPatternRule,
    lines: Sequence[tuple[int, str]],
    *,
    negation: bool,
    locate: Callable[[int], str],
) -> list[Finding]:
    """Sessions created and never killed; ``lines`` are the (number, line) pairs that are not comments."""
    creates: list[tuple[int, str, str | None]] = []
    kills: list[str | None] = []
    for number, line in lines:
        for pattern in rule.patterns:
            for match in find_all(pattern, line, negation=negation):
                if not match.negated:
                    creates.append((number, match.text, _session_name(line, match.start, match.text)))
        for kill in _KILL.finditer(line):
            if negation and is_negated(line, kill.start()):
                continue
            if kill.group(1) == "kill-server":
                return []  # every session of that server ends with it
            kills.append(_session_name(line, kill.start(1), "kill-session"))
    # Named sessions pair with kills of the same name first; what is left pairs in order.
    left: list[tuple[int, str, str | None]] = []
    for create in creates:
        if create[2] is not None and create[2] in kills:
            kills.remove(create[2])
        else:
            left.append(create)
    orphans = left[len(kills) :]
    return [
        Finding(
            rule_id=rule.id,
            severity=rule.severity,
            message=_message(rule, _join(f"session {name!r}" if name else "", locate(number)), False),
            matched_text=text,
            line=number,
            suggested_fix=rule.suggested_fix,
        )
        for number, text, name in orphans
    ]


def scan_text(
    text: str,
    rules: Sequence[AntiPatternRule],
    *,
    negation: bool,
    locate: Callable[[int], str] | None = None,
) -> tuple[Finding, ...]:
    """Findings of ``rules`` in ``text``, line by line, deduplicated and sorted by (line, rule id).

    Comment-only lines (``#``, ``//``) are skipped. With ``negation`` (prose), an occurrence after "instead
    of", "never", "don't" ... is kept with ``negated=True`` and severity info, so it never gates.
    ``locate`` turns a line number into a place such as "command 3" for the message.
    """
    where = locate or (lambda _line: "")
    lines = text.split("\n")
    scanned = [(number, line) for number, line in enumerate(lines, 1) if not _COMMENT.match(line)]
    loops: set[int] | None = None  # loop bodies: found the first time a loop-aware rule matches a line
    found: dict[tuple[str, int, str, bool], Finding] = {}
    for rule in rules:
        if rule.id == ORPHANED_SESSION:
            for finding in _orphans(rule, scanned, negation=negation, locate=where):
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
                if loop_aware:
                    if loops is None:
                        loops = _loop_bodies(lines)
                    if number - 1 in loops:
                        break  # the rule does not apply inside a loop body: not to this line at all
                for match in find_all(pattern, line, negation=negation):
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


def scan_commands(commands: Sequence[str], rules: Sequence[AntiPatternRule]) -> tuple[Finding, ...]:
    """Findings in the shell commands the agent ran, joined in order; lines count across commands.

    Commands are scanned without a negation window: ``sleep 5`` runs whatever words precede it.
    """
    starts: list[int] = []
    line = 1
    for command in commands:
        starts.append(line)
        line += command.count("\n") + 1

    def locate(number: int) -> str:
        index = max(i for i, start in enumerate(starts) if start <= number)
        return f"command {index + 1}"

    return scan_text("\n".join(commands), rules, negation=False, locate=locate if commands else None)
