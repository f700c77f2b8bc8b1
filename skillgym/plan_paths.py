"""Plan-time checks of every file a plan names: templates, fixtures, skill sources, stubs and cassettes.

A path that is missing, or a symlink whose target lies outside the suite, is the suite's mistake: it is
reported when the plan is built, all problems at once, before a run folder exists or a trial starts.
Symlinks that stay inside the suite are followed as usual; one that leads out of it is refused, never
copied, so a template or fixture can never carry a host file (``/etc/passwd``, ``~/.claude``) into a trial.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from .errors import UsageError
from .identity import TrialId
from .model import DogfoodCase, ExecutionCase, FixtureLogContains, Suite
from .plan import Plan
from .providers import make_provider
from .providers.base import Provider, ProviderSettings
from .workspaces.paths import UnsafePathError, resolve_inside


class PlanPathError(UsageError):
    """Files the plan names are missing or lead outside the suite; every problem is one line."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        if len(problems) == 1:
            super().__init__(problems[0])
            return
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"the plan names {len(problems)} paths that cannot be used:\n{lines}")


@runtime_checkable
class ChecksMaterial(Protocol):
    """A provider that plays files from the suite (stub answers, cassettes) and can list what is missing."""

    def missing_material(self, trials: Sequence[TrialId]) -> list[str]:
        """One line per trial set that has nothing to play, naming the path looked for and the fix."""
        ...


def check_plan_paths(plan: Plan, suite: Suite, settings: ProviderSettings) -> None:
    """Raise ``PlanPathError`` listing every suite path and every piece of provider material that is
    missing or leads out of the suite; a run calls it before it writes anything."""
    problems = suite_path_problems(plan, suite) + material_problems(
        plan, plan_providers(plan, suite, settings)
    )
    if problems:
        raise PlanPathError(problems)


def plan_providers(plan: Plan, suite: Suite, settings: ProviderSettings) -> dict[str, Provider]:
    """The plan's providers, built (not detected) with the run's settings."""
    return {
        name: make_provider(name, suite_root=Path(suite.root), settings=settings) for name in plan.providers
    }


def suite_path_problems(plan: Plan, suite: Suite) -> list[str]:
    """Every problem with the suite files ``plan`` uses, one line each, in plan order."""
    root = Path(suite.root)
    problems: list[str] = []
    for preset in plan.presets:
        if preset.template:
            what = f"workspace preset {preset.id!r} template"
            problems += _folder_problems(root, preset.template, what=what, fix="create the folder or fix")
    planned = {i.id.case_id for i in plan.items}
    wanted_fixtures: dict[str, None] = {}
    for case in suite.cases:
        if case.id in planned and isinstance(case, (ExecutionCase, DogfoodCase)):
            if case.fixture is not None:
                wanted_fixtures[case.fixture] = None
            for verifier in case.verifiers:
                if isinstance(verifier, FixtureLogContains):
                    wanted_fixtures[verifier.fixture] = None
    if wanted_fixtures:
        fixtures = {f.name: f.path for f in suite.fixtures}
        for name in wanted_fixtures:
            path = fixtures.get(name)
            if path is not None and not (root / path).is_file():
                problems.append(
                    f"fixture {name!r}: {root / path} is not a file (a dangling symlink?); "
                    "make it a real file in the suite"
                )
        # The agent reaches the whole folder through SKILLGYM_FIXTURES, helpers included.
        problems += outward_links(root / "fixtures", root, what="the fixtures folder")
    conditions = {c.id: c for c in suite.conditions}
    for condition_id in plan.conditions:
        condition = conditions[condition_id]
        named: set[str] = set()  # a file both installed and injected (stale material) is named once
        for item in condition.install:
            what = f"condition {condition.id!r} skill {item.name!r} source"
            named.add(os.path.normpath(item.source))
            problems += _source_problems(root, item.source, what=what)
        for relative in condition.inject:
            if os.path.normpath(relative) in named:
                continue
            what = f"condition {condition.id!r} inject file"
            problems += _source_problems(root, relative, what=what, folder_ok=False)
    return list(dict.fromkeys(problems))


def material_problems(plan: Plan, providers: dict[str, Provider]) -> list[str]:
    """What each provider that plays suite files has nothing to play for, one line per trial set."""
    problems: list[str] = []
    for name, provider in providers.items():
        if isinstance(provider, ChecksMaterial):
            problems += provider.missing_material([i.id for i in plan.items if i.id.provider == name])
    return problems


def outward_links(tree: Path, root: Path, *, what: str) -> list[str]:
    """One line per symlink under ``tree`` (or ``tree`` itself) whose target resolves outside ``root``."""
    base = root.resolve()
    entries: list[Path] = [tree]
    if tree.is_dir() and not tree.is_symlink():
        for folder, dirs, files in os.walk(tree):
            dirs.sort()
            entries += [Path(folder, name) for name in (*sorted(dirs), *sorted(files))]
    problems: list[str] = []
    for entry in entries:
        if entry.is_symlink():
            target = Path(os.path.realpath(entry))
            if not target.is_relative_to(base):
                problems.append(link_problem(entry, target, base, what=what))
    return problems


def link_problem(link: Path, target: Path, base: Path, *, what: str) -> str:
    """The one line that refuses ``link``: what holds it, where it points, and how to fix it."""
    return (
        f"{what}: the symlink {link} points to {target}, outside the suite {base}; skillgym does not "
        "follow links out of the suite: copy the file into the suite or point the link inside it"
    )


def _folder_problems(root: Path, relative: str, *, what: str, fix: str) -> list[str]:
    try:
        folder = resolve_inside(root, relative, what=what)
    except UnsafePathError as exc:
        return [_link_or_escape(root, relative, exc, what=what)]
    if not folder.is_dir():
        return [
            f"{what} {folder} does not exist or is not a folder; {fix} the path (relative to the suite "
            f"root {root})"
        ]
    return outward_links(folder, root, what=f"{what} {relative}")


def _source_problems(root: Path, relative: str, *, what: str, folder_ok: bool = True) -> list[str]:
    try:
        source = resolve_inside(root, relative, what=what)
    except UnsafePathError as exc:
        return [_link_or_escape(root, relative, exc, what=what)]
    if source.is_dir() and folder_ok:
        return outward_links(source, root, what=f"{what} {relative}")
    if not source.is_file():
        return [
            f"{what} {source} does not exist; create it or fix the path (relative to the suite root {root})"
        ]
    return []


def _link_or_escape(root: Path, relative: str, exc: UnsafePathError, *, what: str) -> str:
    """A link out of the suite in the standard words; ``..`` or absolute paths as resolve_inside says."""
    base = root.resolve()
    lexical = Path(os.path.normpath(base / relative))
    for link in _links_on_the_way(base, lexical):
        target = Path(os.path.realpath(link))
        if not target.is_relative_to(base):
            return link_problem(link, target, base, what=f"{what} {relative}")
    return str(exc)


def _links_on_the_way(base: Path, path: Path) -> Iterable[Path]:
    if not path.is_relative_to(base):
        return
    current = base
    for part in path.relative_to(base).parts:
        current = current / part
        if current.is_symlink():
            yield current
