"""What a judge reads: the budget, the note when something was cut, named files, and blindness."""

from __future__ import annotations

from pathlib import Path

from skillgym.judge.grading import task_text
from skillgym.judge.material import (
    ANSWER_BUDGET,
    COMMANDS_BUDGET,
    FILE_BUDGET,
    OUTPUT_BUDGET,
    about_skill,
    cut,
    trial_material,
)
from skillgym.model import Budget, ExecutionCase, PromptCase
from skillgym.trace import ToolCall, Trace


def test_text_within_the_budget_is_left_alone() -> None:
    cuts: list[str] = []
    assert cut("short", 10, what="x", cuts=cuts) == "short" and cuts == []


def test_a_cut_keeps_head_and_tail_and_says_how_much_it_left_out() -> None:
    cuts: list[str] = []
    text = "H" * 700 + "M" * 2000 + "T" * 300
    shown = cut(text, 900, what="the final answer", cuts=cuts)
    assert shown.startswith("H" * 600) and shown.endswith("T" * 300)
    assert "[... 2100 characters of the final answer cut by skillgym's judge budget ...]" in shown
    assert cuts == ["the final answer: 2100 of 3000 characters cut"]


def test_the_answer_commands_and_outputs_each_have_their_budget() -> None:
    calls = tuple(
        ToolCall(name="Bash", command=f"step {n}", output="o" * (OUTPUT_BUDGET + 50), exit_code=0)
        for n in range(12)
    )
    trace = Trace(final_text="a" * (ANSWER_BUDGET + 10), tool_calls=calls)
    material = trial_material(trace, workspace=None)
    assert "## Final answer" in material.text and "## Commands run" in material.text
    assert "the final answer: 10 of" in material.cuts[0]
    assert any(c.startswith("the output of command 1:") for c in material.cuts)
    assert any(c.startswith("the commands:") for c in material.cuts)
    commands = material.text.split("## Commands run (in order, with exit code and output)\n\n", 1)[1]
    assert len(commands) <= COMMANDS_BUDGET + 200  # the note itself is extra
    assert "$ step 0\n[exit 0]" in commands


def test_named_files_are_read_from_the_workspace_and_their_absence_shown(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("Hottest month: July\n")
    (tmp_path / "big.txt").write_text("x" * (FILE_BUDGET + 100))
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2" * 10)
    material = trial_material(
        Trace(final_text="done"),
        workspace=str(tmp_path),
        files=("report.md", "missing.md", "big.txt", "blob.bin"),
    )
    assert "### report.md\nHottest month: July" in material.text
    assert "### missing.md\n(this file does not exist)" in material.text
    assert "(a binary file of 30 bytes)" in material.text
    assert any(c.startswith("file big.txt: 100 of") for c in material.cuts)


def test_a_file_outside_the_workspace_is_never_read(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("hidden")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "link.txt").symlink_to(tmp_path / "secret.txt")
    material = trial_material(Trace(), workspace=str(workspace), files=("link.txt",))
    assert "hidden" not in material.text and "(not shown: the path leaves the workspace)" in material.text


def test_the_skill_text_is_shown_only_for_an_expectation_about_the_skill() -> None:
    assert about_skill("the agent used the skill's script", ["tmux-tui"])
    assert about_skill("it follows SKILL.md", [])
    assert about_skill("it calls tmux-tui's helper", ["tmux-tui"])
    assert not about_skill("report.md names the hottest month", ["tmux-tui"])
    with_skill = trial_material(Trace(final_text="x"), workspace=None, skill_text="Wait on output.")
    assert "## The skill's text\n\nWait on output." in with_skill.text
    assert "skill" not in trial_material(Trace(final_text="x"), workspace=None).text.lower()


def test_the_task_is_the_case_s_own_never_what_a_condition_adds() -> None:
    prompt = PromptCase(
        id="p", category="c", prompt="Wait for the server", context="npm run dev", budget=Budget(timeout_s=1)
    )
    assert task_text(prompt) == "Wait for the server\n\nnpm run dev"
    execution = ExecutionCase(id="e", category="c", task="Write out.txt", budget=Budget(timeout_s=1))
    assert task_text(execution) == "Write out.txt"


def test_the_trial_s_folder_is_hidden_wherever_it_shows(tmp_path: Path) -> None:
    trial = tmp_path / "trials" / "execution" / "report" / "preloaded" / "claude" / "trial-1"
    workspace = trial / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "out.txt").write_text(f"written in {workspace}\n")
    call = ToolCall(name="Bash", command=f"cd {workspace} && pwd", output=str(workspace), exit_code=0)
    trace = Trace(final_text=f"Done in {workspace}.", tool_calls=(call,))
    material = trial_material(trace, workspace=str(workspace), files=("out.txt",), trial_dir=str(trial))
    assert "preloaded" not in material.text
    assert "Done in <trial-dir>/workspace." in material.text
    assert "$ cd <trial-dir>/workspace && pwd" in material.text
    assert "written in <trial-dir>/workspace" in material.text
