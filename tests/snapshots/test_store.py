"""Snapshot files: byte-stable rendering, strict reading with file:line errors, atomic writes."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillgym.errors import SkillgymError
from skillgym.snapshots import (
    Figures,
    SnapshotEntry,
    SnapshotError,
    SnapshotFile,
    parse_snapshot,
    read_snapshot,
    render_snapshot,
    snapshot_path,
    write_snapshot,
)
from skillgym.snapshots.store import file_name


def entry(
    case: str = "calm", *, lane: str = "prompt", condition: str = "none", total: float = 120
) -> SnapshotEntry:
    figures = Figures(input=100, output=20, total=total)
    return SnapshotEntry(
        lane=lane,  # type: ignore[arg-type]
        case=case,
        condition=condition,
        fingerprint="f" * 64,
        trials=3,
        run="20260101-000000-abcdef",
        median=figures,
        min=figures,
        max=figures,
    )


def snapshot(*entries: SnapshotEntry) -> SnapshotFile:
    return SnapshotFile(provider="claude", model="sonnet", entries=entries)


def test_render_sorts_entries_ends_with_one_newline_and_reads_back() -> None:
    doc = snapshot(
        entry("zeta"), entry("alpha", lane="execution"), entry("alpha"), entry("alpha", condition="a")
    )
    text = render_snapshot(doc)
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert text.startswith("# skillgym token snapshots")
    order = [(e["lane"], e["case"], e["condition"]) for e in tomllib.loads(text)["entry"]]
    assert order == [
        ("prompt", "alpha", "a"),
        ("prompt", "alpha", "none"),
        ("prompt", "zeta", "none"),
        ("execution", "alpha", "none"),
    ]
    back = parse_snapshot(text.encode(), "x.toml")
    assert render_snapshot(back) == text
    assert sorted(back.entries, key=lambda e: e.key) == sorted(doc.entries, key=lambda e: e.key)


def test_every_entry_is_a_block_with_median_min_max_tables() -> None:
    text = render_snapshot(snapshot(entry()))
    assert '\n[[entry]]\nlane = "prompt"\ncase = "calm"\n' in text
    assert "\n[entry.median]\ninput = 100\noutput = 20\ntotal = 120\n" in text
    assert "[entry.min]" in text and "[entry.max]" in text
    assert "cached" not in text  # a count never reported is left out, not written as 0


names = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FF), min_size=1, max_size=12)
counts = st.one_of(st.integers(0, 10**9), st.integers(0, 10**7).map(lambda n: n + 0.5))


@settings(max_examples=60, deadline=None)
@given(
    cases=st.lists(names, min_size=0, max_size=5, unique=True),
    total=counts,
    maybe=st.one_of(st.none(), counts),
    note=st.text(max_size=20),
)
def test_round_trip_is_byte_stable(cases: list[str], total: float, maybe: float | None, note: str) -> None:
    figures = Figures(input=maybe, output=maybe, cached=maybe, total=total)
    entries = tuple(
        SnapshotEntry(
            lane="prompt",
            case=c,
            condition="none",
            fingerprint="ab" * 32,
            trials=2,
            note=note,
            median=figures,
            min=figures,
            max=figures,
        )
        for c in cases
    )
    text = render_snapshot(SnapshotFile(provider="p", model="m/1", entries=entries))
    back = parse_snapshot(text.encode(), "x.toml")
    assert render_snapshot(back) == text
    assert {e.case for e in back.entries} == set(cases)


def _error(text: str, **expected: str) -> SnapshotError:
    with pytest.raises(SnapshotError) as caught:
        parse_snapshot(text.encode(), "snapshots/claude/sonnet.toml", **expected)
    assert isinstance(caught.value, SkillgymError) and caught.value.exit_code == 2
    return caught.value


GOOD = render_snapshot(snapshot(entry("a"), entry("b")))


def _line(text: str, needle: str, nth: int = 1) -> int:
    hits = [n for n, line in enumerate(text.splitlines(), start=1) if line.startswith(needle)]
    return hits[nth - 1]


def test_invalid_toml_names_file_and_line() -> None:
    err = _error('schema = 1\nprovider = "claude"\nmodel = "sonnet"\n[[entry]\n')
    assert err.line == 4
    assert str(err).startswith("snapshots/claude/sonnet.toml:4: not valid TOML")
    assert "left untouched" in str(err)


def test_not_utf8_names_the_line() -> None:
    with pytest.raises(SnapshotError) as caught:
        parse_snapshot(b'schema = 1\nnote = "\xff"\n', "s.toml")
    assert caught.value.line == 2


def test_unknown_or_missing_schema_names_the_line() -> None:
    assert _error("# hi\n\nschema = 7\n").line == 3
    assert "schema 7 is not the schema 1" in str(_error("# hi\n\nschema = 7\n"))
    assert "no `schema` key" in str(_error('provider = "x"\n'))
    assert _error('schema = "1"\n').line == 1


def _replace_nth(text: str, old: str, new: str, nth: int) -> str:
    parts = text.split(old)
    return old.join(parts[:nth]) + new + old.join(parts[nth:])


def test_wrong_value_names_the_line_of_the_key() -> None:
    text = _replace_nth(GOOD, "total = 120", 'total = "many"', 4)  # the second entry's median
    err = _error(text)
    assert "$.entry[1].median.total" in str(err)
    assert err.line == _line(text, 'total = "many"')


def test_unknown_key_and_negative_count_name_their_lines() -> None:
    text = GOOD.replace('condition = "none"', 'condition = "none"\ncolour = "red"', 1)
    err = _error(text)
    assert "unknown field `colour`" in str(err)
    assert err.line == _line(text, "colour")
    negative = GOOD.replace("output = 20", "output = -1", 1)
    assert _error(negative).line == _line(negative, "output = -1")


def test_missing_required_key_points_at_its_entry() -> None:
    text = GOOD.replace('fingerprint = "' + "f" * 64 + '"\n', "", 1)
    err = _error(text)
    assert "fingerprint" in str(err)
    assert err.line == _line(text, "[[entry]]")


def test_duplicate_entries_and_a_misplaced_file_are_errors() -> None:
    once = render_snapshot(snapshot(entry("a")))
    twice = once + "\n" + once[once.index("[[entry]]") :]
    err = _error(twice)
    assert "a second entry for prompt/a/none" in str(err)
    assert err.line == _line(twice, "[[entry]]", 2)
    moved = _error(GOOD, provider="codex")
    assert "provider is 'claude'" in str(moved) and moved.line == _line(GOOD, "provider")


def test_read_missing_is_none_and_write_is_atomic_stable_and_readable(tmp_path: Path) -> None:
    path = snapshot_path(tmp_path / "snapshots", "claude", "sonnet")
    assert path == tmp_path / "snapshots/claude/sonnet.toml"
    assert read_snapshot(path) is None
    path.parent.mkdir(parents=True)
    assert write_snapshot(path, snapshot(entry()))
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    stamp = path.stat().st_mtime_ns
    os.chmod(path, 0o664)
    assert not write_snapshot(path, snapshot(entry()))  # same bytes: not written at all
    assert path.stat().st_mtime_ns == stamp
    assert write_snapshot(path, snapshot(entry(total=121)))
    assert stat.S_IMODE(path.stat().st_mode) == 0o664  # an existing file keeps its permissions
    assert read_snapshot(path, provider="claude", model="sonnet") == snapshot(entry(total=121))
    assert sorted(p.name for p in path.parent.iterdir()) == ["sonnet.toml"]


def test_file_names_are_safe() -> None:
    assert file_name("claude-sonnet-4.5") == "claude-sonnet-4.5"
    assert file_name("openai/gpt 5") == "openai-gpt-5"
    assert file_name("../x") == "-x"
    assert file_name("...") == "default"
