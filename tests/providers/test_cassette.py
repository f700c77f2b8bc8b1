"""Tests for skillgym.providers.cassette: layout, lookup order, header validation, atomic writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillgym.providers.cassette import (
    CassetteError,
    cassette_candidates,
    find_cassette,
    iter_cassette_lines,
    read_cassette,
    write_cassette,
)

from .support import meta


def candidates(suite_root: Path, **overrides: object) -> tuple[Path, Path]:
    fields: dict[str, object] = {
        "provider": "claude",
        "model": "sonnet",
        "lane": "execution",
        "case": "hello-prompt",
        "condition": "self-load",
        "trial": 2,
    }
    fields.update(overrides)
    return cassette_candidates(suite_root, **fields)  # type: ignore[arg-type]


def test_the_trial_cassette_comes_before_the_condition_cassette(suite_root: Path) -> None:
    base = suite_root / "cassettes" / "claude" / "sonnet" / "execution" / "hello-prompt"
    assert candidates(suite_root) == (base / "self-load" / "trial-2.jsonl", base / "self-load.jsonl")


def test_no_model_is_the_default_model_folder(suite_root: Path) -> None:
    assert candidates(suite_root, model=None)[1].parts[-4] == "default"


def test_find_prefers_the_trial_cassette_and_falls_back(suite_root: Path) -> None:
    trial, condition = candidates(suite_root)
    assert find_cassette((trial, condition)) is None
    condition.parent.mkdir(parents=True)
    condition.write_text("")
    assert find_cassette((trial, condition)) == condition
    trial.parent.mkdir(parents=True)
    trial.write_text("")
    assert find_cassette((trial, condition)) == trial


@pytest.mark.parametrize(
    ("field", "value"),
    [("case", "../../../etc"), ("condition", "a/b"), ("case", ".."), ("provider", ""), ("model", "x\\y")],
)
def test_an_id_that_would_escape_the_cassettes_dir_is_refused(
    suite_root: Path, field: str, value: str
) -> None:
    with pytest.raises(CassetteError, match="cannot be used as a file name"):
        candidates(suite_root, **{field: value})


def test_a_symlinked_folder_leading_out_is_refused(suite_root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    lane = suite_root / "cassettes" / "claude" / "sonnet" / "execution"
    lane.mkdir(parents=True)
    (lane / "hello-prompt").symlink_to(outside)
    with pytest.raises(CassetteError, match="outside"):
        candidates(suite_root)


def test_write_then_read_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "none.jsonl"
    header = meta(trial=None)
    write_cassette(path, header, [b'{"type":"message","text":"a"}\n', b'{"type":"result"}'])
    assert read_cassette(path) == header
    assert list(iter_cassette_lines(path)) == [b'{"type":"message","text":"a"}', b'{"type":"result"}']
    first = path.read_bytes().splitlines()[0]
    assert first.startswith(b'{"cassette":1,"provider":"claude","model":"sonnet","format":"skillgym-trace"')
    assert b'"trial":null' in first
    assert b"error_class" not in first
    assert [p.name for p in path.parent.iterdir()] == ["none.jsonl"], "no temp file is left behind"


def test_write_replaces_an_existing_cassette_whole(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write_cassette(path, meta(), [b"1", b"2", b"3"])
    write_cassette(path, meta(fingerprint="fp-2"), [b"4"])
    assert read_cassette(path).fingerprint == "fp-2"
    assert list(iter_cassette_lines(path)) == [b"4"]


def test_a_line_with_an_embedded_newline_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="stream line 2 contains a newline"):
        write_cassette(tmp_path / "c.jsonl", meta(), [b"ok", b"a\nb"])
    assert not (tmp_path / "c.jsonl").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"c\.jsonl:1: expected a cassette header line"),
        (b"\n{}", r"c\.jsonl:1: expected a cassette header line"),
        (b"not json\n", r"c\.jsonl:1: the cassette header is not a JSON object"),
        (b'{"type":"message","text":"x"}\n', r"c\.jsonl:1: expected cassette version 1 .* found None"),
        (b'{"cassette":2}\n', r"expected cassette version 1 .* found 2; re-record"),
        (b'{"cassette":1,"provider":"claude"}\n', r"c\.jsonl:1: invalid cassette header: .*missing required"),
    ],
)
def test_a_bad_header_names_the_file_and_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(content)
    with pytest.raises(CassetteError, match=message):
        read_cassette(path)


def test_a_missing_cassette_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="does not exist; record it with --record"):
        read_cassette(tmp_path / "missing.jsonl")
