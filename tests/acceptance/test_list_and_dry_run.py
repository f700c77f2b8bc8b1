"""Acceptance: `skillgym list` and `skillgym run --dry-run` on suites written into tmp_path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import run_cli

SUITE = {
    "suite.py": """
        from skillgym import skill, workspace_preset

        skill("demo", "skills/demo", stale="stale.md")
        workspace_preset("basic", env={"MODE": "test", "DEMO_API_KEY": "sk-very-secret-value"},
                         bootstrap=[["python3", "-c", "print('hi')"]])
    """,
    "skills/demo/SKILL.md": "---\nname: demo\ndescription: demo skill\n---\nUse demo.\n",
    "stale.md": "Old advice.\n",
    "fixtures/app.py": "print('READY> ')\n",
    "prompt/route.py": """
        from skillgym import prompt_case

        with prompt_case("route-demo") as c:
            c.category("trigger")
            c.prompt("Use the demo thing")
            c.expect_skill("demo")
            with c.step("mentions") as s:
                s.must_mention("demo")
    """,
    "execution/run.py": """
        from skillgym import execution_case

        with execution_case("make-file") as c:
            c.category("session")
            c.fixture("app")
            c.workspace("basic")
            c.conditions("none", "self-load")
            c.task("Create out.txt containing hello")
            with c.assertions() as a:
                a.file_contains("out.txt", "hello")
    """,
}


def test_list_prints_lane_id_category_conditions_and_short_fingerprint(
    suite_dir: Callable[[dict[str, str]], Path],
) -> None:
    root = suite_dir(SUITE)
    proc = run_cli("list", "--suite", str(root), cwd=root.parent)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["LANE", "ID", "CATEGORY", "CONDITIONS", "FINGERPRINT"]
    prompt_row, exec_row = lines[1].split(), lines[2].split()
    assert prompt_row[:4] == ["prompt", "route-demo", "trigger", "none,self-load,preloaded,stale"]
    assert exec_row[:4] == ["execution", "make-file", "session", "none,self-load"]
    assert len(prompt_row[4]) == 12 and all(ch in "0123456789abcdef" for ch in prompt_row[4])
    assert lines[-1] == "2 case(s)"


def test_list_json_and_lane_filter(suite_dir: Callable[[dict[str, str]], Path]) -> None:
    root = suite_dir(SUITE)
    proc = run_cli("list", "--suite", str(root), "--lane", "execution", "--json", cwd=root.parent)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["id"] for r in rows] == ["make-file"]
    assert len(rows[0]["fingerprint"]) == 64
    assert rows[0]["origin"].endswith("execution/run.py:3")


def test_dry_run_expands_the_plan_redacts_secrets_and_writes_nothing(
    suite_dir: Callable[[dict[str, str]], Path],
) -> None:
    root = suite_dir(SUITE)
    before = sorted(p.relative_to(root.parent) for p in root.parent.rglob("*"))
    proc = run_cli("run", "--suite", str(root), "--dry-run", "--trials", "2", cwd=root.parent)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "prompt/route-demo/none/replay/trial-1" in out
    assert "prompt/route-demo/stale/replay/trial-2" in out
    assert "execution/make-file/self-load/replay/trial-2" in out
    assert "execution/make-file/stale" not in out  # the case only runs under none and self-load
    assert "DEMO_API_KEY=<redacted>" in out
    assert "sk-very-secret-value" not in out
    assert "MODE=test" in out
    assert "bootstrap python3 -c print('hi')" in out
    assert out.rstrip().endswith("total invocations: 12")  # (4 + 2 conditions) x 2 trials
    after = sorted(p.relative_to(root.parent) for p in root.parent.rglob("*") if "__pycache__" not in p.parts)
    assert after == [p for p in before if "__pycache__" not in p.parts]


def test_dry_run_json_has_stable_keys_and_filters(suite_dir: Callable[[dict[str, str]], Path]) -> None:
    root = suite_dir(SUITE)
    proc = run_cli(
        "run",
        "--suite",
        str(root),
        "--dry-run",
        "--json",
        "--lane",
        "prompt",
        "--condition",
        "none",
        "--provider",
        "stub",
        "--provider",
        "replay",
        cwd=root.parent,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["dry_run"] is True
    assert doc["invocations"] == 2
    assert [i["id"]["key"] for i in doc["items"]] == [
        "prompt/route-demo/none/stub/trial-1",
        "prompt/route-demo/none/replay/trial-1",
    ]
    assert {"lane", "case_id", "condition", "provider", "trial", "fingerprint"} <= set(doc["items"][0]["id"])


def test_run_json_without_dry_run_is_refused_before_anything_runs(
    suite_dir: Callable[[dict[str, str]], Path],
) -> None:
    root = suite_dir(SUITE)
    proc = run_cli("run", "--suite", str(root), "--json", "--provider", "stub", cwd=root.parent)
    assert proc.returncode == 2
    assert proc.stderr.startswith("skillgym: error: run --json prints the plan as JSON and needs --dry-run;")
    assert proc.stdout == ""
    assert not (root.parent / "runs").exists()


def test_unknown_lane_condition_case_or_provider_exit_2_listing_valid_ones(
    suite_dir: Callable[[dict[str, str]], Path],
) -> None:
    root = suite_dir(SUITE)
    for flag, value, expected in (
        ("--lane", "promt", "valid lanes: prompt, execution, dogfood"),
        ("--condition", "stail", "valid conditions: none, self-load, preloaded, stale"),
        ("--case", "nope", "valid case ids: make-file, route-demo"),
        ("--provider", "gpt", "valid providers: claude, codex, command"),
    ):
        proc = run_cli("run", "--suite", str(root), "--dry-run", flag, value, cwd=root.parent)
        assert proc.returncode == 2, (flag, proc.stdout, proc.stderr)
        assert expected in proc.stderr, proc.stderr
        assert repr(value) in proc.stderr


def test_collection_errors_are_all_listed_with_file_and_line_and_exit_2(
    suite_dir: Callable[[dict[str, str]], Path],
) -> None:
    root = suite_dir(
        {
            **SUITE,
            "prompt/broken.py": "from skillgym import prompt_case\n\nx = 1\nraise RuntimeError('boom')\n",
            "prompt/syntax.py": "def (:\n",
            "prompt/unknown_preset.py": """
                from skillgym import execution_case

                with execution_case("needs-preset") as c:
                    c.category("session")
                    c.workspace("missing-preset")
                    c.task("t")
                    with c.assertions() as a:
                        a.file_exists("x")
            """,
        }
    )
    proc = run_cli("list", "--suite", str(root), cwd=root.parent)
    assert proc.returncode == 2
    err = proc.stderr
    assert "prompt/broken.py:4: RuntimeError: boom" in err
    assert "prompt/syntax.py:1: SyntaxError" in err
    assert "unknown workspace preset 'missing-preset'" in err
    assert "prompt/unknown_preset.py:3" in err


def test_missing_suite_directory_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_cli("list", "--suite", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "suite directory" in proc.stderr and "--suite" in proc.stderr


def test_example_suite_lists_and_dry_runs() -> None:
    from tests.conftest import REPO

    proc = run_cli("list", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert {"prompt", "execution", "dogfood"} <= {line.split()[0] for line in proc.stdout.splitlines()[1:-1]}
    proc = run_cli("run", "--dry-run", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "total invocations:" in proc.stdout
