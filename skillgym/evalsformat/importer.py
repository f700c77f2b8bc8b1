"""``skillgym import evals``: turn an Agent Skills eval file into suite files, never overwriting unasked.

An eval set becomes one case file of execution cases (with each eval's files as a workspace template
and a canned stub answer), a trigger set one case file of prompt cases. Into a folder that is not yet a
suite, the suite itself is drafted as ``skillgym init`` does it (suite.py, the four conditions, a copy of
the skill). Everything is checked before the first file is written, and the suite must load afterwards:
when it does not, the files this import created are removed again.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import Final, Literal

from ..errors import SkillgymError, UsageError
from ..loader import load_suite
from ..model import Data, Suite
from ..scaffold.draft import suite_base_files
from ..scaffold.frontmatter import SkillInfo, read_skill
from ..scaffold.init import check_skill_placement, copy_skill, skill_inside, write_file
from .schema import EvalSet, EvalsFormatError, TriggerSet, read_eval_file
from .source import (
    eval_case_id,
    eval_set_source,
    template_dir,
    trigger_case_id,
    trigger_set_source,
)

# Where imported case files go, relative to the suite root.
CASES_DIR: Final = "agent_skills"


class Imported(Data, frozen=True, kw_only=True):
    """What an import wrote: the suite, the new cases, and the files (relative to the suite root)."""

    source: Path
    suite: Path
    kind: Literal["evals", "triggers"]
    skill: str
    case_file: str
    cases: tuple[str, ...]
    written: tuple[str, ...]
    drafted_suite: bool  # the folder was not a suite: suite.py and the conditions were drafted
    copied_skill_from: Path | None
    ignored: tuple[str, ...] = ()  # "$.evals[0].scorers": keys of the file skillgym does not read


def find_skill_dir(evals_file: Path) -> Path | None:
    """The skill folder of an eval file: the folder holding SKILL.md, beside it or one level up."""
    for folder in (evals_file.parent, evals_file.parent.parent):
        if (folder / "SKILL.md").is_file():
            return folder
    return None


def import_evals(path: Path, suite: Path, *, force: bool = False, skill_dir: Path | None = None) -> Imported:
    """Write ``path``'s evals into ``suite`` as cases; raises a ``SkillgymError`` before writing anything."""
    parsed = read_eval_file(path)
    if skill_dir is not None and not (skill_dir / "SKILL.md").is_file():
        raise UsageError(f"--skill {skill_dir} holds no SKILL.md; give the skill's folder")
    found = skill_dir or find_skill_dir(path)
    info = read_skill(found) if found is not None else None
    name = _skill_name(parsed, info, path)
    if suite.exists() and not suite.is_dir():
        raise UsageError(f"--suite {suite} is a file; name a folder (it is created when missing)")
    existing = _existing_suite(suite)
    if existing is None and info is None:
        raise UsageError(
            f"{suite} is not a suite yet, and no skill folder was found for {path} (no SKILL.md beside it "
            "or one level up): pass --skill SKILL_DIR so the suite can be drafted around the skill, or "
            "import into a suite that already declares it"
        )
    if existing is not None and name not in {s.name for s in existing.skills}:
        declared = ", ".join(s.name for s in existing.skills) or "none"
        raise UsageError(
            f"the suite in {suite} declares no skill named {name!r} (it declares: {declared}); add "
            f'skill("{name}", "skills/{name}") to its suite.py, or import into a new --suite'
        )
    stem = path.stem.lower().replace("_", "-").replace(".", "-")
    case_file = f"{CASES_DIR}/{name}-{stem}.py"
    files: dict[str, str] = {}
    copies: dict[str, Path] = {}  # target (relative to the suite) -> source file or folder
    skill_target: tuple[str, Path] | None = None
    if existing is None:
        assert info is not None
        skill_path, skill_target = _skill_place(info, suite)
        files.update(suite_base_files(info, skill_path))
    if isinstance(parsed, EvalSet):
        kind: Literal["evals", "triggers"] = "evals"
        cases = tuple(eval_case_id(name, e.id) for e in parsed.evals)
        with_files: set[str] = set()
        for n, item in enumerate(parsed.evals):
            case_id = eval_case_id(name, item.id)
            for m, rel in enumerate(item.files):
                copies[f"{template_dir(case_id)}/{rel}"] = _eval_file(
                    found, rel, path, f"$.evals[{n}].files[{m}]"
                )
                with_files.add(case_id)
            files[f"stubs/{case_id}.jsonl"] = _execution_stub(item.id, source=path.name)
        files[case_file] = eval_set_source(parsed, source_name=path.name, with_files=frozenset(with_files))
        ignored = [f"$.{k}" for k in parsed.ignored] + [
            f"$.evals[{n}].{k}" for n, e in enumerate(parsed.evals) for k in e.ignored
        ]
    else:
        kind = "triggers"
        cases = tuple(trigger_case_id(name, n + 1) for n in range(len(parsed.queries)))
        for case_id, query in zip(cases, parsed.queries, strict=True):
            files[f"stubs/{case_id}.md"] = _prompt_stub(name, should_trigger=query.should_trigger)
        files[case_file] = trigger_set_source(parsed, skill_name=name, source_name=path.name)
        ignored = [f"$[{n}].{k}" for n, q in enumerate(parsed.queries) for k in q.ignored]
    if existing is not None:
        _check_ids_free(existing, cases, suite / case_file)
    targets = [*files, *_top_folders(copies), *([skill_target[0]] if skill_target else [])]
    present = [rel for rel in targets if (suite / rel).exists() or (suite / rel).is_symlink()]
    if present and not force:
        raise UsageError(
            f"not overwriting {', '.join(str(suite / rel) for rel in present)}; move them away, choose "
            "another --suite, or pass --force to overwrite"
        )
    created = [rel for rel in targets if rel not in present]
    new_folders = sorted(
        {p for rel in targets for p in Path(rel).parents if p.parts and not (suite / p).exists()},
        key=lambda p: len(p.parts),
        reverse=True,
    )
    _write_all(suite, files, copies, skill_target)
    _check_loads(suite, created, new_folders)
    return Imported(
        source=path,
        suite=suite,
        kind=kind,
        skill=name,
        case_file=case_file,
        cases=cases,
        written=tuple(targets),
        drafted_suite=existing is None,
        copied_skill_from=skill_target[1] if skill_target else None,
        ignored=tuple(ignored),
    )


def _skill_name(parsed: EvalSet | TriggerSet, info: SkillInfo | None, path: Path) -> str:
    if isinstance(parsed, EvalSet):
        if info is not None and info.name != parsed.skill_name:
            raise EvalsFormatError(
                f"{path}: $.skill_name: {parsed.skill_name!r} is not the name in {info.folder / 'SKILL.md'} "
                f"({info.name!r}); make them the same (the format wants the frontmatter's name)"
            )
        return parsed.skill_name
    if info is None:
        raise UsageError(
            f"{path} is a trigger-eval set, which does not name its skill, and no SKILL.md is beside it or "
            "one level up: pass --skill SKILL_DIR (the folder with the skill's SKILL.md)"
        )
    return info.name


def _existing_suite(suite: Path) -> Suite | None:
    """The suite already in ``suite`` (None when it has no suite.py yet); it must load."""
    if not (suite / "suite.py").is_file():
        return None
    try:
        return load_suite(suite)
    except SkillgymError as exc:
        raise UsageError(
            f"the suite in {suite} does not load, so nothing was imported into it; fix it first:\n{exc}"
        ) from exc


def _skill_place(info: SkillInfo, suite: Path) -> tuple[str, tuple[str, Path] | None]:
    """Where the skill is in the new suite, and what to copy there (None when it is already inside)."""
    inside = skill_inside(info.folder, suite)
    if inside is not None:
        check_skill_placement(inside, suite)
        return inside, None
    skill_path = f"skills/{info.name}"
    return skill_path, (skill_path, info.folder)


def _eval_file(skill_dir: Path | None, rel: str, path: Path, where: str) -> Path:
    if skill_dir is None:
        raise EvalsFormatError(
            f"{path}: {where}: {rel!r} is relative to the skill folder, which was not found (no SKILL.md "
            "beside the file or one level up); pass --skill SKILL_DIR"
        )
    source = skill_dir / rel
    if not source.exists():
        raise EvalsFormatError(
            f"{path}: {where}: {rel!r} does not exist (looked for {source}); eval files are relative to "
            "the skill folder: fix the path or add the file"
        )
    if not source.resolve().is_relative_to(skill_dir.resolve()):
        raise EvalsFormatError(
            f"{path}: {where}: {rel!r} leads out of the skill folder {skill_dir} (through a link); "
            "keep eval files inside the skill"
        )
    return source


def _top_folders(copies: dict[str, Path]) -> list[str]:
    """The template folder of each eval with files: what is replaced as a whole on --force."""
    return list(dict.fromkeys("/".join(rel.split("/")[:2]) for rel in copies))


def _check_ids_free(existing: Suite, cases: tuple[str, ...], case_file: Path) -> None:
    ours = case_file.resolve()
    for case in existing.cases:
        if case.id not in cases:
            continue
        origin_file = Path(case.origin.rsplit(":", 1)[0]).resolve() if case.origin else None
        if origin_file != ours:
            raise UsageError(
                f"case id {case.id!r} is already taken by the case at {case.origin}; rename that case, "
                "or import into another --suite"
            )


def _write_all(
    suite: Path, files: dict[str, str], copies: dict[str, Path], skill: tuple[str, Path] | None
) -> None:
    for folder in _top_folders(copies):
        target = suite / folder
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)  # --force: the eval's files as they are now, none left from before
        elif target.exists() or target.is_symlink():
            target.unlink()
    for rel, source in copies.items():
        target = suite / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns(".git", "__pycache__"))
        else:
            shutil.copyfile(source, target)
    for rel, text in files.items():
        write_file(suite / rel, text)
    if skill is not None:
        copy_skill(skill[1], suite / skill[0])


def _check_loads(suite: Path, created: list[str], new_folders: list[Path]) -> None:
    try:
        load_suite(suite)
    except SkillgymError as exc:
        for rel in created:
            target = suite / rel
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink(missing_ok=True)
        for folder in new_folders:  # deepest first; a folder something else wrote into stays
            with contextlib.suppress(OSError):
                (suite / folder).rmdir()
        raise UsageError(
            f"the imported cases did not load, so the files this import created were removed again:\n{exc}"
        ) from exc


def _execution_stub(eval_id: int | str, *, source: str) -> str:
    """A canned skillgym-trace for ``--provider stub``: it checks the plumbing, it measures nothing."""
    text = (
        f"Canned stub answer for eval {eval_id} of {source}: it checks the suite's plumbing. Run a real "
        "agent (--provider claude or codex) to measure the skill."
    )
    lines = [{"type": "message", "role": "assistant", "text": text}, {"type": "result", "text": text}]
    return "".join(json.dumps(line) + "\n" for line in lines)


def _prompt_stub(skill: str, *, should_trigger: bool) -> str:
    if should_trigger:
        return f"Canned stub answer: I would use the {skill} skill for this request.\n"
    return "Canned stub answer: I would handle this request directly, without any skill.\n"
