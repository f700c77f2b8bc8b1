"""The Python case files ``skillgym import evals`` writes: readable DSL, one case per eval or query.

Strings become Python literals that read like the original text: short ones on one line, long or
multi-line ones as implicitly concatenated pieces, one line of the text (or about 80 characters of it)
per piece, so a reviewer can edit a prompt in place.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from typing import Final

from .schema import AgentEval, EvalSet, TriggerQuery, TriggerSet

# Tags the importer writes and the exporter reads back: which cases came from an Agent Skills file.
EVAL_TAG: Final = "agent-skills-eval"
TRIGGER_TAG: Final = "agent-skills-trigger"
EVAL_ID_TAG: Final = "eval-id="
EVAL_NAME_TAG: Final = "eval-name="
# The eval's expectations were spelt "assertions" in the file (given back that way on export).
ASSERTIONS_TAG: Final = "evals-key=assertions"
# The eval had no expectations: its expected_output is its one judged check.
GRADED_BY_EXPECTED_OUTPUT_TAG: Final = "graded-by=expected_output"
EVAL_CATEGORY: Final = "agent-skills-eval"
TRIGGER_CATEGORY: Final = "trigger"
NO_TRIGGER_CATEGORY: Final = "should-not-trigger"

_WIDTH: Final = 72  # characters of text per piece of a long string
_LINE: Final = 88  # the longest line written (ruff's and black's default)


def eval_case_id(skill_name: str, eval_id: int | str) -> str:
    """The case id of eval ``eval_id`` of ``skill_name``'s eval set: stable while both stay the same."""
    return f"{skill_name}-eval-{str(eval_id).lower()}"


def trigger_case_id(skill_name: str, position: int) -> str:
    """The case id of the trigger query at 1-based ``position`` in its file."""
    return f"{skill_name}-trigger-{position}"


def template_dir(case_id: str) -> str:
    """Where an eval's files are kept in the suite (relative to its root): the workspace template."""
    return f"templates/{case_id}"


def literal(text: str, indent: int) -> str:
    """``text`` as a Python expression placed at column ``indent`` (an argument on its own line)."""
    one = _quoted(text)
    if "\n" not in text.rstrip("\n") and len(one) + indent <= _LINE:
        return one
    pieces: list[str] = []
    for line in text.splitlines(keepends=True):
        pieces.extend(_pieces(line))
    pad = " " * indent
    return f"\n{pad}".join(_quoted(p) for p in pieces)


def _pieces(line: str) -> Iterator[str]:
    """``line`` cut after a space near every ``_WIDTH`` characters (mid-word only in a longer word)."""
    while len(line) > _WIDTH:
        cut = line.rfind(" ", 0, _WIDTH) + 1 or _WIDTH
        yield line[:cut]
        line = line[cut:]
    if line:
        yield line


def _quoted(text: str) -> str:
    try:
        text.encode("utf-8")
        quoted = json.dumps(text, ensure_ascii=False)  # a JSON string is also a Python string literal
    except UnicodeEncodeError:  # a lone surrogate ("\ud800" in the JSON): keep it escaped
        quoted = json.dumps(text)
    if '"' in text and "'" not in text:
        # Single quotes, as ruff and black write it: every backslash in JSON starts a two-character
        # escape, so each \" left is an escaped quote, which needs no escape between single quotes.
        return "'" + quoted[1:-1].replace('\\"', '"') + "'"
    return quoted


def _call(name: str, text: str, indent: int) -> str:
    """``name(text)`` at ``indent``, the text on its own lines when it is long."""
    pad = " " * indent
    value = literal(text, indent + 4)
    if "\n" not in value and len(pad) + len(name) + len(value) + 2 <= _LINE:
        return f"{pad}{name}({value})\n"
    return f"{pad}{name}(\n{pad}    {value}\n{pad})\n"


def eval_set_source(evals: EvalSet, *, source_name: str, with_files: frozenset[str]) -> str:
    """The case file for ``evals``; ``with_files`` holds the case ids whose eval brought files."""
    name = evals.skill_name
    about = textwrap.fill(
        "Written by `skillgym import evals`; edit it like any case file. Each eval is an execution "
        "case: its prompt is the task, each expectation a judged check, its expected_output the "
        "case's grader notes (the judge's reference for a good result; never shown to the agent), and "
        "its files are copied into the workspace from templates/<case>/, at the paths the eval "
        "gives. The tags "
        f"{EVAL_TAG!r} and '{EVAL_ID_TAG}N' give the eval its id back in "
        "`skillgym export skill-creator`.",
        _LINE,
    )
    imports = "execution_case, workspace_preset" if with_files else "execution_case"
    head = (
        f'"""Agent Skills evals of the {name} skill, imported from {source_name}.\n\n{about}\n"""\n\n'
        f"from skillgym import {imports}\n"
    )
    blocks = [head]
    for n, item in enumerate(evals.evals):
        blocks.append(_eval_block(item, name, n, source_name=source_name, with_files=with_files))
    return "\n".join(blocks)


def _eval_block(
    item: AgentEval, skill_name: str, position: int, *, source_name: str, with_files: frozenset[str]
) -> str:
    case_id = eval_case_id(skill_name, item.id)
    out = [f"# eval {item.id} of {source_name} ($.evals[{position}])"]
    if item.ignored:
        out.append(f"; not imported (skillgym does not read them): {', '.join(item.ignored)}")
    out.append("\n")
    if case_id in with_files:  # its files, the workspace its trials start in
        out.append(
            f"workspace_preset(\n"
            f"    {json.dumps(case_id)},\n"
            f"    description={json.dumps(f'the files of eval {item.id}')},\n"
            f"    template={json.dumps(template_dir(case_id))},\n"
            f")\n"
        )
    out.append(f"with execution_case({json.dumps(case_id)}) as c:\n")
    out.append(f"    c.category({json.dumps(EVAL_CATEGORY)})\n")
    out.append(f"    c.expect_skill({json.dumps(skill_name)})\n")
    if case_id in with_files:
        out.append(f"    c.workspace({json.dumps(case_id)})\n")
    out.append(_call("c.task", item.prompt, 4))
    if item.expected_output.strip():
        out.append(_call("c.grader_notes", item.expected_output, 4))
    out.append("    with c.assertions() as a:\n")
    if item.expectations:
        out.extend(_call("a.judge", text, 8) for text in item.expectations)
    else:
        out.append("        # The eval gives no expectations: its expected_output is the one judged check.\n")
        out.append(_call("a.judge", item.expected_output, 8))
    out.append("    c.budget(timeout_s=600, max_turns=50)  # a whole task, as skill-creator runs it\n")
    tags = [
        EVAL_TAG,
        f"{EVAL_ID_TAG}{json.dumps(item.id)}",
    ]  # a string id keeps its quotes: "01" stays a string
    if item.eval_name:
        tags.append(f"{EVAL_NAME_TAG}{item.eval_name}")
    if item.expectations_key == "assertions":
        tags.append(ASSERTIONS_TAG)
    if not item.expectations:
        tags.append(GRADED_BY_EXPECTED_OUTPUT_TAG)
    out.append("    # What `skillgym export skill-creator` needs to give the eval back as it was.\n")
    out.append(_tags(tags))
    return "".join(out)


def _tags(tags: list[str]) -> str:
    quoted = [_quoted(t) for t in tags]
    line = f"    c.tags({', '.join(quoted)})\n"
    if len(line) <= _LINE + 1:
        return line
    return "    c.tags(\n" + "".join(f"        {q},\n" for q in quoted) + "    )\n"


def trigger_set_source(triggers: TriggerSet, *, skill_name: str, source_name: str) -> str:
    """The case file for a trigger set: one prompt case per query."""
    about = textwrap.fill(
        "Written by `skillgym import evals`; edit it like any case file. Each query is a prompt "
        f"case: should_trigger true expects the agent to use the skill ({TRIGGER_CATEGORY!r}), false "
        f"expects no skill ({NO_TRIGGER_CATEGORY!r}). Case ids number the queries in the file's "
        f"order; the tag {TRIGGER_TAG!r} marks them for `skillgym export skill-creator`.",
        _LINE,
    )
    head = (
        f'"""Trigger evals of the {skill_name} skill, imported from {source_name}.\n\n{about}\n"""\n\n'
        "from skillgym import prompt_case\n"
    )
    blocks = [head]
    for n, query in enumerate(triggers.queries):
        blocks.append(_trigger_block(query, skill_name, n, source_name))
    return "\n".join(blocks)


def _trigger_block(query: TriggerQuery, skill_name: str, position: int, source_name: str) -> str:
    case_id = trigger_case_id(skill_name, position + 1)
    out = [f"# query {position + 1} of {source_name} ($[{position}])"]
    if query.ignored:
        out.append(f"; not imported (skillgym does not read them): {', '.join(query.ignored)}")
    out.append(f"\nwith prompt_case({json.dumps(case_id)}) as c:\n")
    category = TRIGGER_CATEGORY if query.should_trigger else NO_TRIGGER_CATEGORY
    out.append(f"    c.category({json.dumps(category)})\n")
    out.append(f"    c.expect_skill({json.dumps(skill_name) if query.should_trigger else 'None'})\n")
    out.append(_call("c.prompt", query.query, 4))
    out.append(f"    c.tags({json.dumps(TRIGGER_TAG)})  # for `skillgym export skill-creator`\n")
    return "".join(out)
