"""Reading a skill's ``SKILL.md`` frontmatter: the ``name`` and ``description`` a suite is drafted from.

The frontmatter is the YAML block between the first two ``---`` lines. Skills use a small part of YAML:
``key: value`` lines, quoted strings, block scalars (``|`` and ``>``) and plain values continued on
indented lines, plus nested mappings (``metadata:``) whose contents are not needed here. That part is read
without a YAML dependency; anything else is an error naming the file and the line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Final

import msgspec

from ..errors import UsageError

# The Agent Skills naming rule, which is also a valid skillgym id.
_NAME: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
_KEY: Final = re.compile(r"([A-Za-z_][\w-]*)\s*:(?:\s+(.*))?$")
_BLOCK: Final = re.compile(r"[|>][+-]?$")
_COMMENT: Final = re.compile(r"\s+#")


class SkillInfo(msgspec.Struct, frozen=True, kw_only=True):
    """What a suite needs to know of a skill: its folder, ``name`` and ``description``."""

    folder: Path
    name: str
    description: str


class FrontmatterError(UsageError):
    """``SKILL.md`` has no frontmatter, or a field is missing or malformed; the message names the line."""


def read_skill(folder: Path) -> SkillInfo:
    """The skill in ``folder``, from its ``SKILL.md`` frontmatter; raises ``FrontmatterError``."""
    path = folder / "SKILL.md"
    if not folder.is_dir():
        raise FrontmatterError(f"{folder} is not a folder; give the skill's folder (the one with SKILL.md)")
    try:
        text = path.read_text(encoding="utf-8-sig")  # an editor's byte-order mark is no part of '---'
    except FileNotFoundError as exc:
        raise FrontmatterError(
            f"{path} does not exist; a skill folder holds a SKILL.md that starts with a frontmatter block "
            "('---', 'name: ...', 'description: ...', '---')"
        ) from exc
    except UnicodeDecodeError as exc:
        raise FrontmatterError(f"{path} is not UTF-8 text (bad byte at offset {exc.start})") from exc
    except OSError as exc:
        raise FrontmatterError(f"cannot read {path}: {exc.strerror or exc}") from exc
    fields = parse_frontmatter(text, path)
    name = _field(fields, "name", path)
    if _NAME.fullmatch(name) is None:
        raise FrontmatterError(
            f"{path}:{fields['name'][1]}: field 'name' is {name!r}; a skill name is 1-64 lowercase letters, "
            "digits and hyphens, not starting or ending with a hyphen (for example 'csv-summary')"
        )
    return SkillInfo(folder=folder, name=name, description=_field(fields, "description", path))


def _field(fields: dict[str, tuple[str, int]], key: str, path: Path) -> str:
    if key not in fields:
        raise FrontmatterError(f"{path}: the frontmatter has no field '{key}'; add a line '{key}: ...'")
    value, line = fields[key]
    if not value.strip():
        raise FrontmatterError(f"{path}:{line}: field '{key}' is empty; give it a value")
    return " ".join(value.split()) if key != "description" else value.strip()


def parse_frontmatter(text: str, path: Path) -> dict[str, tuple[str, int]]:
    """The top-level string fields of the frontmatter of ``text``, each with its 1-based line."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise FrontmatterError(
            f"{path}:1: expected the frontmatter's opening '---' on the first line, found "
            f"{(lines[0] if lines else '')[:60]!r}; start the file with '---', 'name: ...', "
            "'description: ...', '---'"
        )
    end = next((n for n in range(1, len(lines)) if lines[n].strip() == "---"), None)
    if end is None:
        raise FrontmatterError(
            f"{path}:1: the frontmatter opened with '---' is never closed; add a '---' line"
        )
    fields: dict[str, tuple[str, int]] = {}
    n = 1
    while n < end:
        line = lines[n]
        if not line.strip() or line.lstrip().startswith("#"):
            n += 1
            continue
        if line[0].isspace():
            raise FrontmatterError(
                f"{path}:{n + 1}: unexpected indented line {line.strip()[:60]!r}; a field starts at the "
                "beginning of its line"
            )
        match = _KEY.match(line)
        if match is None:
            raise FrontmatterError(
                f"{path}:{n + 1}: expected 'key: value', found {line[:60]!r}; quote a value that holds ': '"
            )
        key, raw = match.group(1), (match.group(2) or "").strip()
        following = _indented(lines, n + 1, end)
        if key in fields:
            raise FrontmatterError(
                f"{path}:{n + 1}: field '{key}' is given twice (first on line {fields[key][1]})"
            )
        fields[key] = (_value(raw, following, path, n + 1, key), n + 1)
        n += 1 + len(following)
    return fields


def _indented(lines: list[str], start: int, end: int) -> list[str]:
    """The indented (or blank) lines from ``start`` that continue the field above them."""
    taken: list[str] = []
    for line in lines[start:end]:
        if line.strip() and not line[0].isspace():
            break
        taken.append(line)
    while taken and not taken[-1].strip():
        taken.pop()
    return taken


def _value(raw: str, following: list[str], path: Path, line: int, key: str) -> str:
    if _BLOCK.fullmatch(raw):
        body = [row.strip() for row in following]
        if raw.startswith("|"):
            return "\n".join(body)
        return " ".join(row for row in body if row)
    if raw[:1] in {'"', "'"}:
        quoted = " ".join([raw, *(row.strip() for row in following)])
        return _unquote(quoted, path, line, key)
    if not raw and following:
        return ""  # a nested mapping or list (metadata:, allowed-tools:); not a string field
    plain = " ".join([raw, *(row.strip() for row in following if row.strip())])
    return _COMMENT.split(plain, maxsplit=1)[0]  # as in YAML, " #" starts a comment in a plain value


def _unquote(text: str, path: Path, line: int, key: str) -> str:
    quote, end = text[0], _closing(text)
    if end is None:
        raise FrontmatterError(
            f"{path}:{line}: field '{key}' opens a {quote} quote that is not closed at the end of its value"
        )
    rest = text[end + 1 :].strip()
    if rest and not rest.startswith("#"):
        raise FrontmatterError(
            f"{path}:{line}: field '{key}' has {rest[:40]!r} after its closing {quote}; quote the whole value"
        )
    quoted = text[: end + 1]
    if quote == "'":
        return quoted[1:-1].replace("''", "'")
    try:
        value = json.loads(quoted)
    except json.JSONDecodeError as exc:
        raise FrontmatterError(
            f"{path}:{line}: field '{key}' is not a valid double-quoted string: {exc}"
        ) from exc
    if not isinstance(value, str):  # pragma: no cover - json.loads of a quoted text is a str
        raise FrontmatterError(f"{path}:{line}: field '{key}' is not a string")
    return value


def _closing(text: str) -> int | None:
    """The index of the quote that closes the one ``text`` starts with, or None."""
    quote, n = text[0], 1
    while n < len(text):
        char = text[n]
        if quote == '"' and char == "\\":
            n += 2
            continue
        if char == quote:
            if quote == "'" and text[n + 1 : n + 2] == "'":  # '' is a quote inside single quotes
                n += 2
                continue
            return n
        n += 1
    return None
