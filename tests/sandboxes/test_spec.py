"""What a trial's sandbox hides and keeps, and the bubblewrap options that follow (no bwrap needed)."""

from __future__ import annotations

import os
from pathlib import Path

from skillgym.sandboxes.bwrap import bwrap_args
from skillgym.sandboxes.spec import install_root, install_root_of_entry, trial_spec, user_private_folders
from skillgym.workspaces.layout import layout_for


def test_a_program_needs_its_npm_package_root_its_prefix_or_its_folder(tmp_path: Path) -> None:
    cli = tmp_path / "tools/node_modules/@acme/agent/bin/agent.js"
    cli.parent.mkdir(parents=True)
    cli.write_text("")
    link = tmp_path / "tools/node_modules/.bin/agent"
    link.parent.mkdir(parents=True)
    link.symlink_to(cli)
    assert install_root(str(link)) == str(tmp_path / "tools")
    prefixed = tmp_path / "opt/bin/tool"
    prefixed.parent.mkdir(parents=True)
    prefixed.write_text("")
    assert install_root(str(prefixed)) == str(tmp_path / "opt")
    script = tmp_path / "agents/run.sh"
    script.parent.mkdir()
    script.write_text("")
    assert install_root(str(script)) == str(tmp_path / "agents")
    assert install_root_of_entry("/home/u/.pyenv/shims") == "/home/u/.pyenv"
    assert install_root_of_entry("/home/u/tools") == "/home/u/tools"


def test_the_home_is_hidden_and_only_what_lies_under_a_hidden_folder_or_tmp_is_kept(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".cargo/bin").mkdir(parents=True)
    layout = layout_for(tmp_path / "runs/r/trials/t")
    spec = trial_spec(
        layout,
        env={"PATH": f"{home}/.cargo/bin:/usr/bin"},
        suite_root=str(tmp_path / "evals"),
        network="none",
        readable=[str(home / "agent")],
        writable=["/var/cache/shared"],
        hidden=[str(home)],
    )
    assert spec.hidden == (str(home),)
    assert f"{home}/.cargo" in spec.readable and f"{home}/agent" in spec.readable
    assert str(tmp_path / "evals") in spec.readable  # under the host's /tmp, which the trial's own replaces
    assert "/usr" not in spec.readable and "/usr/bin" not in spec.readable  # visible anyway
    assert spec.writable[0] == "/var/cache/shared"
    assert spec.tmp == layout.tmp and spec.trial_dir == layout.trial_dir


def test_a_short_tmux_socket_dir_outside_the_trial_is_writable(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 90) / "trial"
    layout = layout_for(deep)
    assert not layout.tmux_tmpdir.startswith(layout.trial_dir)
    spec = trial_spec(layout, env={}, suite_root="/srv/suite", network="host", hidden=[])
    assert spec.writable == (layout.tmux_tmpdir,)


def test_the_users_home_is_among_the_private_folders(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path))
    user_private_folders.cache_clear()
    try:
        assert os.path.realpath(tmp_path) in user_private_folders()
    finally:
        user_private_folders.cache_clear()


def test_bwrap_mounts_in_an_order_that_keeps_what_is_hidden_hidden(tmp_path: Path) -> None:
    tests_dir = tmp_path / "tests"
    home = tests_dir / "home"
    (home / ".pyenv").mkdir(parents=True)
    trial = tests_dir / "runs/t"
    trial.mkdir(parents=True)
    spec = trial_spec(
        layout_for(trial),
        env={"PATH": f"{home}/.pyenv/shims"},
        suite_root=str(tests_dir),  # holds the home: mounted first, so the home still covers it
        network="none",
        hidden=[str(home)],
    )
    args = bwrap_args(spec)

    def at(*option: str) -> int:
        for index in range(len(args) - len(option) + 1):
            if tuple(args[index : index + len(option)]) == option:
                return index
        raise AssertionError(f"{option} not in {args}")

    assert "--unshare-net" in args and "--unshare-pid" in args and "--die-with-parent" in args
    assert at("--ro-bind", "/", "/") < at("--bind", str(trial / "tmp"), "/tmp")
    assert at("--bind", str(trial / "tmp"), "/tmp") < at("--ro-bind", str(tests_dir), str(tests_dir))
    assert at("--ro-bind", str(tests_dir), str(tests_dir)) < at("--tmpfs", str(home))
    assert at("--tmpfs", str(home)) < at("--ro-bind", f"{home}/.pyenv", f"{home}/.pyenv")
    assert at("--bind", str(trial), str(trial)) > at("--ro-bind", f"{home}/.pyenv", f"{home}/.pyenv")
    assert at("--remount-ro", str(home)) == len(args) - 2
    host = bwrap_args(trial_spec(layout_for(trial), env={}, suite_root="/x", network="host", hidden=[]))
    assert "--unshare-net" not in host


def test_a_program_or_path_entry_right_in_the_home_keeps_only_itself_readable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    script = home / "agent.sh"
    script.write_text("")
    spec = trial_spec(
        layout_for(tmp_path / "runs/t"),
        env={"PATH": f"{home}/bin"},  # ~/bin: its prefix would be the home itself
        suite_root="/srv/suite",
        network="none",
        programs=[str(script)],
        hidden=[str(home)],
    )
    assert str(home) not in spec.readable
    assert f"{home}/bin" in spec.readable and str(script) in spec.readable
    opened = bwrap_args(spec)
    assert opened[opened.index("--tmpfs") + 1] == str(home)
    assert ["--ro-bind", str(home), str(home)] not in [opened[i : i + 3] for i in range(len(opened))]
