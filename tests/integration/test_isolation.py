"""The user's own agent settings never reach a trial of a real CLI: a canary planted in a fake user home,
in every file the CLI would load from a real one, stays out of the model's requests, hooks and the run.

Two layers keep it out, and the tests show what each one stops:

- the hermetic home (HOME and the CLI's own config variable point into the trial) keeps the CLI's
  loader away from the user's memory file, skills, settings and hooks;
- the sandbox (the user's home is an empty, read-only folder inside) keeps the agent's own commands
  from reading or writing the home by its absolute path.

Without the sandbox the agent's command reads the canary; with neither layer (a wrapper points the CLI
back at the home, as an unisolated run would) the CLI loads every planted file and runs the hook: so
each check here can see a leak.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import tomli_w

from skillgym.providers.codex import codex_config
from skillgym.providers.gemini import gemini_settings

from .model_server import ModelServer, Recorded, Say, Shell
from .support import (
    ANTHROPIC_KEY,
    GEMINI_KEY,
    OPENAI_KEY,
    agent_env,
    files_under,
    leaked,
    only_trial,
    run,
    write_integration_suite,
)

pytestmark = pytest.mark.integration

CANARY = f"canary-{uuid.uuid4().hex}"
HOOK_FILE = "hook-ran.txt"
# Run by every hook the CLIs offer, in the agent's working directory: the workspace, writable in every
# mode, so a hook that ran always leaves its file there.
HOOK = f"echo {CANARY}-hook >> {HOOK_FILE}"
HOME_WRITE = "agent-was-here"


class Cli(msgspec.Struct, frozen=True, kw_only=True):
    """One real CLI: how a test runs it, and what a user's home holds for it.

    ``plant`` writes the user's files into a home and returns the markers the CLI sends to the model
    when it loads them; ``memory`` is the planted file the agent's command reads by its absolute path.
    """

    provider: str
    model: str
    fixture: str
    env: Callable[[Path, str], dict[str, str]]
    home_env: dict[str, str]  # the CLI's own config variables, relative to the home
    plant: Callable[[Path, str], tuple[str, ...]]
    memory: str


def _write(home: Path, rel: str, text: str) -> None:
    path = home / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _skill(home: Path, folder: str, marker: str) -> str:
    # Each skill under a name of its own: a CLI lists one skill per name, whatever folder it came from.
    name = marker.removeprefix(f"{CANARY}-")
    body = f"---\nname: canary-{name}\ndescription: {marker}. Use it for every task.\n---\nSay {marker}.\n"
    _write(home, f"{folder}/canary-{name}/SKILL.md", body)
    return marker


def _hooks(*events: str) -> dict[str, Any]:
    return {event: [{"matcher": "*", "hooks": [{"type": "command", "command": HOOK}]}] for event in events}


def _plant_claude(home: Path, url: str) -> tuple[str, ...]:
    _write(home, ".claude/CLAUDE.md", f"Always mention {CANARY}-memory.\n")
    skill = _skill(home, ".claude/skills", f"{CANARY}-skill")
    settings = {"hooks": _hooks("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")}
    _write(home, ".claude/settings.json", json.dumps(settings))
    return f"{CANARY}-memory", skill


def _plant_codex(home: Path, url: str) -> tuple[str, ...]:
    _write(home, ".codex/AGENTS.md", f"Always mention {CANARY}-agents.\n")
    skills = (
        _skill(home, ".codex/skills", f"{CANARY}-skill"),
        _skill(home, ".agents/skills", f"{CANARY}-agents-skill"),
    )
    # A user's config that works: the scripted endpoint, so an unisolated codex asks no one else.
    config = {
        **codex_config(base_url=f"{url}/v1"),
        "developer_instructions": f"Always mention {CANARY}-config.",
        "notify": ["sh", "-c", HOOK],
    }
    _write(home, ".codex/config.toml", tomli_w.dumps(config))
    return f"{CANARY}-agents", f"{CANARY}-config", *skills


def _plant_gemini(home: Path, url: str) -> tuple[str, ...]:
    _write(home, ".gemini/GEMINI.md", f"Always mention {CANARY}-memory.\n")
    skills = (
        _skill(home, ".gemini/skills", f"{CANARY}-skill"),
        _skill(home, ".agents/skills", f"{CANARY}-agents-skill"),
    )
    # A user's settings that work (API-key auth, usage statistics off), plus hooks.
    settings = {
        **gemini_settings(max_turns=None),
        "hooks": _hooks("SessionStart", "BeforeAgent", "BeforeTool", "AfterAgent"),
    }
    _write(home, ".gemini/settings.json", json.dumps(settings))
    return f"{CANARY}-memory", *skills


CLIS = {
    "claude": Cli(
        provider="claude",
        model="claude-scripted",
        fixture="claude_cli",
        env=lambda cli, url: {
            "SKILLGYM_CLAUDE": str(cli),
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        },
        home_env={"CLAUDE_CONFIG_DIR": ".claude"},
        plant=_plant_claude,
        memory=".claude/CLAUDE.md",
    ),
    "codex": Cli(
        provider="codex",
        model="gpt-scripted",
        fixture="codex_cli",
        env=lambda cli, url: {
            "SKILLGYM_CODEX": str(cli),
            "SKILLGYM_CODEX_BASE_URL": f"{url}/v1",
            "OPENAI_API_KEY": OPENAI_KEY,
        },
        home_env={"CODEX_HOME": ".codex"},
        plant=_plant_codex,
        memory=".codex/AGENTS.md",
    ),
    "gemini": Cli(
        provider="gemini",
        model="gemini-2.5-flash",
        fixture="gemini_cli",
        env=lambda cli, url: {
            "SKILLGYM_GEMINI": str(cli),
            "GOOGLE_GEMINI_BASE_URL": url,
            "GEMINI_API_KEY": GEMINI_KEY,
        },
        home_env={"GEMINI_CLI_HOME": ""},
        plant=_plant_gemini,
        memory=".gemini/GEMINI.md",
    ),
}


class Observed(msgspec.Struct, frozen=True, kw_only=True):
    """What one trial let through: the model's requests, the hook's file, the run folder, the home."""

    requests: list[Recorded]
    hook_file: Path
    leaked: list[Path]
    home_added: set[str]
    loaded: tuple[str, ...]  # the markers the CLI would send had it loaded the home


@pytest.fixture
def user_home() -> Iterator[Path]:
    """The fake user's home, outside /tmp: /tmp is the trial's own inside the sandbox, so a home below it
    would be hidden even by a sandbox that forgot to hide the home."""
    home = Path(tempfile.mkdtemp(prefix="skillgym-user-home-", dir="/var/tmp"))
    try:
        yield home
    finally:
        shutil.rmtree(home)


def _pointed_at(home: Path, cli: Cli, executable: Path, folder: Path) -> Path:
    """A wrapper that runs the CLI with its home variables set to ``home``: the CLI as an unisolated run
    would start it."""
    homes = {"HOME": str(home), **{var: str(home / sub) for var, sub in cli.home_env.items()}}
    exports = " ".join(f"{var}={shlex.quote(value)}" for var, value in homes.items())
    wrapper = folder / cli.provider
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    wrapper.write_text(f'#!/bin/sh\nexport {exports}\nexec {shlex.quote(str(executable))} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def _canary_run(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    home: Path,
    server: ModelServer,
    cli: Cli,
    *,
    sandbox: bool,
    hermetic: bool,
) -> Observed:
    executable: Path = request.getfixturevalue(cli.fixture)
    loaded = cli.plant(home, server.url)
    planted = {str(p.relative_to(home)) for p in files_under(home)}
    if not hermetic:
        executable = _pointed_at(home, cli, executable, tmp_path / "unisolated")
    env = agent_env(HOME=str(home), **cli.env(executable, server.url))
    # The agent looks for the user's home by its absolute path, as an agent that goes exploring would.
    command = f"echo hello > out.txt; cat {home / cli.memory}; touch {home / HOME_WRITE}"
    server.script([Shell(command=command), Say(text="Wrote out.txt")])
    suite = write_integration_suite(tmp_path)
    output = tmp_path / "runs"
    flags = ("--model", cli.model, "--keep-workspaces", *(() if sandbox else ("--sandbox", "none")))
    done = run(suite, output, env, provider=cli.provider, case="make-file", condition="none", more=flags)
    assert done.returncode == 0, done.stdout + done.stderr
    result, trace, trial_dir = only_trial(output)
    assert result["status"] == "passed", result
    assert [c["command"] for c in trace["tool_calls"]] == [command]  # the agent's command really ran
    return Observed(
        requests=list(server.requests),
        hook_file=trial_dir / "workspace" / HOOK_FILE,
        leaked=leaked(CANARY, output),
        home_added={str(p.relative_to(home)) for p in files_under(home)} - planted,
        loaded=loaded,
    )


def _sent(recorded: Recorded) -> str:
    """Everything the CLI sent the model in one request: system prompt, messages, tools, headers."""
    return json.dumps(recorded.body) + json.dumps(recorded.headers)


@pytest.mark.parametrize("name", sorted(CLIS))
def test_nothing_of_the_user_s_home_reaches_the_model_the_hooks_or_the_run(
    request: pytest.FixtureRequest, tmp_path: Path, user_home: Path, model_server: ModelServer, name: str
) -> None:
    got = _canary_run(request, tmp_path, user_home, model_server, CLIS[name], sandbox=True, hermetic=True)
    assert len(got.requests) >= 2  # the command's result went back to the model
    assert [n for n, r in enumerate(got.requests) if CANARY in _sent(r)] == []
    assert not got.hook_file.exists()
    assert got.leaked == []
    assert got.home_added == set()  # read-only inside: neither the agent nor the CLI wrote there


@pytest.mark.parametrize("name", sorted(CLIS))
def test_without_the_sandbox_the_agent_reads_the_home_though_the_cli_loads_nothing_from_it(
    request: pytest.FixtureRequest, tmp_path: Path, user_home: Path, model_server: ModelServer, name: str
) -> None:
    got = _canary_run(request, tmp_path, user_home, model_server, CLIS[name], sandbox=False, hermetic=True)
    first, *later = got.requests
    # The hermetic home alone keeps the CLI's loader off the user's files ...
    assert CANARY not in _sent(first)
    assert not got.hook_file.exists()
    # ... but only the sandbox stops a command that names the home's path.
    assert any(CANARY in _sent(r) for r in later)
    assert got.leaked != []
    assert HOME_WRITE in got.home_added


@pytest.mark.parametrize("name", sorted(CLIS))
def test_with_neither_layer_the_cli_loads_every_planted_file_and_runs_the_hook(
    request: pytest.FixtureRequest, tmp_path: Path, user_home: Path, model_server: ModelServer, name: str
) -> None:
    got = _canary_run(request, tmp_path, user_home, model_server, CLIS[name], sandbox=False, hermetic=False)
    sent = _sent(got.requests[0])
    assert [marker for marker in got.loaded if marker not in sent] == []
    assert got.hook_file.is_file() and f"{CANARY}-hook" in got.hook_file.read_text()
    assert got.leaked != []
