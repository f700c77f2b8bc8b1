"""`skillgym view`: a run's report.html in a browser, or its folder served on 127.0.0.1; runs/latest."""

from __future__ import annotations

import os
import re
import stat
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import run_cli, running_cli, wait_for, write_suite

SUITE = {
    "prompt/cases.py": """
        from skillgym import prompt_case

        with prompt_case("route") as c:
            c.category("trigger")
            c.prompt("wait for the server to print READY")
            c.expect_skill(None)
            with c.step("wait") as s:
                s.must_mention("wait")
    """,
    "stubs/route.md": "I would wait for READY on the screen before going on.",
}


@pytest.fixture
def ran(tmp_path: Path) -> Path:
    """A finished stub run of a one-case suite; its output folder is tmp_path/runs."""
    write_suite(tmp_path / "evals", SUITE)
    done = run_cli("run", "--provider", "stub", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    return tmp_path


def test_a_run_writes_report_html_and_points_latest_at_itself(ran: Path) -> None:
    latest = ran / "runs" / "latest"
    assert latest.is_symlink()
    run_dir = latest.resolve()
    assert (run_dir / "report.html").is_file()
    assert list(run_dir.glob("trials/*/*/*/*/trial-1/trial.html"))
    (run_dir / "report.html").unlink()
    rebuilt = run_cli("report", str(run_dir), cwd=ran)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "report.html" in rebuilt.stdout
    assert (run_dir / "report.html").is_file()


def test_view_serves_the_latest_run_on_loopback(ran: Path) -> None:
    env = {"DISPLAY": "", "WAYLAND_DISPLAY": "", "BROWSER": ""}
    with running_cli("view", cwd=ran, env=env) as child:
        assert child.stdout is not None
        line = wait_for(child.stdout.readline, timeout=30, what="the served URL")
        url = re.search(r"http://127\.0\.0\.1:\d+/report\.html", line)
        assert url is not None, line
        assert str((ran / "runs" / "latest").resolve()) in line
        with urllib.request.urlopen(url.group(0), timeout=10) as response:
            page = response.read().decode()
        assert "<svg" in page and 'id="case-table"' in page
        trial = re.search(r'href="(trials/[^"]+/trial\.html)"', page)
        assert trial is not None
        with urllib.request.urlopen(
            url.group(0).replace("report.html", trial.group(1)), timeout=10
        ) as response:
            assert 'id="trial"' in response.read().decode()


@pytest.mark.parametrize("where", [[], ["runs"]], ids=["latest", "output-folder"])
def test_view_opens_the_file_in_the_named_browser(ran: Path, where: list[str]) -> None:
    opened = ran / "opened.txt"
    browser = ran / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n', encoding="utf-8")
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
    done = run_cli("view", *where, cwd=ran, env={"BROWSER": str(browser), "DISPLAY": ":0"})
    assert done.returncode == 0, done.stderr
    run_dir = (ran / "runs" / "latest").resolve()
    wait_for(opened.exists, timeout=10, what="the browser script to run")
    assert opened.read_text().strip() == (run_dir / "report.html").as_uri()
    assert f"opened {run_dir / 'report.html'}" in done.stdout.replace("\n", "")


def test_view_without_a_run_says_what_to_do(tmp_path: Path) -> None:
    done = run_cli("view", cwd=tmp_path)
    assert done.returncode == 2
    assert "no run under runs/" in done.stderr and "skillgym run" in done.stderr


def test_view_of_a_run_without_report_html_says_how_to_write_it(ran: Path) -> None:
    run_dir = (ran / "runs" / "latest").resolve()
    (run_dir / "report.html").unlink()
    done = run_cli("view", str(run_dir), cwd=ran, env={"DISPLAY": ""})
    assert done.returncode == 2
    assert f"skillgym report {run_dir}" in done.stderr.replace("\n", "")
    assert os.path.isdir(run_dir)
