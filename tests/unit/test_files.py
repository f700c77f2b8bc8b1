"""write_atomic: the whole new content or the old one, a temp file beside the target, nothing left over."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillgym.files import write_atomic


def test_text_and_bytes_replace_the_file_and_leave_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    write_atomic(str(target), "é\n")
    assert target.read_bytes() == "é\n".encode()
    write_atomic(target, b"{}")
    assert target.read_bytes() == b"{}"
    assert os.listdir(tmp_path) == ["result.json"]


def test_a_bare_name_is_written_in_the_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_atomic("report.md", "# r\n")
    assert (tmp_path / "report.md").read_text() == "# r\n"
    assert os.listdir(tmp_path) == ["report.md"]


def test_a_missing_folder_is_an_error_not_created(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomic(str(tmp_path / "gone" / "trace.json"), "{}")
    assert os.listdir(tmp_path) == []
