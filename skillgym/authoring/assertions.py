"""Verifiers: ``with c.assertions() as a:`` records checks of real effects left in the workspace."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Self, cast, get_args

import msgspec

from ..errors import DefinitionError
from ..model import (
    ArtifactExists,
    ArtifactKind,
    CommandCheck,
    CustomVerifier,
    FileContains,
    FileExists,
    FixtureEvent,
    FixtureLogContains,
    JudgedCheck,
    NoLiveSessions,
    Pattern,
    Verifier,
)
from .checks import (
    PatternLike,
    check_argv,
    check_choice,
    check_id,
    check_int,
    check_number,
    check_pattern,
    check_relative_path,
    check_target,
    check_text,
    stamp,
    to_pattern,
)
from .graph import free_verifier_id
from .recorder import Block

ARTIFACT_KINDS: tuple[ArtifactKind, ...] = get_args(ArtifactKind)
_VERIFIER_TYPES = get_args(Verifier)


class AssertionsBuilder(Block):
    """Records verifiers; each is required unless ``required=False``, and gets an id such as
    ``file-contains-1`` unless ``id=`` names it."""

    def __init__(
        self,
        *,
        case_id: str,
        opened_at: str,
        verifier_ids: set[str],
        fixture: Callable[[], str | None],
    ) -> None:
        super().__init__(case_id=case_id, opened_at=opened_at)
        self._verifier_ids = verifier_ids  # the case's, shared by all its blocks: auto ids skip every one
        self._fixture = fixture
        self._verifiers: list[Verifier] = []
        self._judged: list[JudgedCheck] = []

    def file_exists(
        self, path: str, *, id: str | None = None, description: str = "", required: bool = True
    ) -> Self:
        """A file (relative to the workspace) exists after the trial."""
        at = self._use("file_exists")
        path = check_relative_path(path, what="a.file_exists() path", case_id=self._case_id, origin=at)
        ident = self._ident("file-exists", id, at)
        return self._add(
            FileExists(id=ident, description=description, required=required, path=path, origin=at)
        )

    def file_contains(
        self,
        path: str,
        pattern: PatternLike,
        *,
        id: str | None = None,
        description: str = "",
        required: bool = True,
    ) -> Self:
        """A workspace file exists and its text matches ``pattern`` (a str is a case-insensitive regex)."""
        at = self._use("file_contains")
        path = check_relative_path(path, what="a.file_contains() path", case_id=self._case_id, origin=at)
        ident = self._ident("file-contains", id, at)
        found = to_pattern(pattern, where=f"in verifier {ident!r}", case_id=self._case_id, origin=at)
        return self._add(
            FileContains(
                id=ident, description=description, required=required, path=path, pattern=found, origin=at
            )
        )

    def fixture_received(
        self,
        text: str | re.Pattern[str],
        *,
        fixture: str | None = None,
        id: str | None = None,
        description: str = "",
        required: bool = True,
    ) -> Self:
        """The fixture's own log shows it received ``text`` (literal, case-sensitive; or a compiled regex)."""
        at = self._use("fixture_received")
        ident = self._ident("fixture-received", id, at)
        if isinstance(text, str):
            check_text(text, what="a.fixture_received() text", case_id=self._case_id, origin=at)
            found = Pattern(regex=re.escape(text), flags="")
        else:
            found = to_pattern(text, where=f"in verifier {ident!r}", case_id=self._case_id, origin=at)
        return self._fixture_log(
            "fixture_received", "input", found, fixture, ident, description, required, at
        )

    def fixture_printed(
        self,
        pattern: PatternLike,
        *,
        fixture: str | None = None,
        id: str | None = None,
        description: str = "",
        required: bool = True,
    ) -> Self:
        """The fixture's own log shows it printed output matching ``pattern``."""
        at = self._use("fixture_printed")
        ident = self._ident("fixture-printed", id, at)
        found = to_pattern(pattern, where=f"in verifier {ident!r}", case_id=self._case_id, origin=at)
        return self._fixture_log(
            "fixture_printed", "output", found, fixture, ident, description, required, at
        )

    def fixture_exited(
        self,
        code: int,
        *,
        fixture: str | None = None,
        id: str | None = None,
        description: str = "",
        required: bool = True,
    ) -> Self:
        """The fixture's own log shows it exited with ``code``."""
        at = self._use("fixture_exited")
        if not isinstance(code, int) or isinstance(code, bool):
            raise DefinitionError(
                f"a.fixture_exited() code must be an int such as 0 or 1, got {code!r}",
                case_id=self._case_id,
                origin=at,
            )
        ident = self._ident("fixture-exited", id, at)
        found = Pattern(regex=f"^{code}$", flags="")
        return self._fixture_log("fixture_exited", "exit", found, fixture, ident, description, required, at)

    def command(
        self,
        argv: Sequence[str],
        *,
        exit_code: int = 0,
        stdout: PatternLike | None = None,
        timeout_s: float = 30,
        id: str | None = None,
        description: str = "",
        required: bool = True,
    ) -> Self:
        """After the trial, ``argv`` run in the workspace exits with ``exit_code`` (and prints ``stdout``)."""
        at = self._use("command")
        args = check_argv(argv, what="a.command() argv", case_id=self._case_id, origin=at)
        if not isinstance(exit_code, int) or isinstance(exit_code, bool):
            raise DefinitionError(
                f"a.command() exit_code must be an int, got {exit_code!r}", case_id=self._case_id, origin=at
            )
        timeout = check_number(timeout_s, what="a.command() timeout_s", case_id=self._case_id, origin=at)
        ident = self._ident("command", id, at)
        found = None
        if stdout is not None:
            found = to_pattern(stdout, where=f"in verifier {ident!r}", case_id=self._case_id, origin=at)
        return self._add(
            CommandCheck(
                id=ident,
                description=description,
                required=required,
                argv=args,
                exit_code=exit_code,
                stdout_pattern=found,
                timeout_s=timeout,
                origin=at,
            )
        )

    def no_live_sessions(
        self, *, id: str | None = None, description: str = "", required: bool = True
    ) -> Self:
        """No tmux session is left running when the trial ends."""
        at = self._use("no_live_sessions")
        ident = self._ident("no-live-sessions", id, at)
        return self._add(NoLiveSessions(id=ident, description=description, required=required, origin=at))

    def artifact_exists(
        self,
        kind: ArtifactKind,
        *path_patterns: str,
        min_count: int = 1,
        id: str | None = None,
        description: str = "",
        required: bool = True,
    ) -> Self:
        """At least ``min_count`` artifacts of ``kind`` (optionally matching glob ``path_patterns``) exist."""
        at = self._use("artifact_exists")
        artifact = check_choice(kind, ARTIFACT_KINDS, what="artifact kind", case_id=self._case_id, origin=at)
        globs = tuple(
            check_text(p, what="artifact path pattern", case_id=self._case_id, origin=at)
            for p in path_patterns
        )
        count = check_int(min_count, what="min_count", case_id=self._case_id, origin=at)
        ident = self._ident("artifact-exists", id, at)
        return self._add(
            ArtifactExists(
                id=ident,
                description=description,
                required=required,
                artifact=artifact,
                min_count=count,
                path_patterns=globs,
                origin=at,
            )
        )

    def custom(
        self,
        target: str,
        *,
        id: str | None = None,
        description: str = "",
        required: bool = True,
        **config: Any,
    ) -> Self:
        """Call the user function ``target`` ("module:function") with the trial context and ``config``."""
        at = self._use("custom")
        target = check_target(target, case_id=self._case_id, origin=at)
        try:
            msgspec.json.encode(config)
        except (TypeError, msgspec.EncodeError) as exc:
            raise DefinitionError(
                f"a.custom({target!r}) config must be JSON data (str, numbers, bools, None, lists, "
                f"dicts): {exc}",
                case_id=self._case_id,
                origin=at,
            ) from exc
        ident = self._ident("custom", id, at)
        return self._add(
            CustomVerifier(
                id=ident,
                description=description,
                required=required,
                target=target,
                config=dict(config),
                origin=at,
            )
        )

    def judge(
        self,
        expectation: str,
        *,
        files: Sequence[str] = (),
        required: bool = True,
        id: str | None = None,
    ) -> Self:
        """An LLM judge must find ``expectation`` (plain language) met by the trial's material.

        The judge reads the task, the agent's final answer, the commands it ran with their output, and
        ``files`` (workspace paths); it never learns the condition. Graded by the run's ``--judge``; a
        judge that cannot decide makes the check a grader-error, never a pass.
        """
        at = self._use("judge")
        text = check_text(expectation, what="a.judge() expectation", case_id=self._case_id, origin=at)
        if isinstance(files, str):
            raise DefinitionError(
                f"a.judge(files=...) takes a list of paths, got the string {files!r}; "
                f"write files=[{files!r}]",
                case_id=self._case_id,
                origin=at,
            )
        paths = tuple(
            check_relative_path(f, what="a.judge() file", case_id=self._case_id, origin=at) for f in files
        )
        ident = self._ident("judge", id, at)
        self._judged.append(
            JudgedCheck(id=ident, expectation=text, required=bool(required), files=paths, origin=at)
        )
        self._verifier_ids.add(ident)
        return self

    def raw(self, verifier: Verifier) -> Self:
        """Append a verifier Struct as given (its origin is filled in when empty)."""
        at = self._use("raw")
        return self._add(raw_verifier(verifier, case_id=self._case_id, origin=at))

    def _ident(self, stem: str, given: str | None, at: str) -> str:
        if given is None:
            return free_verifier_id(stem, self._verifier_ids)
        return check_id(given, what="verifier id", case_id=self._case_id, origin=at)

    def _fixture_log(
        self,
        method: str,
        event: FixtureEvent,
        pattern: Pattern,
        fixture: str | None,
        ident: str,
        description: str,
        required: bool,
        at: str,
    ) -> Self:
        name = fixture if fixture is not None else self._fixture()
        if name is None:
            raise DefinitionError(
                f"a.{method}() checks the fixture's log, but the case has no fixture yet; "
                f"call c.fixture(name) before a.{method} (or pass fixture=...)",
                case_id=self._case_id,
                origin=at,
            )
        name = check_id(name, what="fixture name", case_id=self._case_id, origin=at)
        return self._add(
            FixtureLogContains(
                id=ident,
                description=description,
                required=required,
                fixture=name,
                event=event,
                pattern=pattern,
                origin=at,
            )
        )

    def _add(self, verifier: Verifier) -> Self:
        self._verifiers.append(verifier)
        self._verifier_ids.add(verifier.id)
        return self

    def _recorded(self) -> tuple[Verifier, ...]:
        """What the block holds so far (nothing once discarded), without the empty-block check."""
        return () if self._discarded else tuple(self._verifiers)

    def _judged_checks(self) -> tuple[JudgedCheck, ...]:
        """The block's judged checks (none once discarded)."""
        return () if self._discarded else tuple(self._judged)

    def _compile(self) -> tuple[Verifier, ...]:
        """The recorded verifiers (none when the block raised); an empty block is an error at its line."""
        if self._discarded:
            return ()
        if not self._verifiers and not self._judged:
            raise DefinitionError(
                "the assertions block records no verifier; add one such as a.file_exists('out.txt') "
                "or remove the block",
                case_id=self._case_id,
                origin=self._opened_at,
            )
        return tuple(self._verifiers)


def raw_verifier(verifier: object, *, case_id: str, origin: str) -> Verifier:
    """Check a hand-built verifier Struct and give it the caller's origin when it has none."""
    if not isinstance(verifier, _VERIFIER_TYPES):
        names = ", ".join(t.__name__ for t in _VERIFIER_TYPES)
        raise DefinitionError(
            f"expected a verifier Struct ({names}), got {type(verifier).__name__}",
            case_id=case_id,
            origin=origin,
        )
    checked = cast(Verifier, verifier)
    check_id(checked.id, what="verifier id", case_id=case_id, origin=origin)
    where = f"in verifier {checked.id!r}"
    if isinstance(checked, CommandCheck):
        check_argv(checked.argv, what=f"argv {where}", case_id=case_id, origin=origin)
    # A str (or compiled re.Pattern) where the model holds a Pattern becomes one, as everywhere else in
    # authoring: the grader reads .regex and .flags.
    converted: dict[str, Pattern] = {}
    for name in ("pattern", "stdout_pattern"):
        value = getattr(checked, name, None)
        if value is not None:
            pattern = check_pattern(value, where=where, case_id=case_id, origin=origin)
            if pattern is not value:
                converted[name] = pattern
    if converted:
        checked = msgspec.structs.replace(checked, **converted)
    return stamp(checked, origin)
