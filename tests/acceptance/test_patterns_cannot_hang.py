"""Acceptance: a pattern that backtracks for ever in Python's re grades in linear time; what RE2 cannot
run is refused when the suite loads, naming the file, the case, the step and the construct."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import run_agent, run_cli, run_dirs, write_suite

# Python's re needs about 2^40 steps for this pattern against 40 a's and a b: hours, with the
# interpreter lock held, so neither Ctrl-C nor the wall-clock limit could stop it.
SUITE = {
    "suite.py": """
        from skillgym import condition, prompt_case

        condition("none")
        with prompt_case("exponential") as c:
            c.category("trigger")
            c.prompt("say a lot of a")
            c.expect_skill(None)
            c.budget(timeout_s=60, max_wall_clock_s=30)
            with c.step("answer") as s:
                s.must_mention(r"(a+)+$")
                s.must_not_mention(r"(a|aa)+c")
    """,
}

AGENT = """
import json, sys
sys.stdin.read()
print(json.dumps({"type": "result", "text": "a" * 40 + "b"}))
"""


def test_a_catastrophic_pattern_grades_at_once_and_the_run_reports(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "evals", SUITE)
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    # Without a linear-time matcher this run would not end: the timeout turns a hang into a failure.
    proc = run_agent(root, f"{sys.executable} {script}")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (run_dir,) = run_dirs(tmp_path / "runs")
    (result_path,) = run_dir.glob("trials/prompt/exponential/none/command/trial-1/result.json")
    result = json.loads(result_path.read_text())
    assert result["status"] == "failed"
    assert any("(a+)+$" in reason for reason in result["grade"]["reasons"])
    assert (run_dir / "report.md").is_file()


@pytest.mark.parametrize(
    ("regex", "construct"),
    [
        (r"tmux(?!-)", "a negative lookahead '(?!...)'"),
        (r"(?<=\s)sleep", "a lookbehind '(?<=...)'"),
        (r"(\w+) \1", "a backreference '\\1'"),
        (r"(?x) a  b", "verbose mode '(?x)'"),
        (r"a*+b", "a possessive repeat '*+'"),
    ],
)
def test_what_re2_cannot_run_is_refused_at_load_naming_case_step_and_construct(
    tmp_path: Path, regex: str, construct: str
) -> None:
    root = write_suite(
        tmp_path / "evals",
        {
            "suite.py": f"""
                from skillgym import condition, prompt_case

                condition("none")
                with prompt_case("lookaround") as c:
                    c.category("trigger")
                    c.prompt("anything")
                    c.expect_skill(None)
                    with c.step("answer") as s:
                        s.must_mention({regex!r})
            """,
        },
    )
    for command in (["list"], ["run", "--provider", "stub"]):
        proc = run_cli(*command, "--suite", str(root), cwd=tmp_path)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        message = proc.stderr
        assert "suite.py:9: case 'lookaround'" in message
        assert "in step 'answer'" in message
        assert construct in message and "RE2" in message
    assert not (tmp_path / "runs").exists()
