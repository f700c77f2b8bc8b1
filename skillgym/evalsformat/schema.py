"""Reading the Agent Skills eval files: ``evals/evals.json`` eval sets and trigger-eval sets, validated.

An eval set is skill-creator's ``{"skill_name": ..., "evals": [{"id", "prompt", "expected_output",
"files", "expectations"}]}`` (some versions spell ``expectations`` as ``assertions``); a trigger set is
the description optimizer's ``[{"query": ..., "should_trigger": true|false}]``. Every problem is an
``EvalsFormatError`` naming the file, the JSON path (``$.evals[2].expectations[0]``) and the fix. Keys
the format does not define are kept by name (tools add their own, such as ``scorers``), except one that
looks like a misspelt known key, which is an error.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Final, Literal, TypeAlias

from ..errors import UsageError
from ..model import Data

EvalId: TypeAlias = int | str
ExpectationsKey: TypeAlias = Literal["expectations", "assertions"]

EVAL_SET_KEYS: Final = ("skill_name", "evals")
EVAL_KEYS: Final = ("id", "prompt", "expected_output", "files", "expectations", "assertions", "eval_name")
TRIGGER_KEYS: Final = ("query", "should_trigger")
# The Agent Skills naming rule for a skill's name.
_SKILL_NAME: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
_STRING_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class EvalsFormatError(UsageError):
    """An Agent Skills eval file that cannot be read: the message names the file, JSON path and fix."""


class AgentEval(Data, frozen=True, kw_only=True):
    """One eval of an eval set, as the file gives it (``expectations_key`` says which spelling it used)."""

    id: EvalId
    prompt: str
    expected_output: str = ""
    files: tuple[str, ...] = ()
    expectations: tuple[str, ...] = ()
    expectations_key: ExpectationsKey | None = None  # None: the eval gives neither key
    eval_name: str | None = None
    ignored: tuple[str, ...] = ()  # keys skillgym does not read, in file order


class EvalSet(Data, frozen=True, kw_only=True):
    """A skill-creator ``evals.json``: the skill's name and its evals, in file order."""

    skill_name: str
    evals: tuple[AgentEval, ...]
    ignored: tuple[str, ...] = ()


class TriggerQuery(Data, frozen=True, kw_only=True):
    """One trigger eval: a user's request and whether the skill should be used for it."""

    query: str
    should_trigger: bool
    ignored: tuple[str, ...] = ()


class TriggerSet(Data, frozen=True, kw_only=True):
    """A trigger-eval set: requests that should and should not make the agent use the skill."""

    queries: tuple[TriggerQuery, ...]


def read_eval_file(path: Path) -> EvalSet | TriggerSet:
    """The eval set or trigger set in ``path``; raises ``EvalsFormatError``."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise EvalsFormatError(
            f"{path} does not exist; give the path of the skill's evals/evals.json (or of a trigger-eval set)"
        ) from exc
    except IsADirectoryError as exc:
        raise EvalsFormatError(
            f"{path} is a folder; give the JSON file itself, such as {path / 'evals.json'}"
        ) from exc
    except UnicodeDecodeError as exc:
        raise EvalsFormatError(f"{path} is not UTF-8 text (bad byte at offset {exc.start})") from exc
    except OSError as exc:
        raise EvalsFormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return parse_eval_file(text, path)


def parse_eval_file(text: str, path: Path) -> EvalSet | TriggerSet:
    """``text`` (the contents of ``path``) as an eval set or a trigger set."""
    try:
        doc = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise EvalsFormatError(
            f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); fix the file's syntax"
        ) from exc
    except _DuplicateKey as exc:
        raise EvalsFormatError(
            f"{path}: key {exc.key!r} is given twice in one object; keep one of them"
        ) from exc
    reader = _Reader(path)
    if isinstance(doc, list):
        return reader.trigger_set(doc)
    if isinstance(doc, dict):
        return reader.eval_set(doc)
    raise reader.error(
        "$",
        f"expected an object (an eval set: skill_name and evals) or a list (a trigger set of "
        f"{{query, should_trigger}}), found {_kind(doc)}",
        'start the file with {"skill_name": "...", "evals": [...]} '
        'or [{"query": "...", "should_trigger": true}]',
    )


class _DuplicateKey(EvalsFormatError):
    """A key given twice in one JSON object; re-raised with the file's name by ``parse_eval_file``."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(key)
        found[key] = value
    return found


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {json.dumps(value)}"
    if isinstance(value, int | float):
        return f"the number {json.dumps(value)}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {json.dumps(shown)}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return "an object"


class _Reader:
    """Checks one file's parsed JSON; every error carries the file and the JSON path."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, where: str, problem: str, fix: str) -> EvalsFormatError:
        return EvalsFormatError(f"{self.path}: {where}: {problem}; {fix}")

    def _ignored(self, obj: Mapping[str, object], known: Sequence[str], where: str) -> tuple[str, ...]:
        """The keys of ``obj`` not in ``known``; one that looks like a misspelt known key is an error."""
        unknown = [k for k in obj if k not in known]
        for key in unknown:
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.8)
            if close:
                raise self.error(
                    f"{where}.{key}",
                    f"unknown key {key!r}",
                    f"did you mean {close[0]!r}? (rename it; skillgym reads only {', '.join(known)})",
                )
        return tuple(unknown)

    def _text(self, obj: Mapping[str, object], key: str, where: str, *, required: bool) -> str | None:
        if key not in obj:
            if required:
                raise self.error(where, f"missing the required key {key!r}", f'add "{key}": "..."')
            return None
        value = obj[key]
        if not isinstance(value, str):
            raise self.error(
                f"{where}.{key}",
                f"expected a string, found {_kind(value)}",
                f'write "{key}" as a JSON string',
            )
        if required and not value.strip():
            raise self.error(f"{where}.{key}", "is empty", f'give "{key}" some text')
        return value

    def _texts(self, obj: Mapping[str, object], key: str, where: str, *, what: str) -> tuple[str, ...]:
        value = obj.get(key, [])
        if not isinstance(value, list):
            raise self.error(
                f"{where}.{key}",
                f"expected a list of strings, found {_kind(value)}",
                f'write "{key}": ["..."] (an empty list when there are none)',
            )
        texts: list[str] = []
        for n, item in enumerate(value):
            at = f"{where}.{key}[{n}]"
            if not isinstance(item, str):
                raise self.error(
                    at, f"expected a string, found {_kind(item)}", f"write each {what} as a string"
                )
            if not item.strip():
                raise self.error(at, f"empty {what}", f"write the {what} or remove the empty string")
            texts.append(item)
        return tuple(texts)

    # Eval sets

    def eval_set(self, doc: Mapping[str, object]) -> EvalSet:
        ignored = self._ignored(doc, EVAL_SET_KEYS, "$")
        name = self._text(doc, "skill_name", "$", required=True)
        assert name is not None
        if _SKILL_NAME.fullmatch(name) is None:
            raise self.error(
                "$.skill_name",
                f"{name!r} is not a skill name (1-64 lowercase letters, digits and hyphens, not starting or "
                "ending with a hyphen)",
                "use the name in the skill's SKILL.md frontmatter",
            )
        if "evals" not in doc:
            raise self.error(
                "$", "missing the required key 'evals'", 'add "evals": [{"id": 1, "prompt": "..."}]'
            )
        evals = doc["evals"]
        if not isinstance(evals, list):
            raise self.error(
                "$.evals", f"expected a list of evals, found {_kind(evals)}", 'write "evals": [{...}, ...]'
            )
        if not evals:
            raise self.error("$.evals", "is empty", 'add at least one eval: {"id": 1, "prompt": "..."}')
        parsed = [self._eval(item, f"$.evals[{n}]") for n, item in enumerate(evals)]
        seen: dict[str, int] = {}
        for n, item in enumerate(parsed):
            key = str(item.id).lower()  # case ids are lowercase: "A" and "a" would become one case
            if key in seen:
                raise self.error(
                    f"$.evals[{n}].id",
                    f"id {json.dumps(item.id)} is also the id of $.evals[{seen[key]}]",
                    "give every eval its own id",
                )
            seen[key] = n
        return EvalSet(skill_name=name, evals=tuple(parsed), ignored=ignored)

    def _eval(self, item: object, where: str) -> AgentEval:
        if not isinstance(item, dict):
            raise self.error(
                where, f"expected an eval object, found {_kind(item)}", 'write {"id": 1, "prompt": "..."}'
            )
        ignored = self._ignored(item, EVAL_KEYS, where)
        if "id" not in item:
            raise self.error(
                where, "missing the required key 'id'", 'add "id": N, a number unique in the file'
            )
        ident = item["id"]
        if isinstance(ident, bool) or not isinstance(ident, int | str):
            raise self.error(
                f"{where}.id",
                f"expected a whole number, found {_kind(ident)}",
                'write "id": 1 (unique in the file)',
            )
        if isinstance(ident, int) and ident < 0:
            raise self.error(f"{where}.id", f"{ident} is negative", "use 0 or a positive number")
        if isinstance(ident, str) and _STRING_ID.fullmatch(ident) is None:
            raise self.error(
                f"{where}.id",
                f"{json.dumps(ident)} is not usable in a case id (letters, digits, '.', '_' and '-')",
                "use a number, as the format documents, or such a string",
            )
        prompt = self._text(item, "prompt", where, required=True)
        assert prompt is not None
        expected_output = self._text(item, "expected_output", where, required=False) or ""
        eval_name = self._text(item, "eval_name", where, required=False)
        if "expectations" in item and "assertions" in item:
            raise self.error(
                where,
                "gives both 'expectations' and 'assertions' (two spellings of one field)",
                "merge them into one list under 'expectations'",
            )
        key: ExpectationsKey | None = (
            "expectations" if "expectations" in item else "assertions" if "assertions" in item else None
        )
        expectations = () if key is None else self._texts(item, key, where, what="expectation")
        if not expectations and not expected_output.strip():
            raise self.error(
                where,
                "has neither expectations nor an expected_output, so nothing could grade it",
                'add "expectations": ["a statement a grader can check", ...]',
            )
        files = self._texts(item, "files", where, what="file path")
        for n, name in enumerate(files):
            problem = relative_path_problem(name)
            if problem:
                raise self.error(
                    f"{where}.files[{n}]",
                    f"{json.dumps(name)} {problem}",
                    "give the path relative to the skill folder (such as evals/files/input.csv)",
                )
        return AgentEval(
            id=ident,
            prompt=prompt,
            expected_output=expected_output,
            files=files,
            expectations=expectations,
            expectations_key=key,
            eval_name=eval_name or None,
            ignored=ignored,
        )

    # Trigger sets

    def trigger_set(self, doc: Sequence[object]) -> TriggerSet:
        if not doc:
            raise self.error(
                "$", "the trigger set is empty", 'add items such as {"query": "...", "should_trigger": true}'
            )
        queries: list[TriggerQuery] = []
        seen: dict[str, int] = {}
        for n, item in enumerate(doc):
            where = f"$[{n}]"
            if not isinstance(item, dict):
                raise self.error(
                    where,
                    f"expected a trigger eval object, found {_kind(item)}",
                    'write {"query": "...", "should_trigger": true}',
                )
            ignored = self._ignored(item, TRIGGER_KEYS, where)
            query = self._text(item, "query", where, required=True)
            assert query is not None
            if "should_trigger" not in item:
                raise self.error(
                    where,
                    "missing the required key 'should_trigger'",
                    'add "should_trigger": true (or false when the skill should stay unused)',
                )
            flag = item["should_trigger"]
            if not isinstance(flag, bool):
                raise self.error(
                    f"{where}.should_trigger",
                    f"expected true or false, found {_kind(flag)}",
                    "write true or false, without quotes",
                )
            if query in seen:
                raise self.error(
                    f"{where}.query",
                    f"repeats the query of $[{seen[query]}]",
                    "remove one of them (a query is one case however often it is listed)",
                )
            seen[query] = n
            queries.append(TriggerQuery(query=query, should_trigger=flag, ignored=ignored))
        return TriggerSet(queries=tuple(queries))


def relative_path_problem(name: str) -> str | None:
    """Why ``name`` is not a plain relative path inside its folder, or None when it is one."""
    if "\\" in name:
        return "uses backslashes"
    pure = PurePosixPath(name)
    if pure.is_absolute() or re.match(r"[A-Za-z]:", name):
        return "is absolute"
    if ".." in pure.parts:
        return "climbs out of the skill folder with '..'"
    if not pure.parts or pure.parts == (".",):
        return "names no file"
    return None
