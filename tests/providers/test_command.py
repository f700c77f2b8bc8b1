"""Tests for skillgym.providers.command: recording goes through the runtime every agent CLI shares."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from skillgym.providers import CommandProvider, ReplayProvider
from skillgym.providers.cassette import DEFAULT_MODEL, read_cassette
from skillgym.redact import REDACTED

from .support import request

pytestmark = pytest.mark.anyio

SECRET = "sk-live-command-0123456789"

AGENT = """
import json, os, sys
sys.stdin.read()
print(json.dumps({"type": "message", "role": "assistant", "text": "key " + os.environ["AGENT_API_KEY"]}))
print(json.dumps({"type": "result", "text": "done", "model": "m-1"}))
sys.exit(int(os.environ.get("AGENT_EXIT", "0")))
"""


def _agent(tmp_path: Path) -> CommandProvider:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    return CommandProvider([sys.executable, str(script)])


def _cassette(suite_root: Path) -> Path:
    return suite_root / "cassettes/command/default/execution/hello-prompt/none/trial-1.jsonl"


async def test_a_recorded_run_keeps_no_secret_and_replays_to_the_same_trace(
    tmp_path: Path, suite_root: Path
) -> None:
    cassette = _cassette(suite_root)
    env = {"PATH": "/usr/bin:/bin", "AGENT_API_KEY": SECRET}
    live = await _agent(tmp_path).invoke(request(tmp_path, env=env, record_path=str(cassette)))
    assert live.ok, live.error_message
    assert live.cassette == str(cassette)
    meta = read_cassette(cassette)
    assert (meta.provider, meta.model, meta.format, meta.error_class) == (
        "command",
        DEFAULT_MODEL,
        "skillgym-trace",
        None,
    )
    body = cassette.read_text()
    assert SECRET not in body and REDACTED in body  # a credential the agent echoed never reaches a cassette
    replayed = await ReplayProvider(suite_root).invoke(request(tmp_path / "again"))
    assert replayed.ok, replayed.error_message
    assert replayed.trace.final_text == "done"
    assert [m.text for m in replayed.trace.messages] == [f"key {REDACTED}"]


async def test_a_failed_run_is_recorded_with_its_own_failure(tmp_path: Path, suite_root: Path) -> None:
    cassette = _cassette(suite_root)
    env = {"PATH": "/usr/bin:/bin", "AGENT_API_KEY": "k", "AGENT_EXIT": "3"}
    live = await _agent(tmp_path).invoke(request(tmp_path, env=env, record_path=str(cassette)))
    assert live.error_class == "provider-error"
    assert live.error_message is not None and "exit code 3" in live.error_message
    meta = read_cassette(cassette)
    assert (meta.error_class, meta.error_message) == ("provider-error", live.error_message)
    lines = cassette.read_text().splitlines()
    assert json.loads(lines[-1]) == {"type": "result", "text": "done", "model": "m-1"}
