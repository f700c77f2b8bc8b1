"""`skillgym compare A B` on two real runs of a suite: its output, its exit codes, and --compare-baseline."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import run_agent, run_cli, run_dirs, write_suite

SuiteDir = Callable[[dict[str, str]], Path]

CASES = """
    from skillgym import prompt_case

    for name in NAMES:
        with prompt_case(name) as c:
            c.category("trigger")
            c.prompt("wait for the server")
            c.expect_skill(None)
            with c.step("waits") as s:
                s.must_mention("wait")
                if name == "edited" and EDITED:
                    s.must_not_mention("nap")
"""
GOOD, BAD = "I would wait for the 'Listening' line.\n", "Just sleep 5.\n"


def _suite(root: Path, names: tuple[str, ...], edited: bool, stubs: dict[str, str]) -> Path:
    head = f"NAMES = {names!r}\nEDITED = {edited!r}\n"
    files = {"cases.py": CASES, **{f"stubs/{name}.md": text for name, text in stubs.items()}}
    write_suite(root, files)
    cases = root / "cases.py"
    cases.write_text(head + cases.read_text())
    return root


def _only_run(output: Path) -> Path:
    (run_dir,) = run_dirs(output)
    return run_dir


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    """Run A, then run B of the same suite with --compare-baseline A: one case breaks, one is fixed, one
    is edited, one is gone and one is new."""
    root = _suite(
        tmp_path / "suite",
        ("steady", "breaks", "fixes", "edited", "gone"),
        False,
        {"steady": GOOD, "breaks": GOOD, "fixes": BAD, "edited": GOOD, "gone": GOOD},
    )
    first = run_cli(
        "run", "--suite", str(root), "--provider", "stub", "--trials", "5", "--output", "A", cwd=tmp_path
    )
    assert first.returncode == 1, first.stderr  # "fixes" fails
    a = _only_run(tmp_path / "A")
    shutil.rmtree(root)
    _suite(
        root,
        ("steady", "breaks", "fixes", "edited", "fresh"),
        True,
        {"steady": GOOD, "breaks": BAD, "fixes": GOOD, "edited": GOOD, "fresh": GOOD},
    )
    second = run_cli(
        "run",
        "--suite",
        str(root),
        "--provider",
        "stub",
        "--trials",
        "5",
        "--output",
        "B",
        "--compare-baseline",
        str(a),
        cwd=tmp_path,
    )
    assert second.returncode == 1, second.stderr  # "breaks" fails
    return a, _only_run(tmp_path / "B")


def test_compare_names_every_change_and_exits_0(two_runs: tuple[Path, Path]) -> None:
    a, b = two_runs
    proc = run_cli("compare", str(a), str(b), cwd=a.parent.parent)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"# skillgym compare — {a.name} → {b.name}\n")
    assert "Rows: 1 fixed, 1 regressed, 1 unchanged, 1 new, 1 removed, 1 fingerprint-changed." in out
    assert (
        "| prompt | breaks | none | stub | 100% | 0% | -100 pts | [-100, -39] | 0.00794 | 0.0238 "
        "| regressed |" in out
    )
    assert (
        "| prompt | fixes | none | stub | 0% | 100% | +100 pts | [+39, +100] | 0.00794 | 0.0238 | fixed |"
        in out
    )
    assert "| prompt | edited | none | stub | 100% | 100% | - | - | - | - | fingerprint-changed |" in out
    assert "| prompt | gone | none | stub | 100% | - | - | - | - | - | removed |" in out
    assert "| prompt | fresh | none | stub | - | 100% | - | - | - | - | new |" in out
    assert "**Fingerprint changed** (not compared" in out
    assert f"### Flaky cases, baseline run {a.name}\n\nNo case's trials disagree." in out
    assert "- Conclusive regressions: `prompt/breaks/none/stub`." in out


def test_fail_on_regression_exits_1_only_when_a_regression_is_conclusive(two_runs: tuple[Path, Path]) -> None:
    a, b = two_runs
    failing = run_cli("compare", str(a), str(b), "--fail-on-regression", cwd=a.parent.parent)
    assert failing.returncode == 1, failing.stderr
    assert "skillgym: 1 conclusive regression(s): prompt/breaks/none/stub" in failing.stderr
    # A run against itself is all unchanged: nothing regressed, so the flag leaves the exit code at 0.
    same = run_cli("compare", str(b), str(b), "--fail-on-regression", cwd=a.parent.parent)
    assert same.returncode == 0, same.stderr
    assert "Rows: 5 unchanged." in same.stdout


def test_compare_and_compare_baseline_are_one_comparison(two_runs: tuple[Path, Path]) -> None:
    a, b = two_runs
    proc = run_cli("compare", str(a), str(b / "report.json"), "--format", "json", cwd=a.parent.parent)
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    stored = json.loads((b / "report.json").read_text())["baseline"]
    assert printed["comparison"] == stored
    assert printed["regressions"] == ["prompt/breaks/none/stub"]
    # report.md's baseline section is the same text compare prints (the header and sources aside).
    section = (b / "report.md").read_text().split("## Baseline comparison\n\n", 1)[1].split("\n## ", 1)[0]
    md = run_cli("compare", str(a), str(b), cwd=a.parent.parent).stdout
    assert section.replace(f"(`{a}`)", "").strip() in md.replace(f"(`{a}`)", "")


def test_a_run_folder_without_report_json_is_read_from_its_events(two_runs: tuple[Path, Path]) -> None:
    a, b = two_runs
    events_only = a.parent.parent / "events-only"
    events_only.mkdir()
    shutil.copy(b / "events.jsonl", events_only / "events.jsonl")
    from_events = run_cli("compare", str(a), str(events_only), "--format", "json", cwd=a.parent.parent)
    assert from_events.returncode == 0, from_events.stderr
    assert (
        json.loads(from_events.stdout)["comparison"]["rows"]
        == json.loads((b / "report.json").read_text())["baseline"]["rows"]
    )
    assert sorted(p.name for p in events_only.iterdir()) == ["events.jsonl"]  # nothing written there


def test_html_is_written_whole_to_the_output_file(two_runs: tuple[Path, Path]) -> None:
    a, b = two_runs
    target = a.parent.parent / "compare.html"
    proc = run_cli("compare", str(a), str(b), "--format", "html", "-o", str(target), cwd=a.parent.parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and f"wrote {target}" in proc.stderr
    page = target.read_text()
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert "<script" not in page and "http" not in page
    assert page.count("<tr data-change=") == 6 and 'data-change="fingerprint-changed"' in page


def test_bad_input_exits_2_saying_what_where_and_how_to_fix(
    two_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    a, _ = two_runs
    cases: dict[str, tuple[list[str], str]] = {
        "missing": (
            [str(a), "nowhere"],
            "the current run (B) nowhere does not exist; pass a run folder (runs/<run-id>) or its "
            "report.json",
        ),
        "folder of runs": (
            [str(a.parent), str(a)],
            f"the baseline run (A) {a.parent} is not a skillgym run: it has neither report.json nor "
            f"events.jsonl; it holds runs: pass one of them, e.g. {a}",
        ),
        "not json": (
            [str(a), str(a / "report.md")],
            f"the current run (B) {a / 'report.md'} is not valid JSON",
        ),
        "bad format": ([str(a), str(a), "--format", "pdf"], "argument --format: invalid choice: 'pdf'"),
    }
    for name, (argv, message) in cases.items():
        proc = run_cli("compare", *argv, cwd=tmp_path)
        assert proc.returncode == 2, name
        assert message in proc.stderr, (name, proc.stderr)
        assert proc.stdout == "", name
    # A run of another suite shares no case with A: nothing would pair.
    other = _suite(tmp_path / "other", ("elsewhere",), False, {"elsewhere": GOOD})
    ran = run_cli("run", "--suite", str(other), "--provider", "stub", "--output", "O", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    proc = run_cli("compare", str(a), str(_only_run(tmp_path / "O")), cwd=tmp_path)
    assert proc.returncode == 2
    assert "have no case in common, so nothing pairs; compare two runs of the same suite" in proc.stderr


# Passes every other trial it is given: a counter in the state folder the sandbox lets it write.
ALTERNATING = """\
#!/bin/sh
cat > /dev/null
state="$1"
n=$(ls "$state" | wc -l)
touch "$state/trial-$n"
if [ $((n % 2)) -eq 0 ]; then text="I would wait for it."; else text="Just sleep."; fi
echo "{\\"type\\": \\"result\\", \\"text\\": \\"$text\\"}"
"""


def test_flaky_cases_of_both_runs_are_listed_with_flip_rate_and_pass_hat_k(tmp_path: Path) -> None:
    root = _suite(tmp_path / "suite", ("wobbly", "solid"), False, {})
    (tmp_path / "state").mkdir()
    agent = tmp_path / "agent.sh"
    agent.write_text(ALTERNATING.replace('state="$1"', f'state="{tmp_path / "state"}"'), encoding="utf-8")
    agent.chmod(0o755)
    runs = []
    for output in ("A", "B"):
        proc = run_agent(
            root, str(agent), "--case", "wobbly", "--trials", "4", "--concurrency", "1", "--output", output
        )
        assert proc.returncode == 1, proc.stdout + proc.stderr
        runs.append(_only_run(tmp_path / output))
    proc = run_cli("compare", *map(str, runs), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # 2 of 4 pass: 4 of the 6 pairs of trials disagree; no 3 of them can all pass.
    row = "| prompt | wobbly | none | command | 2/4 | 67% | pass^3 0% |"
    assert proc.stdout.count(row) == 2
    assert f"### Flaky cases, baseline run {runs[0].name}" in proc.stdout
    assert f"### Flaky cases, current run {runs[1].name}" in proc.stdout
    assert "| prompt | wobbly | none | command | 50% | 50% | +0 pts |" in proc.stdout
