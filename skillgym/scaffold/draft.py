"""The files ``skillgym init`` drafts for a skill: a runnable suite, its stubs and its README.

Every text here is a first draft built from the skill's ``name`` and ``description``; the suite's README
says which parts to replace with the skill's real requests and effects.
"""

from __future__ import annotations

import json
import re
import textwrap
from typing import Final

from .frontmatter import SkillInfo

# Words too common to tell a skill's requests apart from any other.
_STOPWORD_TEXT: Final = (
    "about above after again against their there these those which while would could should using other "
    "every where when what with from into onto over under your yours they them this that have does done "
    "make makes made skill skills used uses user users asks asked whenever files folder always never before"
)
_STOPWORDS: Final = frozenset(_STOPWORD_TEXT.split())
_WORD: Final = re.compile(r"[A-Za-z][A-Za-z-]{4,}")
# The should-not-trigger request: an everyday coding chore few skills are meant for.
UNRELATED_PROMPT: Final = (
    "In utils.py, rename the variable `count` to `total` everywhere and fix the typo 'recieve' in the "
    "docstring of parse_items. What exactly would you change?"
)


def first_sentence(description: str) -> str:
    """The description's first sentence, without its final full stop."""
    flat = " ".join(description.split())
    head = re.split(r"(?<=[.!?])\s", flat, maxsplit=1)[0]
    return head.rstrip(".")


def keywords(description: str, *, name: str, limit: int = 2) -> tuple[str, ...]:
    """Up to ``limit`` distinctive words of the description's first sentence (none of the name's parts)."""
    skip = _STOPWORDS | set(name.split("-"))
    found: list[str] = []
    for word in _WORD.findall(first_sentence(description)):
        lowered = word.lower().strip("-")
        if lowered not in skip and lowered not in found:
            found.append(lowered)
    return tuple(found[:limit])


def suite_files(info: SkillInfo, skill_path: str) -> dict[str, str]:
    """Every file of the drafted suite, keyed by its path relative to the suite root.

    ``skill_path`` is the skill folder relative to the suite root (``skills/<name>``).
    """
    name = info.name
    sentence = first_sentence(info.description)
    words = keywords(info.description, name=name)
    request = f"I need help with this: {sentence[:1].lower()}{sentence[1:]}. How would you go about it?"
    trigger, unrelated, task = f"{name}-trigger", f"{name}-unrelated", f"{name}-task"
    files = {
        "suite.py": _suite_py(name, skill_path),
        "prompt/trigger.py": _prompt_py(name, trigger, unrelated, request, words),
        "execution/task.py": _execution_py(name, task),
        f"templates/{name}/REQUEST.md": f"{sentence}.\n\nSave what you produce in result.md.\n",
        "conditions/self-load.stub.md": (
            "Skills are installed for you in your skills folder (`.claude/skills/` or `.agents/skills/` in "
            "the working directory). Before you start, check whether one of them fits the task; if one "
            "does, load it (the Skill tool, or read its SKILL.md) and follow it.\n"
        ),
        f"conditions/{name}.stale.md": (
            f"# {name} (an older version)\n\n{sentence}. Work it out from general knowledge; there are no "
            "helper scripts or rules to follow.\n"
        ),
        f"stubs/{trigger}.md": (
            f"I would use the {name} skill here. Following it: {sentence[:1].lower()}{sentence[1:]}.\n"
        ),
        f"stubs/{unrelated}.md": (
            "I would rename `count` to `total` in utils.py and correct 'recieve' to 'receive' in the "
            "docstring of parse_items: a plain edit.\n"
        ),
        f"stubs/{task}.jsonl": _execution_stub(name),
        "README.md": _readme(info, skill_path, trigger, unrelated, task),
    }
    return files


def suite_base_files(info: SkillInfo, skill_path: str) -> dict[str, str]:
    """The files that make a folder a suite for the skill, without any case: suite.py and the conditions."""
    return {
        rel: text
        for rel, text in suite_files(info, skill_path).items()
        if rel == "suite.py" or rel.startswith("conditions/")
    }


def _suite_py(name: str, skill_path: str) -> str:
    return textwrap.dedent(
        f'''\
        """What is under test: the {name} skill, the four conditions and the execution case's workspace.

        Drafted by `skillgym init`; edit it as the skill grows (README.md says what to change first).
        """

        from skillgym import condition, skill, workspace_preset

        SKILL = skill(
            "{name}",
            "{skill_path}",
            stub="conditions/self-load.stub.md",
            stale="conditions/{name}.stale.md",
        )
        INSTALL = [("{name}", "{skill_path}")]

        # The four default conditions, spelled out so each can be changed (a condition(...) with a
        # default's id replaces that default; any other id adds one). Each condition that teaches the
        # skill installs its folder too, so the scripts SKILL.md names exist.
        condition("none", description="baseline: no skill installed or injected")
        condition(
            "self-load",
            description="the skill installed where the agent finds it, plus a stub: it must route itself",
            inject=["conditions/self-load.stub.md"],
            install=INSTALL,
        )
        condition(
            "preloaded",
            description="SKILL.md injected (the oracle), the folder installed so its scripts exist",
            inject=["{skill_path}/SKILL.md"],
            install=INSTALL,
        )
        condition(
            "stale",
            description="outdated guidance injected instead of the skill, and installed as its SKILL.md",
            inject=["conditions/{name}.stale.md"],
            install=[*INSTALL, ("{name}", "conditions/{name}.stale.md")],
        )

        workspace_preset(
            "{name}",
            description="the files the execution case starts from (templates/{name}/)",
            template="templates/{name}",
        )
        '''
    )


def _prompt_py(name: str, trigger: str, unrelated: str, request: str, words: tuple[str, ...]) -> str:
    mentions = ", ".join(json.dumps(w) for w in words)  # letters and hyphens: literal as regexes
    step = (
        f"""
    with c.step("plans-the-task") as s:
        s.must_mention({mentions})"""
        if words
        else ""
    )
    return f'''"""Prompt lane: does the agent reach for {name} when it should, and stay away otherwise?"""

from skillgym import prompt_case

with prompt_case("{trigger}") as c:
    c.category("trigger")
    c.prompt({json.dumps(request, ensure_ascii=False)})
    c.expect_skill("{name}"){step}

with prompt_case("{unrelated}") as c:
    c.category("should-not-trigger")
    c.prompt({json.dumps(UNRELATED_PROMPT)})
    c.expect_skill(None)
    with c.step("does-the-edit") as s:
        s.must_mention("total")
'''


def _execution_py(name: str, task: str) -> str:
    return textwrap.dedent(
        f'''\
        """Execution lane: the agent does a task in a workspace; verifiers judge the files it leaves."""

        from skillgym import execution_case

        with execution_case("{task}") as c:
            c.category("task")
            c.workspace("{name}")  # templates/{name}/ is copied in: REQUEST.md and any input files
            c.task("Do what REQUEST.md asks and save the result in result.md")
            with c.assertions() as a:
                a.file_exists("result.md")
                a.file_contains("result.md", r"\\S")  # not empty; replace with what a good result holds
            c.budget(timeout_s=300, max_turns=20)
        '''
    )


def _execution_stub(name: str) -> str:
    write = {"file_path": "result.md", "content": f"A canned result from stubs/{name}-task.jsonl.\n"}
    lines = [
        {"type": "message", "role": "assistant", "text": "I will write result.md."},
        {"type": "tool_call", "name": "Write", "input": json.dumps(write)},
        {"type": "result", "text": "Saved result.md."},
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def _readme(info: SkillInfo, skill_path: str, trigger: str, unrelated: str, task: str) -> str:
    name = info.name
    return textwrap.dedent(
        f"""\
        # Evaluating the {name} skill

        Drafted by `skillgym init` from `{skill_path}/SKILL.md`. It runs as it is, but every case is a first
        draft from the skill's description: make each one a real request of the skill's users.

        ## What to edit next

        1. `prompt/trigger.py`: `{trigger}` should trigger the skill and `{unrelated}` should not. Write
           the prompts as a user would, add more of each kind, and name in `s.must_mention(...)` what a
           good plan says.
        2. `execution/task.py` and `templates/{name}/`: `{task}` copies `templates/{name}/` into a fresh
           workspace and asks for `result.md`. Put the task's real input files in the template, and
           check the effects the skill should have (`a.file_contains(path, regex)`, `a.command([...])`,
           `a.custom("module:function")`).
        3. `conditions/{name}.stale.md`: the `stale` condition injects it in place of the skill. Replace
           it with an outdated or wrong version of the guidance, to measure what bad guidance costs.
        4. `stubs/`: canned answers for `--provider stub` (a `.md` answer per prompt case; for the
           execution case a skillgym-trace `.jsonl` whose file writes and commands are re-enacted in the
           workspace). They check the suite's plumbing, not an agent: update them when you change a case.

        `{skill_path}/` is the skill under test. When `skillgym init` copied it there from another folder,
        the copy is what the trials see: copy your changes in (or keep the skill here and work on it here).

        ## Run it

        ```sh
        skillgym list --suite SUITE
        skillgym run --suite SUITE --provider stub                 # the plumbing, offline, in seconds
        skillgym run --suite SUITE --provider claude --model sonnet --progress   # Claude Code
        skillgym run --suite SUITE --provider codex --progress                   # Codex
        skillgym run --suite SUITE --provider claude --record      # keep the streams to replay offline
        ```

        (`SUITE` is this folder.) Real agents need their CLI on PATH and a credential in the environment
        (`ANTHROPIC_API_KEY` for claude, `OPENAI_API_KEY` for codex). Each run writes `runs/<run-id>/`:
        `report.md` compares the conditions, and each trial's folder under `trials/` holds `transcript.md`
        (what the agent said and ran, in order), `prompt.txt`, `result.json` and the raw `stdout.txt`.
        """
    )
