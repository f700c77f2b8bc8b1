"""Tests for skillgym.workspaces.env: the layered, hermetic trial environment."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import skillgym.workspaces.env as env_module
from skillgym.providers import ClaudeProvider, CodexProvider
from skillgym.workspaces import ENV_ORDER, ENV_ORDER_TEXT, HARNESS_KEYS, TrialLayout, hermetic_env
from skillgym.workspaces.env import with_command_env

# The home variables the two CLI providers declare; the workspace code knows none of them itself.
AGENT_HOMES = {**ClaudeProvider.home_env, **CodexProvider.home_env}

PARENT = {
    "PATH": "/usr/bin:/bin",
    "LANG": "en_US.UTF-8",
    "TERM": "xterm",
    "USER": "someone",
    "HOME": "/home/someone",
    "FOO_API_KEY": "sk-parent-secret",
    "CLAUDE_CONFIG_DIR": "/home/someone/.claude",
    "TMUX": "/tmp/tmux-1000/default,1,0",
    "PYTHONPATH": "/somewhere",
}


def build(
    layout: TrialLayout,
    *,
    passthrough: Mapping[str, str] = {},
    preset: Mapping[str, str] = {},
    condition: Mapping[str, str] = {},
    case: Mapping[str, str] = {},
    parent: Mapping[str, str] = PARENT,
    suite_root: Path = Path("/suite"),
) -> dict[str, str]:
    return hermetic_env(
        layout,
        trial_id="run-1/execution/c/none/stub/trial-1",
        suite_root=suite_root,
        passthrough=passthrough,
        preset_env=preset,
        lane="execution",
        condition_env=condition,
        case_env=case,
        home_env=AGENT_HOMES,
        parent=parent,
    )


def test_only_the_minimal_base_comes_from_the_parent(layout: TrialLayout) -> None:
    env = build(layout)
    assert env["PATH"] == "/usr/bin:/bin"
    assert env["LANG"] == "en_US.UTF-8"
    assert env["TERM"] == "xterm"
    assert env["USER"] == "someone"
    for leaked in ("FOO_API_KEY", "TMUX", "PYTHONPATH"):
        assert leaked not in env
    assert "sk-parent-secret" not in env.values()


def test_passthrough_is_how_a_credential_reaches_the_trial(layout: TrialLayout) -> None:
    env = build(layout, passthrough={"FOO_API_KEY": "sk-passed"})
    assert env["FOO_API_KEY"] == "sk-passed"


LAYERS = ("passthrough", "preset", "condition", "case")


@pytest.mark.parametrize("top", range(len(LAYERS)))
def test_each_layer_overrides_the_ones_before(layout: TrialLayout, top: int) -> None:
    given: dict[str, Any] = {name: {"LAYERED": name, "LANG": f"C.{name}"} for name in LAYERS[: top + 1]}
    env = build(layout, **given)
    assert env["LAYERED"] == LAYERS[top]
    assert env["LANG"] == f"C.{LAYERS[top]}"


def test_the_lane_sits_between_the_preset_and_the_condition(layout: TrialLayout) -> None:
    assert build(layout, preset={"SKILLGYM_LANE": "preset"})["SKILLGYM_LANE"] == "execution"
    assert build(layout, condition={"SKILLGYM_LANE": "cond"})["SKILLGYM_LANE"] == "cond"


def test_harness_variables_always_win(layout: TrialLayout) -> None:
    hostile = dict.fromkeys((*HARNESS_KEYS, *AGENT_HOMES), "/hostile")
    env = build(layout, passthrough=hostile, preset=hostile, condition=hostile, case=hostile)
    home = layout.home
    assert env["HOME"] == home
    assert env["XDG_CONFIG_HOME"] == f"{home}/.config"
    assert env["XDG_DATA_HOME"] == f"{home}/.local/share"
    assert env["XDG_CACHE_HOME"] == f"{home}/.cache"
    assert env["XDG_STATE_HOME"] == f"{home}/.local/state"
    assert env["CLAUDE_CONFIG_DIR"] == f"{home}/.claude"
    assert env["CODEX_HOME"] == f"{home}/.codex"
    assert env["TMUX_TMPDIR"] == layout.tmux_tmpdir
    assert env["SKILLGYM_WORKSPACE"] == layout.workspace
    assert env["SKILLGYM_OUTPUT_DIR"] == layout.workspace
    assert env["SKILLGYM_FIXTURES"] == "/suite/fixtures"
    assert env["SKILLGYM_FIXTURE_LOG_DIR"] == layout.fixture_log_dir
    assert env["SKILLGYM_TRIAL_ID"] == "run-1/execution/c/none/stub/trial-1"
    assert "/hostile" not in env.values()


def test_fixtures_dir_is_absolute_for_a_relative_suite_root(
    layout: TrialLayout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert build(layout, suite_root=Path("evals"))["SKILLGYM_FIXTURES"] == f"{tmp_path}/evals/fixtures"


def test_a_parent_without_path_still_gets_a_usable_path(layout: TrialLayout) -> None:
    assert build(layout, parent={})["PATH"]


def test_the_documented_order_is_stated_once_and_quotable() -> None:
    assert len(ENV_ORDER) == 6
    lines = ENV_ORDER_TEXT.splitlines()
    assert [line.split(".")[0] for line in lines] == ["1", "2", "3", "4", "5", "6"]
    assert "always win" in lines[-1]
    doc = env_module.__doc__ or ""
    for key in (*HARNESS_KEYS, "SKILLGYM_LANE", "LOGNAME"):
        assert key in doc


def test_a_command_env_cannot_override_harness_variables(layout: TrialLayout) -> None:
    env = build(layout)
    merged = with_command_env(
        env, {"HOME": "/elsewhere", "CODEX_HOME": "/elsewhere", "EXTRA": "1"}, home_env=AGENT_HOMES
    )
    assert merged["HOME"] == layout.home
    assert merged["CODEX_HOME"] == f"{layout.home}/.codex"
    assert merged["EXTRA"] == "1"
