"""The stub provider: canned answers a suite declares under ``stubs/``, for plumbing and demos.

A prompt-lane stub is the answer's text (``.md``). In the execution and dogfood lanes a stub may also be
a skillgym-trace (``.jsonl``, the command provider's line protocol) whose shell commands and file writes
are re-enacted in the trial's workspace as replay re-enacts a cassette, so a suite's verifiers can be
tried on real files before any agent runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ..identity import TrialId
from ..judge.questions import Question
from ..judge.stub import stub_answer
from ..plugins import provider
from ..sandboxes.base import Network
from ..trace import Trace
from ..workspaces.paths import UnsafePathError, check_segment
from .base import Detection, ProviderRequest, ProviderResult, ProviderSettings
from .replay import REENACT_LANES, reenact
from .tracefmt import StreamParseError, parse_trace_stream

STUBS_DIR: Final = "stubs"


@provider
class StubProvider:
    """Answers with ``stubs/<case>/<condition>.md``, else ``stubs/<case>.md``; runs no agent.

    In the execution and dogfood lanes ``stubs/<case>/<condition>.jsonl``, else ``stubs/<case>.jsonl``,
    comes first: a skillgym-trace whose commands and file writes are re-enacted in the workspace.
    A plan whose trials lack all of these files is refused before the run (``missing_material``); a file
    that goes missing or does not parse during the run fails its trial as an environment-error (the
    suite's configuration, not the agent's failure) rather than inventing an answer.
    """

    name = "stub"
    skill_dirs: tuple[str, ...] = (".claude/skills", ".agents/skills")
    runs_agent: bool = False
    reports_usage = False  # no agent, no spend: a budget over it could never see one (run.check_budget)
    network: Network = "none"
    sandbox_readable: tuple[str, ...] = ()
    default_concurrency = 16  # no agent: a canned answer, or a trace whose commands run again
    passthrough_env: tuple[str, ...] = ()
    home_env: dict[str, str] = {}
    stream_format: str | None = None

    def __init__(self, suite_root: Path) -> None:
        self._root = os.path.join(suite_root, STUBS_DIR)  # a string: joined once per case, not parsed
        # (case, condition) -> text or None; a large run asks for the same few files thousands of times.
        self._cache: dict[tuple[str, str], str | None] = {}
        self._texts: dict[str, str] = {}  # case -> text of stubs/<case>.md, which serves every condition
        self._safe: set[str] = set()  # ids that passed check_segment
        self._listing: frozenset[str] | None = None  # names directly in stubs/, listed once per run

    @classmethod
    def from_settings(cls, settings: ProviderSettings) -> StubProvider:
        return cls(Path(settings.suite_root))

    def judge_answer(self, question: Question) -> str:
        """``--judge stub``: a deterministic word-matching answer (see ``skillgym.judge.stub``)."""
        return stub_answer(question)

    async def detect(self) -> Detection:
        return Detection(provider=self.name, available=True)

    async def invoke(self, request: ProviderRequest) -> ProviderResult:
        case, condition = request.id.case_id, request.id.condition
        if request.id.lane in REENACT_LANES:
            scripted = await self._scripted(request)
            if scripted is not None:
                return scripted
        try:
            text = self.canned(case, condition)
        except (UnsafePathError, OSError, UnicodeDecodeError) as exc:
            return _failed(f"stub provider cannot read its canned output for case {case!r}: {exc}")
        if text is None:
            return _failed(
                f"stub provider has no canned output for case {case}: add stubs/{case}.md "
                f"(or stubs/{case}/{condition}.md for the {condition!r} condition only)"
                + (
                    f", or a skillgym-trace stubs/{case}.jsonl to re-enact"
                    if request.id.lane in REENACT_LANES
                    else ""
                )
            )
        # No process ran, so there is no stdout.txt or stderr.txt: the answer lives in the trace.
        return ProviderResult(ok=True, trace=Trace(final_text=text))

    async def _scripted(self, request: ProviderRequest) -> ProviderResult | None:
        """The re-enacted ``.jsonl`` stub of an execution or dogfood trial, or None when it has none."""
        case, condition = request.id.case_id, request.id.condition
        for segment, what in ((case, "case id"), (condition, "condition id")):
            try:
                check_segment(segment, what=what)
            except UnsafePathError as exc:
                return _failed(f"stub provider cannot read its canned output for case {case!r}: {exc}")
        found = next(
            (
                path
                for path in (Path(self._root, case, f"{condition}.jsonl"), Path(self._root, f"{case}.jsonl"))
                if path.is_file()
            ),
            None,
        )
        if found is None:
            return None
        try:
            with open(found, "rb") as lines:
                trace = parse_trace_stream(lines)
        except StreamParseError as exc:
            return _failed(f"stub {found} is not a skillgym-trace: {exc}")
        except OSError as exc:
            return _failed(f"stub provider cannot read {found}: {exc.strerror or exc}")
        deadline = time.monotonic() + request.timeout_s
        trace, timed_out, warnings = await reenact(trace, request, deadline)
        if timed_out is not None:
            return ProviderResult(
                ok=False,
                trace=trace,
                error_class="timeout",
                error_message=(
                    f"re-enacting stub {found} ran past {request.timeout_s:g}s at command {timed_out}"
                ),
                warnings=warnings,
            )
        return ProviderResult(ok=True, trace=trace, warnings=warnings)

    def missing_material(self, trials: Sequence[TrialId]) -> list[str]:
        """One line per case/condition of ``trials`` with no stub, or with one outside the suite, and one
        per trace stub that does not parse."""
        problems: list[str] = []
        parsed: set[str] = set()  # a trace stub serves every condition: parsed once
        base = Path(self._root).parent.resolve()
        for lane, case, condition in dict.fromkeys((t.lane, t.case_id, t.condition) for t in trials):
            try:
                path = self.source(lane, case, condition)
            except UnsafePathError as exc:
                problems.append(str(exc))
                continue
            if path is None:
                scripted = (
                    f", or a skillgym-trace {os.path.join(self._root, case)}.jsonl to re-enact"
                    if lane in REENACT_LANES
                    else ""
                )
                problems.append(
                    f"stub has nothing to play for {lane} case {case!r} under condition {condition!r}: "
                    f"add {os.path.join(self._root, case)}.md "
                    f"(or {os.path.join(self._root, case, condition)}.md for that condition only){scripted}"
                )
                continue
            target = Path(os.path.realpath(path))
            if not target.is_relative_to(base):
                problems.append(
                    f"stub for case {case!r}: the symlink {path} points to {target}, outside the suite "
                    f"{base}; skillgym does not follow links out of the suite: copy the file into the suite "
                    "or point the link inside it"
                )
            elif path.endswith(".jsonl") and path not in parsed:
                parsed.add(path)
                try:
                    with open(path, "rb") as lines:
                        parse_trace_stream(lines)
                except StreamParseError as exc:
                    problems.append(f"stub {path} is not a skillgym-trace: {exc}")
                except OSError as exc:
                    problems.append(f"stub provider cannot read {path}: {exc.strerror or exc}")
        return problems

    def source(self, lane: str, case: str, condition: str) -> str | None:
        """The file that answers ``case`` under ``condition`` in ``lane``, in lookup order, or None."""
        for segment, what in ((case, "case id"), (condition, "condition id")):
            check_segment(segment, what=what)
        suffixes = (".jsonl", ".md") if lane in REENACT_LANES else (".md",)
        for suffix in suffixes:
            for path in (
                os.path.join(self._root, case, f"{condition}{suffix}"),
                os.path.join(self._root, f"{case}{suffix}"),
            ):
                if os.path.isfile(path):
                    return path
        return None

    def canned(self, case: str, condition: str) -> str | None:
        """The canned answer for ``case`` under ``condition``, or None; each pair is read once."""
        key = (case, condition)
        if key not in self._cache:
            self._cache[key] = self._read(case, condition)
        return self._cache[key]

    def _read(self, case: str, condition: str) -> str | None:
        for segment, what in ((case, "case id"), (condition, "condition id")):
            if segment not in self._safe:  # each id once: a large run asks thousands of times
                check_segment(segment, what=what)
                self._safe.add(segment)
        if self._listing is None:
            try:
                self._listing = frozenset(os.listdir(self._root))
            except (FileNotFoundError, NotADirectoryError):
                self._listing = frozenset()
        if case in self._listing:
            own = os.path.join(self._root, case, f"{condition}.md")
            if os.path.isfile(own):
                return _read_text(own)
        if case not in self._texts:
            name = f"{case}.md"
            path = os.path.join(self._root, name)
            if name not in self._listing or not os.path.isfile(path):
                return None
            self._texts[case] = _read_text(path)
        return self._texts[case]


def _read_text(path: str) -> str:
    # As Path.read_text(encoding="utf-8"), without a Path per file.
    with open(path, encoding="utf-8") as file:
        return file.read()


def _failed(message: str) -> ProviderResult:
    # A missing, unreadable or malformed stub is the suite's configuration, never the agent's failure.
    return ProviderResult(ok=False, trace=Trace(), error_class="environment-error", error_message=message)
