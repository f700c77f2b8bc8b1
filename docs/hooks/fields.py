"""mkdocs hook: ``<!-- fields: module.Struct -->`` in a page becomes a table of the Struct's JSON fields.

The tables are read from the msgspec Structs themselves (names as encoded, types, defaults, and each
field's trailing ``# comment`` in the source), so the schema pages cannot drift from the code.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import msgspec

_MARKER = re.compile(r"<!-- fields: ([\w.]+) -->")
_COMMENT = re.compile(r"^\s+(\w+)\s*:[^#]*#\s*(.+)$")


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace every marker with its table."""
    return _MARKER.sub(lambda m: table(m.group(1)), markdown)


def _load(dotted: str) -> type[msgspec.Struct]:
    module, _, name = dotted.rpartition(".")
    found = getattr(importlib.import_module(module), name)
    if not (isinstance(found, type) and issubclass(found, msgspec.Struct)):
        raise TypeError(f"<!-- fields: {dotted} --> names {found!r}, not a msgspec Struct")
    return found


def _comments(cls: type) -> dict[str, str]:
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__.startswith("skillgym"):
            for line in inspect.getsource(klass).splitlines():
                match = _COMMENT.match(line)
                if match:
                    found[match.group(1)] = match.group(2).strip()
    return found


def _type_name(info: msgspec.inspect.Type) -> str:
    if isinstance(info, msgspec.inspect.UnionType):
        return " or ".join(_type_name(t) for t in info.types)
    if isinstance(info, msgspec.inspect.NoneType):
        return "null"
    if isinstance(info, msgspec.inspect.LiteralType):
        return " or ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in info.values)
    if isinstance(info, (msgspec.inspect.ListType, msgspec.inspect.VarTupleType)):
        return f"list of {_type_name(info.item_type)}"
    if isinstance(info, msgspec.inspect.DictType):
        return f"object of {_type_name(info.value_type)}"
    if isinstance(info, msgspec.inspect.StructType):
        return f"`{info.cls.__name__}`"
    simple = {
        msgspec.inspect.StrType: "string",
        msgspec.inspect.IntType: "integer",
        msgspec.inspect.FloatType: "number",
        msgspec.inspect.BoolType: "boolean",
        msgspec.inspect.AnyType: "any",
    }
    return simple.get(type(info), type(info).__name__.removesuffix("Type").lower())


def _default(field: msgspec.inspect.Field) -> str:
    if field.required:
        return "required"
    factory = field.default_factory
    value = factory() if factory is not msgspec.NODEFAULT else field.default
    if isinstance(value, msgspec.Struct):
        return f"default `{type(value).__name__}`"
    return f"default `{msgspec.json.encode(value).decode()}`"


def table(dotted: str) -> str:
    """The markdown table of ``dotted``'s fields: JSON name, type, required or default, note."""
    cls = _load(dotted)
    info = msgspec.inspect.type_info(cls)
    assert isinstance(info, msgspec.inspect.StructType)
    notes = _comments(cls)
    rows = ["| field | type | | note |", "|---|---|---|---|"]
    if info.tag_field is not None:
        rows.append(f'| `{info.tag_field}` | `"{info.tag}"` | required | tells the kinds apart |')
    for field in info.fields:
        note = notes.get(field.name, "").replace("|", "\\|")
        rows.append(f"| `{field.encode_name}` | {_type_name(field.type)} | {_default(field)} | {note} |")
    return "\n".join(rows)
