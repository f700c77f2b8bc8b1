"""The stub provider: canned final answers a suite declares under ``stubs/``, for plumbing and demos."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ..identity import TrialId
from ..plugins import provider
from ..sandboxes.base import Network
from ..trace import Trace
from ..workspaces.paths import UnsafePathError, check_segment
from .base import Detection, ProviderRequest, ProviderResult, ProviderSettings

STUBS_DIR: Final = "stubs"


@provider
class StubProvider:
    """Answers with ``stubs/<case>/<condition>.md``, else ``stubs/<case>.md``; runs nothing.

    A plan whose trials lack either file is refused before the run (``missing_material``); a file that
    goes missing during the run fails its trial as an environment-error rather than inventing an answer.
    """

    name = "stub"
    skill_dirs: tuple[str, ...] = (".claude/skills", ".agents/skills")
    runs_agent: bool = False
    network: Network = "none"
    sandbox_readable: tuple[str, ...] = ()
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

    async def detect(self) -> Detection:
        return Detection(provider=self.name, available=True)

    async def invoke(self, request: ProviderRequest) -> ProviderResult:
        case, condition = request.id.case_id, request.id.condition
        try:
            text = self.canned(case, condition)
        except (UnsafePathError, OSError, UnicodeDecodeError) as exc:
            return _failed(f"stub provider cannot read its canned output for case {case!r}: {exc}")
        if text is None:  # the plan checked every answer: this one went missing during the run
            return _failed(
                f"stub provider has no canned output for case {case}: add stubs/{case}.md "
                f"(or stubs/{case}/{condition}.md for the {condition!r} condition only)"
            )
        # No process ran, so there is no stdout.txt or stderr.txt: the answer lives in the trace.
        return ProviderResult(ok=True, trace=Trace(final_text=text))

    def missing_material(self, trials: Sequence[TrialId]) -> list[str]:
        """One line per case/condition of ``trials`` with no canned answer or one outside the suite."""
        problems: list[str] = []
        base = Path(self._root).parent.resolve()
        for case, condition in dict.fromkeys((t.case_id, t.condition) for t in trials):
            try:
                path = self.source(case, condition)
            except UnsafePathError as exc:
                problems.append(str(exc))
                continue
            if path is None:
                problems.append(
                    f"stub has nothing to play for case {case!r} under condition {condition!r}: "
                    f"add {os.path.join(self._root, case)}.md "
                    f"(or {os.path.join(self._root, case, condition)}.md for that condition only)"
                )
                continue
            target = Path(os.path.realpath(path))
            if not target.is_relative_to(base):
                problems.append(
                    f"stub answer for case {case!r}: the symlink {path} points to {target}, outside the "
                    f"suite {base}; skillgym does not follow links out of the suite: copy the file into "
                    "the suite or point the link inside it"
                )
        return problems

    def source(self, case: str, condition: str) -> str | None:
        """The file that answers ``case`` under ``condition`` (the condition's own first), or None."""
        for segment, what in ((case, "case id"), (condition, "condition id")):
            check_segment(segment, what=what)
        for path in (
            os.path.join(self._root, case, f"{condition}.md"),
            os.path.join(self._root, f"{case}.md"),
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
    # A missing or unreadable answer is the suite's configuration, never the agent's failure.
    return ProviderResult(ok=False, trace=Trace(), error_class="environment-error", error_message=message)
