"""Tests for skillgym.scaffold.frontmatter: the fields skills write, and one clear error for each mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillgym.errors import ExitCode
from skillgym.scaffold.frontmatter import FrontmatterError, read_skill


def skill(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "my-skill"
    folder.mkdir(exist_ok=True)
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("frontmatter", "description"),
    [
        ("description: Summarize CSV files.", "Summarize CSV files."),
        ('description: "Summarize: CSV \\"files\\""', 'Summarize: CSV "files"'),
        ("description: 'it''s CSV'", "it's CSV"),
        ("description: >\n  Summarize CSV\n  files.\n", "Summarize CSV files."),
        ("description: |\n  line one\n  line two\n", "line one\nline two"),
        ("description: Summarize CSV\n  files, continued.", "Summarize CSV files, continued."),
        ("description: Summarize CSV  # the short form", "Summarize CSV"),
        ("description: 'C# files' # quoted, so the # is text", "C# files"),
    ],
)
def test_yaml_forms_skills_use(tmp_path: Path, frontmatter: str, description: str) -> None:
    text = f"---\nname: csv-summary\n# a comment\n{frontmatter}\nmetadata:\n  version: 1\n---\n# Body\n"
    info = read_skill(skill(tmp_path, text))
    assert (info.name, info.description) == ("csv-summary", description)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# no frontmatter\n", "SKILL.md:1: expected the frontmatter's opening '---' on the first line"),
        ("---\nname: x\n", "SKILL.md:1: the frontmatter opened with '---' is never closed"),
        (
            "---\ndescription: d\n---\n",
            "SKILL.md: the frontmatter has no field 'name'; add a line 'name: ...'",
        ),
        ("---\nname: csv\n---\n", "the frontmatter has no field 'description'"),
        ("---\nname: csv\ndescription:\n---\n", "SKILL.md:3: field 'description' is empty"),
        ("---\nname: CSV Summary\ndescription: d\n---\n", "SKILL.md:2: field 'name' is 'CSV Summary'"),
        ("---\nname: csv\ndescription: 'open\n---\n", "SKILL.md:3: field 'description' opens a ' quote"),
        ("---\nname: csv\nname: again\ndescription: d\n---\n", "SKILL.md:3: field 'name' is given twice"),
        ("---\nname: csv\n- item\n---\n", "SKILL.md:3: expected 'key: value', found '- item'"),
        (
            "---\nname: csv\ndescription: 'a' b\n---\n",
            "SKILL.md:3: field 'description' has 'b' after its closing '",
        ),
    ],
)
def test_each_mistake_names_the_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    folder = skill(tmp_path, text)
    with pytest.raises(FrontmatterError) as caught:
        read_skill(folder)
    assert message in str(caught.value)
    assert str(folder / "SKILL.md") in str(caught.value)
    assert caught.value.exit_code == ExitCode.USAGE


def test_a_byte_order_mark_before_the_frontmatter_is_ignored(tmp_path: Path) -> None:
    info = read_skill(skill(tmp_path, "\ufeff---\nname: bom # named here\ndescription: d\n---\n"))
    assert (info.name, info.description) == ("bom", "d")


def test_a_folder_without_skill_md(tmp_path: Path) -> None:
    with pytest.raises(FrontmatterError, match=r"SKILL.md does not exist"):
        read_skill(tmp_path)
    with pytest.raises(FrontmatterError, match=r"is not a folder"):
        read_skill(tmp_path / "missing")
