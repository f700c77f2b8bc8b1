"""``skillgym init``: draft a runnable suite from a skill folder's ``SKILL.md``."""

from __future__ import annotations

from .frontmatter import FrontmatterError as FrontmatterError
from .frontmatter import SkillInfo as SkillInfo
from .frontmatter import read_skill as read_skill
from .init import Scaffold as Scaffold
from .init import init_suite as init_suite

__all__ = ("FrontmatterError", "Scaffold", "SkillInfo", "init_suite", "read_skill")
