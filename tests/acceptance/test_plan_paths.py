"""Acceptance: every file a plan names is checked when the plan is built, all problems at once, exit 2."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_cli, run_dirs, write_suite

SUITE = {
    "suite.py": """
        from skillgym import workspace_preset

        workspace_preset("tpl", template="templates/tpl")
    """,
    "templates/tpl/README.md": "the workspace\n",
    "fixtures/app.py": "print('READY> ')\n",
    "cases.py": """
        from skillgym import execution_case, prompt_case

        with execution_case("edit") as c:
            c.category("session")
            c.task("write x")
            c.fixture("app")
            c.workspace("tpl")
            with c.assertions() as a:
                a.file_exists("x")

        with prompt_case("ask") as c:
            c.category("trigger")
            c.prompt("wait for the server")
            c.expect_skill(None)
            with c.step("waits") as s:
                s.must_mention("wait")
    """,
    "stubs/edit.md": "done\n",
    "stubs/ask.md": "I would wait.\n",
}


def _suite(tmp_path: Path, **extra: str) -> Path:
    return write_suite(tmp_path / "evals", {**SUITE, **extra})


def _run(root: Path, *args: str) -> tuple[int, list[str], str]:
    proc = run_cli("run", "--suite", str(root), "--provider", "stub", *args, cwd=root.parent)
    return proc.returncode, [line for line in proc.stderr.splitlines() if line.strip()], proc.stdout


def test_a_template_link_out_of_the_suite_is_refused_at_plan_time_naming_link_and_target(
    tmp_path: Path,
) -> None:
    root = _suite(tmp_path)
    outside = tmp_path / "host-secrets"
    outside.mkdir()
    (outside / "token").write_text("secret\n")
    link = root / "templates/tpl/settings"
    link.symlink_to(outside)
    for args in ((), ("--dry-run",)):
        code, lines, _ = _run(root, *args)
        assert code == 2, lines
        assert len(lines) == 1, lines
        assert f"the symlink {link} points to {outside}" in lines[0]
        assert "outside the suite" in lines[0] and "copy the file into the suite" in lines[0]
    assert not (root.parent / "runs").exists()


def test_a_fixture_linked_to_a_host_file_is_refused(tmp_path: Path) -> None:
    root = _suite(tmp_path)
    (root / "fixtures/app.py").unlink()
    (root / "fixtures/app.py").symlink_to("/etc/passwd")
    code, lines, _ = _run(root, "--case", "edit")
    assert code == 2, lines
    assert "fixtures/app.py points to /etc/passwd" in lines[0], lines
    assert not (root.parent / "runs").exists()


def test_links_inside_the_suite_are_followed(tmp_path: Path) -> None:
    root = _suite(tmp_path, **{"shared/notes.md": "shared notes\n"})
    (root / "templates/tpl/notes.md").symlink_to(
        os.path.relpath(root / "shared/notes.md", root / "templates/tpl")
    )
    code, lines, _ = _run(root, "--case", "edit")
    assert code == 1, lines  # ran: the stub answers text and writes no x, so the verifier fails
    (run_dir,) = run_dirs(root.parent / "runs")
    assert (
        run_dir / "trials/execution/edit/none/stub/trial-1/workspace/notes.md"
    ).read_text() == "shared notes\n"


def test_every_problem_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    root = _suite(tmp_path)
    (root / "templates/tpl/README.md").unlink()
    (root / "templates/tpl").rmdir()
    (root / "stubs/ask.md").unlink()
    (root / "fixtures/_helper.py").symlink_to("/etc/hostname")
    before = sorted(p for p in tmp_path.rglob("*"))
    code, lines, _ = _run(root)
    assert code == 2, lines
    assert lines[0] == "skillgym: error: the plan names 3 paths that cannot be used:", lines
    assert len(lines) == 4, lines
    assert "workspace preset 'tpl' template" in lines[1] and "does not exist" in lines[1]
    assert "fixtures/_helper.py points to /etc/hostname" in lines[2]
    assert "stub has nothing to play for prompt case 'ask'" in lines[3] and "stubs/ask.md" in lines[3]
    assert sorted(p for p in tmp_path.rglob("*") if "__pycache__" not in p.parts) == [
        p for p in before if "__pycache__" not in p.parts
    ]


def test_dry_run_says_which_trials_the_provider_has_nothing_to_play_for(tmp_path: Path) -> None:
    root = _suite(tmp_path)
    (root / "stubs/ask.md").unlink()
    code, lines, stdout = _run(root, "--dry-run")
    assert code == 0, lines
    assert "total invocations: 2" in stdout
    assert lines == [
        "skillgym: warning: a run would refuse this plan: stub has nothing to play for prompt case 'ask' "
        "under condition 'none': add evals/stubs/ask.md (or evals/stubs/ask/none.md for that condition only)"
    ]
    proc = run_cli("run", "--suite", str(root), "--provider", "stub", "--dry-run", "--json", cwd=root.parent)
    assert [p.split(":")[0] for p in json.loads(proc.stdout)["unplayable"]] == [
        "stub has nothing to play for prompt case 'ask' under condition 'none'"
    ]


def test_resume_checks_the_plan_paths_again(tmp_path: Path) -> None:
    root = _suite(tmp_path)
    code, lines, _ = _run(root, "--case", "edit")
    assert code == 1, lines
    (run_dir,) = run_dirs(root.parent / "runs")
    log = run_dir / "events.jsonl"
    kept = [line for line in log.read_text().splitlines(keepends=True) if '"run.finish"' not in line]
    log.write_text("".join(kept))  # as if the run had been killed before its end
    (root / "templates/tpl/README.md").unlink()
    (root / "templates/tpl").rmdir()
    before = log.read_bytes()
    proc = run_cli("run", "--resume", str(run_dir), cwd=root.parent)
    assert proc.returncode == 2, proc.stderr
    assert "workspace preset 'tpl' template" in proc.stderr and "does not exist" in proc.stderr
    assert log.read_bytes() == before
