"""Tests for skillgym.scaffold.draft: drafted files are valid Python whatever the description holds."""

from __future__ import annotations

import ast
from pathlib import Path

from skillgym.scaffold.draft import first_sentence, keywords, suite_files
from skillgym.scaffold.frontmatter import SkillInfo


def test_first_sentence_and_keywords_skip_common_words_and_the_skills_own_name() -> None:
    description = "Summarize CSV files with their column statistics. Use when asked about CSV data."
    assert first_sentence(description) == "Summarize CSV files with their column statistics"
    assert keywords(description, name="csv-summary") == ("summarize", "column")
    assert keywords("Do it.", name="x") == ()


def test_a_description_with_quotes_and_backslashes_still_drafts_python_that_says_it() -> None:
    description = 'Parse "C:\\logs" paths, it\'s quick.\nSecond line.'
    info = SkillInfo(folder=Path("s"), name="log-paths", description=description)
    files = suite_files(info, "skills/log-paths")
    for rel, text in files.items():
        if rel.endswith(".py"):
            ast.parse(text, filename=rel)
    tree = ast.parse(files["prompt/trigger.py"])
    prompts = [
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "prompt"
    ]
    assert (
        prompts[0] == 'I need help with this: parse "C:\\logs" paths, it\'s quick. How would you go about it?'
    )
    assert set(files) >= {
        "suite.py",
        "README.md",
        "stubs/log-paths-task.jsonl",
        "templates/log-paths/REQUEST.md",
    }
