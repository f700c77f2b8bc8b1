"""Tests for skillgym.workspaces.materialize against real files and real processes."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import anyio
import pytest

from skillgym.model import Command
from skillgym.workspaces import (
    EnvironmentSetupError,
    Materialized,
    TrialLayout,
    layout_for,
    materialize,
    remove_tree,
)

from .support import install, make_case, make_condition, make_preset, make_suite, trial_env

pytestmark = pytest.mark.anyio
NATIVE = (".claude/skills", ".agents/skills")


async def build(
    layout: TrialLayout, suite_root: Path, *, preset: object = "default", **kwargs: object
) -> Materialized:
    chosen = make_preset() if preset == "default" else preset
    return await materialize(
        layout,
        suite=make_suite(suite_root),
        case=kwargs.pop("case", make_case()),  # type: ignore[arg-type]
        condition=kwargs.pop("condition", make_condition()),  # type: ignore[arg-type]
        preset=chosen,  # type: ignore[arg-type]
        env=trial_env(layout, suite_root),
        skill_dirs=kwargs.pop("skill_dirs", NATIVE),  # type: ignore[arg-type]
        home_env=kwargs.pop("home_env", {}),  # type: ignore[arg-type]
        first=kwargs.pop("first", None),  # type: ignore[arg-type]
        secrets=kwargs.pop("secrets", ()),  # type: ignore[arg-type]
    )


async def test_creates_the_dirs_and_copies_the_template(layout: TrialLayout, suite_root: Path) -> None:
    ready = await build(layout, suite_root, home_env={"AGENT_HOME": ".agent", "AGENT_STATE": "state/agent"})
    workspace = Path(layout.workspace)
    assert (workspace / "NOTES.md").read_text() == "notes from the template\n"
    assert (workspace / "app" / "main.txt").read_text() == "app\n"
    # The generic home dirs, and the provider's own: no agent CLI is named by the workspace code.
    for sub in (".config", ".local/share", ".cache", ".local/state", ".agent", "state/agent"):
        assert (Path(layout.home) / sub).is_dir()
    assert not (Path(layout.home) / ".claude").exists()
    assert Path(layout.fixture_log_dir).is_dir()
    assert stat.S_IMODE(Path(layout.tmux_tmpdir).stat().st_mode) == 0o700
    assert ready.cwd == layout.workspace
    assert ready.bootstrap_log is None
    assert ready.commands_run == 0


async def test_the_callers_first_step_runs_before_the_dirs_and_its_error_is_not_wrapped(
    layout: TrialLayout, suite_root: Path
) -> None:
    seen: list[bool] = []
    await build(layout, suite_root, first=lambda: seen.append(Path(layout.workspace).exists()))
    assert seen == [False]

    def gone() -> None:
        raise FileNotFoundError("the run directory was removed")

    # Not an EnvironmentSetupError: a vanished run directory stops the run, not just this trial.
    with pytest.raises(FileNotFoundError, match="removed"):
        await build(layout, suite_root, first=gone)


async def test_many_setups_at_once_take_turns_in_the_order_they_asked(
    tmp_path: Path, suite_root: Path
) -> None:
    # Fifty setups given a thread each all finish late; taking turns, the first is ready at once.
    cores = max(2, os.cpu_count() or 1)
    lock = threading.Lock()
    inside: list[int] = []
    entered: list[int] = []
    most = 0

    def first(number: int) -> None:
        nonlocal most
        with lock:
            inside.append(number)
            entered.append(number)
            most = max(most, len(inside))
        time.sleep(0.02)
        with lock:
            inside.remove(number)

    layouts = [layout_for(tmp_path / "run" / f"trial-{n}") for n in range(3 * cores)]
    try:
        async with anyio.create_task_group() as tg:
            for number, each in enumerate(layouts):
                tg.start_soon(lambda n=number, at=each: build(at, suite_root, first=lambda: first(n)))
                await anyio.sleep(0)  # each asks in turn
    finally:
        for each in layouts:
            remove_tree(Path(each.tmux_tmpdir))
    assert most == cores
    # Turns are handed out in order; two that get theirs together may start in either order.
    assert all(abs(place - number) < cores for place, number in enumerate(entered))


async def test_a_retried_trial_starts_from_a_clean_workspace(layout: TrialLayout, suite_root: Path) -> None:
    await build(layout, suite_root)
    (Path(layout.workspace) / "left-by-first-attempt.txt").write_text("x")
    (Path(layout.home) / ".config" / "settings.json").write_text("{}")
    await build(layout, suite_root)
    assert not (Path(layout.workspace) / "left-by-first-attempt.txt").exists()
    assert not (Path(layout.home) / ".config" / "settings.json").exists()


async def test_no_preset_gives_an_empty_workspace(layout: TrialLayout, suite_root: Path) -> None:
    ready = await build(layout, suite_root, preset=None)
    assert list(Path(layout.workspace).iterdir()) == []
    assert ready.cwd == layout.workspace


@pytest.mark.parametrize("template", ["../outside", "templates/../../outside", "/etc"])
async def test_a_template_outside_the_suite_is_refused(
    layout: TrialLayout, suite_root: Path, template: str
) -> None:
    (suite_root.parent / "outside").mkdir()
    with pytest.raises(EnvironmentSetupError, match="tui-smoke") as caught:
        await build(layout, suite_root, preset=make_preset(template=template))
    assert "escapes" in str(caught.value) or "relative" in str(caught.value)


async def test_a_template_symlinked_outside_the_suite_is_refused(
    layout: TrialLayout, suite_root: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "user-home"
    secret.mkdir()
    (secret / "credentials.json").write_text("{}")
    (suite_root / "templates" / "evil").symlink_to(secret)
    with pytest.raises(EnvironmentSetupError, match=r"escapes .* through a symlink"):
        await build(layout, suite_root, preset=make_preset(template="templates/evil"))


async def test_a_symlink_inside_the_template_leading_out_is_refused(
    layout: TrialLayout, suite_root: Path, tmp_path: Path
) -> None:
    (tmp_path / "dot-claude").mkdir()
    (suite_root / "templates" / "tui" / ".claude").symlink_to(tmp_path / "dot-claude")
    with pytest.raises(EnvironmentSetupError, match=r"symlink .*\.claude pointing to"):
        await build(layout, suite_root)
    assert not (Path(layout.workspace) / ".claude").exists()


async def test_a_missing_template_names_the_preset(layout: TrialLayout, suite_root: Path) -> None:
    with pytest.raises(EnvironmentSetupError, match=r"preset 'tui-smoke' template .* is not a directory"):
        await build(layout, suite_root, preset=make_preset(template="templates/nope"))


async def test_skills_are_installed_at_every_native_dir(layout: TrialLayout, suite_root: Path) -> None:
    condition = make_condition(install=(install("tmux-tui", "skills/tmux-tui"),))
    ready = await build(layout, suite_root, condition=condition)
    workspace = Path(layout.workspace)
    for skill_dir in NATIVE:
        folder = workspace / skill_dir / "tmux-tui"
        assert (folder / "SKILL.md").read_text().endswith("Use tmux.\n")
        assert (folder / "scripts" / "wait.sh").is_file()
    assert ready.installed == tuple(str(workspace / d / "tmux-tui") for d in NATIVE)


async def test_a_single_file_skill_source_becomes_skill_md(layout: TrialLayout, suite_root: Path) -> None:
    condition = make_condition(install=(install("tmux-tui", "conditions/tmux-tui.stub.md"),))
    await build(layout, suite_root, condition=condition, skill_dirs=(".claude/skills",))
    installed = Path(layout.workspace) / ".claude" / "skills" / "tmux-tui" / "SKILL.md"
    assert installed.read_text() == "Bootstrap: load tmux-tui.\n"


async def test_the_none_condition_installs_nothing(layout: TrialLayout, suite_root: Path) -> None:
    ready = await build(layout, suite_root, condition=make_condition(id="none"))
    assert ready.installed == ()
    assert not (Path(layout.workspace) / ".claude").exists()


async def test_a_missing_skill_source_is_an_environment_error(layout: TrialLayout, suite_root: Path) -> None:
    condition = make_condition(install=(install("ghost", "skills/ghost"),))
    with pytest.raises(
        EnvironmentSetupError, match=r"condition 'self-load' skill 'ghost' source .* does not exist"
    ):
        await build(layout, suite_root, condition=condition)


async def test_an_unsafe_skill_name_is_refused(layout: TrialLayout, suite_root: Path) -> None:
    condition = make_condition(install=(install("../../escape", "skills/tmux-tui"),))
    with pytest.raises(EnvironmentSetupError, match="cannot be used as a file name"):
        await build(layout, suite_root, condition=condition)


async def test_injected_text_joins_files_then_inline_text(layout: TrialLayout, suite_root: Path) -> None:
    condition = make_condition(
        inject=("conditions/tmux-tui.stub.md", "skills/tmux-tui/SKILL.md"), inject_text="Be brief.\n"
    )
    ready = await build(layout, suite_root, condition=condition)
    assert ready.injected == "Bootstrap: load tmux-tui.\n\n---\nname: tmux-tui\n---\nUse tmux.\n\nBe brief."


async def test_a_missing_inject_file_is_named(layout: TrialLayout, suite_root: Path) -> None:
    condition = make_condition(inject=("conditions/missing.md",))
    with pytest.raises(EnvironmentSetupError, match=r"inject file .*conditions/missing\.md does not exist"):
        await build(layout, suite_root, condition=condition)


async def test_a_non_utf8_inject_file_is_named(layout: TrialLayout, suite_root: Path) -> None:
    (suite_root / "conditions" / "latin1.md").write_bytes(b"caf\xe9\n")
    condition = make_condition(inject=("conditions/latin1.md",))
    with pytest.raises(EnvironmentSetupError, match=r"latin1\.md is not UTF-8 text \(bad byte at offset 3\)"):
        await build(layout, suite_root, condition=condition)


def sh(script: str, **fields: object) -> Command:
    return Command(argv=("sh", "-c", script), **fields)  # type: ignore[arg-type]


async def test_bootstrap_then_setup_run_in_order_with_the_trial_env(
    layout: TrialLayout, suite_root: Path
) -> None:
    preset = make_preset(
        bootstrap=(sh("echo bootstrap >> order.txt; echo to-stdout; echo to-stderr >&2"),),
    )
    case = make_case(
        setup=(
            sh(
                'echo setup >> order.txt; echo "$HOME|$SKILLGYM_TRIAL_ID|$EXTRA" > seen.txt',
                env={
                    "HOME": "/not-hermetic",
                    "EXTRA": "from-command",
                },
            ),
        )
    )
    ready = await build(layout, suite_root, preset=preset, case=case)
    workspace = Path(layout.workspace)
    assert (workspace / "order.txt").read_text() == "bootstrap\nsetup\n"
    assert (workspace / "seen.txt").read_text() == f"{layout.home}|run-1/trial-1|from-command\n"
    assert ready.commands_run == 2
    log = Path(layout.trial_dir, "bootstrap.log").read_text()
    assert ready.bootstrap_log == str(Path(layout.trial_dir, "bootstrap.log"))
    assert "$ sh -c 'echo bootstrap" in log
    assert "to-stdout" in log
    assert "to-stderr" in log
    assert log.count("[exit 0 after") == 2


async def test_the_bootstrap_log_never_holds_a_secret_the_commands_print(
    layout: TrialLayout, suite_root: Path
) -> None:
    preset = make_preset(
        bootstrap=(sh("echo key=$SETUP_KEY; echo $SETUP_KEY >&2", env={"SETUP_KEY": "sk-boot-1"}),)
    )
    await build(layout, suite_root, preset=preset, secrets=("sk-boot-1",))
    log = Path(layout.trial_dir, "bootstrap.log").read_text()
    assert "key=<redacted>" in log and "sk-boot-1" not in log


async def test_commands_run_in_the_preset_cwd_or_their_own(layout: TrialLayout, suite_root: Path) -> None:
    preset = make_preset(cwd="app", bootstrap=(sh("pwd > where.txt"), sh("pwd > where.txt", cwd=".")))
    ready = await build(layout, suite_root, preset=preset)
    workspace = Path(layout.workspace).resolve()
    assert (workspace / "app" / "where.txt").read_text().strip() == str(workspace / "app")
    assert (workspace / "where.txt").read_text().strip() == str(workspace)
    assert ready.cwd == str(workspace / "app")


async def test_a_cwd_outside_the_workspace_is_refused(layout: TrialLayout, suite_root: Path) -> None:
    preset = make_preset(bootstrap=(sh("true", cwd="../.."),))
    with pytest.raises(EnvironmentSetupError, match="escapes"):
        await build(layout, suite_root, preset=preset)


async def test_a_failing_command_names_itself_its_exit_code_and_the_log(
    layout: TrialLayout, suite_root: Path
) -> None:
    preset = make_preset(bootstrap=(sh("true"), sh("echo boom >&2; exit 3", id="install-deps")))
    with pytest.raises(EnvironmentSetupError) as caught:
        await build(layout, suite_root, preset=preset, case=make_case(setup=(sh("touch never.txt"),)))
    error = caught.value
    log = str(Path(layout.trial_dir, "bootstrap.log"))
    assert "workspace preset 'tui-smoke' bootstrap command install-deps" in str(error)
    assert "exited with 3" in str(error)
    assert log in str(error)
    assert (error.returncode, error.timed_out, error.log_path) == (3, False, log)
    assert error.command == ("sh", "-c", "echo boom >&2; exit 3")
    assert "boom" in Path(log).read_text()
    assert not (Path(layout.workspace) / "never.txt").exists()


async def test_a_command_past_its_timeout_is_killed_and_reported(
    layout: TrialLayout, suite_root: Path
) -> None:
    case = make_case(setup=(Command(argv=("sleep", "30"), timeout_s=0.3),))
    with pytest.raises(
        EnvironmentSetupError,
        match=r"case 'hello-prompt' setup command 1 `sleep 30` did not "
        r"finish within its 0\.3s timeout",
    ) as caught:
        await build(layout, suite_root, case=case)
    assert caught.value.timed_out
    assert "[timed out after" in Path(layout.trial_dir, "bootstrap.log").read_text()


async def test_a_missing_program_is_an_environment_error(layout: TrialLayout, suite_root: Path) -> None:
    preset = make_preset(bootstrap=(Command(argv=("skillgym-no-such-program",)),))
    with pytest.raises(EnvironmentSetupError, match="`skillgym-no-such-program` could not start"):
        await build(layout, suite_root, preset=preset)
