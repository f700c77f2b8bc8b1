"""``skillgym init``: place a drafted suite beside a skill without ever overwriting a file unasked."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import msgspec

from ..errors import UsageError
from ..loader import DATA_DIRS
from .draft import suite_files
from .frontmatter import SkillInfo, read_skill

# Where a skill's own evals live in the Agent Skills (skill-creator) format.
AGENT_SKILLS_EVALS = Path("evals") / "evals.json"


class Scaffold(msgspec.Struct, frozen=True, kw_only=True):
    """What ``init`` wrote: the suite folder, its files (relative), and where the skill under test is."""

    suite: Path
    skill: SkillInfo
    skill_path: str  # relative to the suite root
    copied_from: Path | None  # the skill folder copied into the suite, None when it is already inside
    written: tuple[str, ...]
    agent_skills_evals: Path | None  # the skill's evals/evals.json, when it has one


def init_suite(skill_dir: Path, suite: Path, *, force: bool = False) -> Scaffold:
    """Draft a runnable suite for the skill in ``skill_dir`` into ``suite``.

    A skill folder outside the suite is copied to ``<suite>/skills/<name>/`` (trials only see the suite).
    Existing files are never overwritten unless ``force``: every one is named in a ``UsageError`` and
    nothing is written.
    """
    info = read_skill(skill_dir)
    inside = skill_inside(skill_dir, suite)
    if inside is not None:
        check_skill_placement(inside, suite)
        skill_path, copied_from = inside, None
    else:
        skill_path, copied_from = f"skills/{info.name}", skill_dir
    files = suite_files(info, skill_path)
    if suite.exists() and not suite.is_dir():
        raise UsageError(f"--suite {suite} is a file; name a folder (it is created when missing)")
    targets = [*files, *([skill_path] if copied_from is not None else [])]
    existing = [rel for rel in targets if (suite / rel).exists()]
    if existing and not force:
        raise UsageError(
            f"not overwriting {', '.join(str(suite / rel) for rel in existing)}; "
            "move them away, choose another --suite, or pass --force to overwrite"
        )
    for rel, text in files.items():
        write_file(suite / rel, text)
    if copied_from is not None:
        copy_skill(copied_from, suite / skill_path)
    evals = skill_dir / AGENT_SKILLS_EVALS
    return Scaffold(
        suite=suite,
        skill=info,
        skill_path=skill_path,
        copied_from=copied_from,
        written=tuple(files),
        agent_skills_evals=evals if evals.is_file() else None,
    )


def skill_inside(skill_dir: Path, suite: Path) -> str | None:
    """``skill_dir`` relative to the suite root when it lies inside it, else None."""
    skill, root = skill_dir.resolve(), suite.resolve()
    if skill == root or not skill.is_relative_to(root):
        return None
    return skill.relative_to(root).as_posix()


def check_skill_placement(relative: str, suite: Path) -> None:
    # The loader imports every .py file of the suite outside its data folders: a skill's scripts must
    # sit where it does not look, or loading the suite would run them.
    parts = Path(relative).parts
    if not any(p in DATA_DIRS or p.startswith((".", "_")) for p in parts):
        raise UsageError(
            f"the skill folder {suite / relative} is inside the suite but not under {suite / 'skills'}/: "
            "the suite loader would import its Python files as case files; move it to "
            f"{suite / 'skills' / Path(relative).name}/ or choose another --suite"
        )


def write_file(path: Path, text: str) -> None:
    """``text`` into ``path`` through a temporary file beside it, so no half-written file is left."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def copy_skill(source: Path, target: Path) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()
    # Links are copied as the files they point to: a trial only sees what is inside the suite.
    # The suite may sit inside the skill folder (``init . --suite evals``): never copy it into itself.
    skipped = target.resolve().parents[1]

    def ignore(folder: str, names: list[str]) -> set[str]:
        here = Path(folder).resolve()
        return {n for n in names if n in {".git", "__pycache__"} or here / n == skipped}

    shutil.copytree(source, target, ignore=ignore)
