"""Bad run flags: refused before the run folder exists (exit 2, one clear line), or never a broken file."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import run_cli, run_files, write_suite
from tests.reliability.test_bad_input import BASE, RUN, Bad, _tree

CORPUS: dict[str, Bad] = {
    "record-model-with-slashes": Bad(
        {}, (*RUN, "--record", "--model", "../../x"), ("--model '../../x'", "one folder name", "--record")
    ),
    "record-model-dot-dot": Bad({}, (*RUN, "--record", "--model", ".."), ("--model '..'", "--record")),
    "reporter-output-is-a-directory": Bad(
        {},
        (*RUN, "--reporter", "jsonl", "--reporter-output", "{suite}"),
        ("evals is a directory", "name a file"),
    ),
    "reporter-output-parent-missing": Bad(
        {},
        (*RUN, "--reporter", "jsonl", "--reporter-output", "{suite}/nope/events.jsonl"),
        ("nope does not exist", "create it first"),
    ),
    "agent-command-is-a-directory": Bad(
        {},
        ("run", "--provider", "command", "--agent-command", "{suite}"),
        ("evals is a directory", "expects a program"),
    ),
    "plan-too-large": Bad(
        {}, (*RUN, "--trials", "100000000", "--dry-run"), ("400,000,000 trials", "1,000,000", "--trials")
    ),
}


@pytest.mark.parametrize("name", list(CORPUS))
def test_bad_flag_is_one_clear_line_exit_2_and_writes_nothing(name: str, tmp_path: Path) -> None:
    bad = CORPUS[name]
    suite = write_suite(tmp_path / "evals", {**BASE, **bad.files})
    before = _tree(tmp_path)
    args = [a.replace("{suite}", str(suite)) for a in bad.args] + ["--suite", str(suite)]
    started = time.monotonic()
    proc = run_cli(*args, cwd=tmp_path, timeout=30)
    assert time.monotonic() - started < 20, "a refused flag is refused before any work"
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    for fragment in bad.expect:
        assert fragment in proc.stderr, (fragment, proc.stderr)
    assert _tree(tmp_path) == before, "bad input must not write or change any file"
    assert not (tmp_path / "runs").exists()


def test_record_refuses_a_cassettes_folder_that_links_out_of_the_suite(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "evals", BASE)
    outside = tmp_path / "outside"
    outside.mkdir()
    (suite / "cassettes").mkdir()
    (suite / "cassettes" / "stub").symlink_to(outside)
    proc = run_cli(*RUN, "--record", "--suite", str(suite), cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "--record cannot save" in proc.stderr and "symlink" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "runs").exists() and not any(outside.iterdir())


def test_junit_stays_valid_xml_when_the_agent_prints_control_characters(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "evals", BASE)
    agent = tmp_path / "agent.sh"
    agent.write_text('#!/bin/sh\ncat >/dev/null\nprintf "boom \\001\\033[31m red\\n" >&2\nexit 1\n')
    agent.chmod(0o755)
    proc = run_cli(
        "run",
        "--suite",
        str(suite),
        "--provider",
        "command",
        "--agent-command",
        str(agent),
        "--condition",
        "none",
        "--reporter",
        "junit",
        cwd=tmp_path,
    )
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    (junit,) = run_files(tmp_path / "runs", "junit.xml")
    error = ET.parse(junit).getroot().find("testsuite/testcase/error")
    assert error is not None
    assert "boom \\x01\\x1b[31m red" in (error.get("message") or ""), error.get("message")
    assert "boom \\x01\\x1b[31m red" in (error.text or "")
