"""A trial's own page (``trial.html`` in its folder): prompt, conversation, checks, evidence, media.

Read from the files the trial left (prompt.txt, trace.json, the proof bundle); a file that is gone or
unreadable is said on the page, never a failure of the report.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from ..cost.summary import dollars
from ..model import (
    ArtifactExists,
    Case,
    CommandCheck,
    CustomVerifier,
    FileContains,
    FileExists,
    FixtureLogContains,
)
from ..results import TrialResult
from ..trace import Message, Trace, conversation
from .templating import environment, static

TRIAL_PAGE: Final = "trial.html"
# Longer outputs and files are folded (and cut, with the rest left in the trial's files).
FOLD_LINES: Final = 12
MAX_SHOWN_CHARS: Final = 20_000
MAX_BUNDLE_FILES: Final = 200
MAX_FRAMES: Final = 120
IMAGES: Final = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp")
VIDEOS: Final = (".webm", ".mp4")
TEXTS: Final = (".md", ".txt", ".json", ".log", ".jsonl", ".csv")
# Terminal escapes a recording's frames drop: CSI sequences, OSC strings, charset picks, keypad modes.
_ANSI: Final = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\x1b[=>78]"
)
_trace_decoder: Final = msgspec.json.Decoder(Trace)


class Shown(msgspec.Struct, frozen=True, kw_only=True):
    """Text as a page shows it: cut when huge, folded when long."""

    text: str
    folded: bool
    cut: int = 0  # characters left out (still in the trial's files)


def shown(text: str) -> Shown:
    cut = max(0, len(text) - MAX_SHOWN_CHARS)
    body = text[:MAX_SHOWN_CHARS] if cut else text
    return Shown(text=body, folded=cut > 0 or body.count("\n") >= FOLD_LINES, cut=cut)


def trial_page(run_dir: Path, result: TrialResult, case: Case | None = None) -> str | None:
    """Write the trial's page into its folder; its path relative to the run folder, or None (no folder).

    ``case`` is the case as the suite defines it now, given only when its fingerprint is the trial's: it
    says which files the verifiers read.
    """
    folder = run_dir / result.paths.dir
    if not folder.is_dir():
        return None
    depth = len(Path(result.paths.dir).parts)
    trace, trace_problem = _trace(run_dir, result)
    html = (
        environment()
        .get_template("trial.html.j2")
        .render(
            r=result,
            report_link="../" * depth + "report.html",
            folder=str(folder.resolve()),
            prompt=_text_file(folder / "prompt.txt") or _transcript_prompt(folder / "transcript.md"),
            trace=trace,
            trace_problem=trace_problem,
            conversation=_conversation(trace),
            order_unknown=trace is not None
            and any(c.after_messages is None for c in trace.tool_calls)
            and bool(trace.messages),
            findings=_findings(result, trace),
            bundle=_bundle(run_dir, result),
            files=_trial_files(result),
            reads=verifier_reads(case, folder) if case is not None else [],
            judged=[c for c in result.grade.checks if c.kind == "judge"] if result.grade else [],
            judge_link=_relative(result.paths.judge, Path(result.paths.dir)) if result.paths.judge else None,
            dollars=dollars,
            style=static("style.css"),
            script=static("trial.js"),
            shown_text=shown,
        )
    )
    # Written in place, not through a temp file and a rename: a page is a view `skillgym report` rebuilds
    # from the trial's files, and the rename over an earlier page costs more than rendering it.
    try:
        (folder / TRIAL_PAGE).write_text(html, encoding="utf-8")
    except OSError:
        return None  # a trial folder made read-only: report.html shows the trial unlinked, as with no folder
    return f"{result.paths.dir.replace(os.sep, '/')}/{TRIAL_PAGE}"


def _trace(run_dir: Path, result: TrialResult) -> tuple[Trace | None, str | None]:
    if result.paths.trace is None:
        return None, "this trial has no trace (the provider never answered)"
    try:
        return _trace_decoder.decode((run_dir / result.paths.trace).read_bytes()), None
    except OSError as exc:
        return None, f"{result.paths.trace} cannot be read ({exc.strerror or exc})"
    except msgspec.DecodeError as exc:
        return None, f"{result.paths.trace} is not a trace ({exc})"


def _text_file(path: Path) -> Shown | None:
    try:
        return shown(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None


def _transcript_prompt(path: Path) -> Shown | None:
    """The prompt as transcript.md holds it: a trial with no workspace (prompt lane) has no prompt.txt."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    _, found, rest = text.partition("\n## Prompt\n\n")
    fence, _newline, body = rest.partition("\n")
    if not found or not fence.startswith("```") or f"\n{fence}\n" not in f"\n{body}":
        return None
    return shown(f"\n{body}".split(f"\n{fence}\n", 1)[0].removeprefix("\n"))


def _conversation(trace: Trace | None) -> list[dict[str, Any]]:
    """The messages and tool calls in the order they happened; a call keeps its number (its anchor)."""
    if trace is None:
        return []
    out: list[dict[str, Any]] = []
    for entry in conversation(trace):
        if isinstance(entry, Message):
            out.append({"kind": "message", "message": entry, "text": shown(entry.text)})
            continue
        number, call = entry
        out.append(
            {
                "kind": "call",
                "number": number,
                "call": call,
                "input": shown(f"$ {call.command}" if call.command is not None else call.input),
                "output": shown(call.output),
            }
        )
    return out


def _findings(result: TrialResult, trace: Trace | None) -> list[dict[str, Any]]:
    """Each anti-pattern finding with the tool call that fired it (lines count across the commands run)."""
    if result.grade is None:
        return []
    numbers: list[int] = []  # the tool call number of each shell command, in order
    starts: list[int] = []  # the first line of each command in the text the rules scanned
    if trace is not None and result.id.lane != "prompt":
        line = 1
        for number, call in enumerate(trace.tool_calls, start=1):
            if call.command is not None:
                numbers.append(number)
                starts.append(line)
                line += call.command.count("\n") + 1
    out = []
    for finding in result.grade.findings:
        fired_by: int | None = None
        if starts and finding.line is not None:
            index = max((i for i, start in enumerate(starts) if start <= finding.line), default=None)
            fired_by = None if index is None else numbers[index]
        out.append({"f": finding, "call": fired_by})
    return out


def _trial_files(result: TrialResult) -> list[tuple[str, str]]:
    """The trial's own files, as links relative to its folder."""
    paths = result.paths
    named = (
        ("result.json", paths.result),
        ("trace.json", paths.trace),
        ("transcript.md", paths.transcript),
        ("stdout.txt", paths.stdout),
        ("stderr.txt", paths.stderr),
        ("token-usage.json", paths.token_usage),
        ("judge.json", paths.judge),
        ("workspace/", paths.workspace),
    )
    base = Path(paths.dir)
    return [(label, _relative(path, base)) for label, path in named if path is not None]


def _relative(path: str, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


def _bundle(run_dir: Path, result: TrialResult) -> list[dict[str, Any]]:
    """The proof bundle's files: images and videos shown, recordings as frames, text folded."""
    if result.paths.bundle is None:
        return []
    root = run_dir / result.paths.bundle
    if not root.is_dir():
        return []
    files = sorted(p for p in root.rglob("*") if p.is_file())[:MAX_BUNDLE_FILES]
    base = Path(result.paths.dir)
    out = []
    for path in files:
        rel = path.relative_to(run_dir).as_posix()
        entry: dict[str, Any] = {"name": path.relative_to(root).as_posix(), "href": _relative(rel, base)}
        suffix = path.suffix.lower()
        if suffix in IMAGES:
            entry["kind"] = "image"
        elif suffix in VIDEOS:
            entry["kind"] = "video"
        elif suffix == ".cast":
            entry["kind"] = "cast"
            entry["frames"] = cast_frames(path)
        elif suffix in TEXTS:
            entry["kind"] = "text"
            entry["text"] = _text_file(path)
        else:
            entry["kind"] = "file"
        out.append(entry)
    order = ("image", "video", "cast", "text", "file")  # the evidence to look at first, then the notes
    return sorted(out, key=lambda e: order.index(e["kind"]))


def cast_frames(path: Path) -> list[dict[str, Any]]:
    """An asciicast (v2) as text frames: the screen's text after each burst of output, escapes removed.

    Not a terminal emulator: cursor movement is dropped, carriage returns rewrite their line. Enough to
    see what the recording shows, offline and without a player; the .cast itself is linked for a real one.
    """
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    try:
        header = json.loads(lines[0]) if lines else {}
    except json.JSONDecodeError:
        return []
    rows = int(header.get("height", 24)) if isinstance(header, dict) else 24
    screen: list[str] = [""]
    frames: list[dict[str, Any]] = []
    for raw in lines[1:]:
        try:
            time, kind, data = json.loads(raw)
        except (json.JSONDecodeError, ValueError, TypeError):
            continue
        if kind != "o" or not isinstance(data, str):
            continue
        _feed(screen, _ANSI.sub("", data))
        frames.append({"time": round(float(time), 2), "text": "\n".join(screen[-rows:])})
    return _thin(frames)


def _feed(screen: list[str], data: str) -> None:
    for index, part in enumerate(data.split("\n")):
        if index:
            screen.append("")
        for piece_index, piece in enumerate(part.split("\r")):
            if piece_index:  # a carriage return: what follows overwrites the line from its start
                screen[-1] = piece + screen[-1][len(piece) :]
            else:
                screen[-1] += piece


def _thin(frames: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most MAX_FRAMES frames, evenly spread, always keeping the last."""
    if len(frames) <= MAX_FRAMES:
        return list(frames)
    step = len(frames) / MAX_FRAMES
    picked = [frames[int(i * step)] for i in range(MAX_FRAMES - 1)]
    return [*picked, frames[-1]]


def verifier_reads(case: Case, folder: Path) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Per verifier (by check id): what it reads, linked (relative to the trial folder) where it is kept."""
    out: list[tuple[str, list[tuple[str, str | None]]]] = []
    for verifier in getattr(case, "verifiers", ()):
        if isinstance(verifier, FileExists | FileContains):
            targets = [f"workspace/{verifier.path}"]
        elif isinstance(verifier, FixtureLogContains):
            targets = [f"fixture-logs/{verifier.fixture}.jsonl"]
        elif isinstance(verifier, ArtifactExists):
            targets = [f"workspace/{pattern}" for pattern in verifier.path_patterns] or ["workspace/"]
        elif isinstance(verifier, CommandCheck):
            out.append((verifier.id, [(f"what `{shlex.join(verifier.argv)}` reads", None)]))
            continue
        elif isinstance(verifier, CustomVerifier):
            out.append((verifier.id, [(f"what {verifier.target} reads", None)]))
            continue
        else:
            continue
        out.append((verifier.id, [(t, t if (folder / t).is_file() else None) for t in targets]))
    return out
