"""Where authoring records definitions, and how a loaded suite is checked and frozen."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

import msgspec

from .errors import CollectionError, DefinitionError
from .model import (
    AntiPatternRule,
    Case,
    Condition,
    DogfoodCase,
    ExecutionCase,
    Fixture,
    FixtureLogContains,
    GateSpec,
    Skill,
    SkillInstall,
    Suite,
    SuiteJudge,
    TrialPolicy,
    WorkspacePreset,
)

_T = TypeVar("_T", Case, Condition, WorkspacePreset, Skill, AntiPatternRule)


class Mark(msgspec.Struct, frozen=True):
    """A registry position to roll back to when a suite file fails to load."""

    sizes: tuple[int, int, int, int, int, int, int]
    replace_defaults: str | None = None
    trials: tuple[TrialPolicy, str] | None = None
    judge: SuiteJudge | None = None


class Registry:
    """Records definitions in registration order; ``build`` validates references and freezes a Suite."""

    def __init__(self) -> None:
        self._cases: dict[str, Case] = {}
        self._conditions: dict[str, Condition] = {}
        self._presets: dict[str, WorkspacePreset] = {}
        self._skills: dict[str, Skill] = {}
        self._anti_patterns: dict[str, AntiPatternRule] = {}
        # Where ``replace_default_conditions()`` was called, or None: the declared conditions then are
        # the suite's only ones, instead of adding to (or replacing by id) the default conditions.
        self._replace_defaults: str | None = None
        self._secrets: dict[str, None] = {}  # the values marked with skillgym.secret(), in order
        self._trials: tuple[TrialPolicy, str] | None = None  # skillgym.trials(): the default and where
        self._gates: dict[str, GateSpec] = {}  # gate(...) in suite.py, by expression
        self._judge: SuiteJudge | None = None  # skillgym.judged_by(...)

    def _tables(self) -> tuple[dict[str, Any], ...]:
        return (
            self._cases,
            self._conditions,
            self._presets,
            self._skills,
            self._anti_patterns,
            self._secrets,
            self._gates,
        )

    @staticmethod
    def _add(table: dict[str, _T], kind: str, key: str, item: _T) -> None:
        previous = table.get(key)
        if previous is not None:
            raise DefinitionError(
                f"duplicate {kind} {key!r}: first defined at {previous.origin or '<unknown>'}, "
                f"again at {item.origin or '<unknown>'}; rename one of them",
                origin=item.origin or None,
            )
        table[key] = item

    def add_case(self, case: Case) -> None:
        self._add(self._cases, "case id", case.id, case)

    def add_condition(self, condition: Condition) -> None:
        self._add(self._conditions, "condition", condition.id, condition)

    def replace_default_conditions(self, origin: str) -> None:
        """The declared conditions are the suite's only ones: the default conditions are dropped."""
        if self._replace_defaults is None:
            self._replace_defaults = origin

    def add_preset(self, preset: WorkspacePreset) -> None:
        self._add(self._presets, "workspace preset", preset.id, preset)

    def add_skill(self, skill: Skill) -> None:
        self._add(self._skills, "skill", skill.name, skill)

    def add_anti_pattern(self, rule: AntiPatternRule) -> None:
        self._add(self._anti_patterns, "anti-pattern rule", rule.id, rule)

    def set_trials(self, policy: TrialPolicy, origin: str) -> None:
        """The suite's default trials; a suite sets it once."""
        if self._trials is not None:
            raise DefinitionError(
                f"skillgym.trials() was already called at {self._trials[1]}; a suite sets its default "
                "trials once: remove one of the calls",
                origin=origin,
            )
        self._trials = (policy, origin)

    def add_gate(self, gate: GateSpec) -> None:
        previous = self._gates.get(gate.expression)
        if previous is not None:
            raise DefinitionError(
                f"duplicate gate {gate.expression!r}: first declared at {previous.origin}, again at "
                f"{gate.origin}; drop one of them",
                origin=gate.origin,
            )
        self._gates[gate.expression] = gate

    def set_judge(self, judge: SuiteJudge) -> None:
        """The suite's judge; a second declaration is an error naming both places."""
        if self._judge is not None:
            raise DefinitionError(
                f"judged_by() was already called at {self._judge.origin or '<unknown>'}; a suite has one "
                "judge: remove one of the calls",
                origin=judge.origin or None,
            )
        self._judge = judge

    def add_secret(self, value: str) -> None:
        self._secrets[value] = None

    @property
    def cases(self) -> tuple[Case, ...]:
        return tuple(self._cases.values())

    @property
    def secrets(self) -> tuple[str, ...]:
        """The values marked secret so far (a case's fingerprint is taken without them)."""
        return tuple(self._secrets)

    def mark(self) -> Mark:
        a, b, c, d, e, f, g = (len(t) for t in self._tables())
        return Mark(
            sizes=(a, b, c, d, e, f, g),
            replace_defaults=self._replace_defaults,
            trials=self._trials,
            judge=self._judge,
        )

    def rollback(self, mark: Mark) -> None:
        """Forget everything registered since ``mark`` (dicts keep insertion order)."""
        for table, size in zip(self._tables(), mark.sizes, strict=True):
            for key in list(table)[size:]:
                del table[key]
        self._replace_defaults = mark.replace_defaults
        self._trials = mark.trials
        self._judge = mark.judge

    def build(self, root: str, fixtures: tuple[Fixture, ...] = ()) -> Suite:
        """Validate cross-references and return the frozen Suite; every problem is listed at once."""
        conditions = self._effective_conditions()
        condition_ids = [c.id for c in conditions]
        errors: list[str] = []
        cases: list[Case] = []
        for case in self._cases.values():
            errors.extend(_reference_errors(case, condition_ids, self._presets, fixtures, self._skills))
            if not case.conditions:
                case = msgspec.structs.replace(case, conditions=tuple(condition_ids))
            cases.append(case)
        if errors:
            raise CollectionError(errors)
        return Suite(
            root=root,
            cases=tuple(cases),
            conditions=conditions,
            presets=tuple(self._presets.values()),
            skills=tuple(self._skills.values()),
            fixtures=fixtures,
            anti_patterns=tuple(self._anti_patterns.values()),
            secrets=tuple(self._secrets),
            trials=self._trials[0] if self._trials is not None else None,
            gates=tuple(self._gates.values()),
            judge=self._judge,
        )

    def _effective_conditions(self) -> tuple[Condition, ...]:
        declared = tuple(self._conditions.values())
        if self._replace_defaults is not None:
            if not declared:
                raise CollectionError(
                    [
                        f"{self._replace_defaults}: replace_default_conditions() drops the default "
                        "conditions, but no condition(...) is declared; declare the conditions this suite "
                        "runs, or drop the call to keep the defaults"
                    ]
                )
            return declared
        return merge_conditions(default_conditions(tuple(self._skills.values())), declared)


def merge_conditions(
    defaults: tuple[Condition, ...], declared: tuple[Condition, ...]
) -> tuple[Condition, ...]:
    """The default conditions with each declared one of the same id in its place, then the other declared
    ones in declaration order: ``condition(...)`` adds a condition, or replaces the default it names."""
    by_id = {c.id: c for c in declared}
    merged = [by_id.pop(c.id, c) for c in defaults]
    return (*merged, *by_id.values())


def default_conditions(skills: tuple[Skill, ...]) -> tuple[Condition, ...]:
    """The four standard conditions for the declared skills (``stale`` only where material exists).

    Every condition that teaches a skill also installs its folder where the agent discovers skills, so
    the scripts and references its text names exist: ``self-load`` and ``preloaded`` the folder as it is,
    ``stale`` the folder with the stale text in place of its ``SKILL.md``.
    """
    if not skills:
        return (Condition(id="none", description="baseline: no skill installed or injected"),)
    stubs = tuple(s.stub for s in skills if s.stub)
    folders = tuple(SkillInstall(name=s.name, source=s.path) for s in skills)
    out = [
        Condition(id="none", description="baseline: no skill installed or injected"),
        Condition(
            id="self-load",
            description="skills installed where the agent finds them natively; it must route itself",
            inject=stubs,
            install=folders,
        ),
        Condition(
            id="preloaded",
            description="the full SKILL.md text injected into the prompt (the oracle), the folders installed",
            inject=tuple(f"{s.path.rstrip('/')}/SKILL.md" for s in skills),
            install=folders,
        ),
    ]
    stale = tuple((s, s.stale) for s in skills if s.stale)
    if stale:
        installs: list[SkillInstall] = []
        for declared, text in stale:
            # The folder first, then the stale text over its SKILL.md (a lone file installs as SKILL.md).
            installs += [SkillInstall(name=declared.name, source=declared.path)]
            installs += [SkillInstall(name=declared.name, source=text)]
        out.append(
            Condition(
                id="stale",
                description="outdated or wrong guidance injected (measures harm), installed as SKILL.md",
                inject=tuple(text for _, text in stale),
                install=tuple(installs),
            )
        )
    return tuple(out)


def _reference_errors(
    case: Case,
    condition_ids: list[str],
    presets: dict[str, WorkspacePreset],
    fixtures: tuple[Fixture, ...],
    skills: dict[str, Skill],
) -> list[str]:
    def at(call: str) -> str:
        origin = case.origins.get(call) or case.origin
        return f"{origin}: " if origin else ""

    errors: list[str] = []
    for cond in case.conditions:
        if cond not in condition_ids:
            errors.append(
                f"{at(f'c.conditions({cond})')}case {case.id!r}: unknown condition {cond!r}; "
                f"use one of {', '.join(condition_ids)} or define it with skillgym.condition({cond!r}, ...)"
            )
    if case.workspace is not None and case.workspace not in presets:
        known = ", ".join(presets) or "none defined"
        errors.append(
            f"{at('c.workspace()')}case {case.id!r}: unknown workspace preset {case.workspace!r} "
            f"(known: {known}); "
            f"define it with skillgym.workspace_preset({case.workspace!r}, ...)"
        )
    if case.expected_skill is not None and skills and case.expected_skill not in skills:
        errors.append(
            f"{at('c.expect_skill()')}case {case.id!r}: expected skill {case.expected_skill!r} is not a "
            "declared skill "
            f"({', '.join(skills)}); declare it with skillgym.skill(...) or fix the name"
        )
    names = {f.name for f in fixtures}
    wanted: list[tuple[str, str]] = []
    if isinstance(case, (ExecutionCase, DogfoodCase)):
        if case.fixture is not None:
            wanted.append((case.fixture, case.origins.get("c.fixture()") or case.origin))
        wanted.extend((v.fixture, v.origin) for v in case.verifiers if isinstance(v, FixtureLogContains))
    for name, origin in wanted:
        if name not in names:
            where = f"{origin}: " if origin else at("")
            known = ", ".join(sorted(names)) or "none found"
            errors.append(
                f"{where}case {case.id!r}: unknown fixture {name!r} (known: {known}); "
                f"add fixtures/{name}.py to the suite"
            )
    return errors


# Case files imported outside the loader (a notebook, a test) record into this process-wide registry.
_process_registry = Registry()
_current: ContextVar[Registry | None] = ContextVar("skillgym_registry", default=None)
# The working directory when the current registry was installed: origins recorded into it are shown
# relative to it, so every origin of one load agrees (and the directory is read once, not per call).
_working_dir: ContextVar[str | None] = ContextVar("skillgym_working_dir", default=None)


def current_registry() -> Registry:
    """The registry that authoring records into (the loader installs a fresh one per suite)."""
    return _current.get() or _process_registry


# The working directory read when ``use_registry`` began; None outside it (then read it per call).
# The ContextVar's own bound ``get``: origins are taken on every recorded call.
load_directory: Callable[[], str | None] = _working_dir.get


@contextlib.contextmanager
def use_registry(registry: Registry) -> Iterator[Registry]:
    """Make ``registry`` current for the body; the previous one is restored even on error."""
    try:
        cwd: str | None = os.getcwd()
    except OSError:  # the working directory was removed: origins fall back to reading it per call
        cwd = None
    token = _current.set(registry)
    cwd_token = _working_dir.set(cwd)
    try:
        yield registry
    finally:
        _working_dir.reset(cwd_token)
        _current.reset(token)
