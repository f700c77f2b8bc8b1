"""The stub provider: canned final answers a suite declares under ``stubs/``, for plumbing and demos."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from ..trace import Trace
from ..workspaces.paths import UnsafePathError, check_segment
from .base import Detection, ProviderRequest, ProviderResult

STUBS_DIR: Final = "stubs"


class StubProvider:
    """Answers with ``stubs/<case>/<condition>.md``, else ``stubs/<case>.md``; runs nothing.

    Without either file it fails honestly (provider-error) rather than inventing an answer.
    """

    name: str = "stub"
    skill_dirs: tuple[str, ...] = (".claude/skills", ".agents/skills")
    runs_agent: bool = False
    passthrough_env: tuple[str, ...] = ()

    def __init__(self, suite_root: Path) -> None:
        self._root = Path(suite_root) / STUBS_DIR
        # (case, condition) -> text or None; a large run asks for the same few files thousands of times.
        self._cache: dict[tuple[str, str], str | None] = {}

    async def detect(self) -> Detection:
        return Detection(provider=self.name, available=True)

    async def invoke(self, request: ProviderRequest) -> ProviderResult:
        case, condition = request.case_id, request.condition
        try:
            text = self.canned(case, condition)
        except (UnsafePathError, OSError, UnicodeDecodeError) as exc:
            return _failed(f"stub provider cannot read its canned output for case {case!r}: {exc}")
        if text is None:
            return _failed(
                f"stub provider has no canned output for case {case}: add stubs/{case}.md "
                f"(or stubs/{case}/{condition}.md for the {condition!r} condition only)"
            )
        # No process ran, so there is no stdout.txt or stderr.txt: the answer lives in the trace.
        return ProviderResult(ok=True, trace=Trace(final_text=text))

    def canned(self, case: str, condition: str) -> str | None:
        """The canned answer for ``case`` under ``condition``, or None; each pair is read once."""
        key = (case, condition)
        if key not in self._cache:
            self._cache[key] = self._read(case, condition)
        return self._cache[key]

    def _read(self, case: str, condition: str) -> str | None:
        check_segment(case, what="case id")
        check_segment(condition, what="condition id")
        for path in (self._root / case / f"{condition}.md", self._root / f"{case}.md"):
            if path.is_file():
                return path.read_text(encoding="utf-8")
        return None


def _failed(message: str) -> ProviderResult:
    return ProviderResult(ok=False, trace=Trace(), error_class="provider-error", error_message=message)
