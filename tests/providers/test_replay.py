"""Tests for skillgym.providers.replay: lookup, parsing, warnings and re-enactment in a real workspace."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pytest

from skillgym.errors import UsageError
from skillgym.model import Budget, Condition, ExecutionCase, Suite
from skillgym.providers.replay import ReplayProvider
from skillgym.trace import TokenUsage
from skillgym.workspaces import cleanup, hermetic_env, layout_for, materialize

from .support import record, request

pytestmark = pytest.mark.anyio

SNAPSHOT = "printf 'ECHO: hello world\\n' > snapshot.txt"

# Cleanup finds a trial's processes by its tag machine-wide: a run id no other test process shares.
RUN = f"run-{uuid.uuid4().hex[:12]}"


def event(**fields: object) -> str:
    return json.dumps(fields)


HELLO = [
    event(type="message", role="assistant", text="Creating the snapshot."),
    event(type="tool_call", name="Bash", command=SNAPSHOT, output="", exit_code=0),
    event(type="tool_call", name="Bash", command="cat snapshot.txt", output="recorded text", exit_code=0),
    event(type="usage", input=1200, output=80, cache_read=300),
    event(type="result", text="Saved snapshot.txt", session_id="s-9", num_turns=2),
]


async def test_detect_without_cassettes_explains_what_is_missing(suite_root: Path) -> None:
    detection = await ReplayProvider(suite_root).detect()
    assert not detection.available
    assert detection.problem is not None
    assert "no cassettes under" in detection.problem
    assert "cassettes/<provider>/<model>/" in detection.problem


async def test_detect_uses_the_only_recorded_pair(suite_root: Path) -> None:
    record(suite_root, HELLO)
    detection = await ReplayProvider(suite_root).detect()
    assert detection.available
    assert (detection.provider, detection.default_model) == ("replay", "sonnet")


async def test_skills_go_where_the_recorded_agent_found_them(suite_root: Path) -> None:
    record(suite_root, HELLO, provider="gemini", model="gemini-2.5-flash")
    replay = ReplayProvider(suite_root)
    assert (await replay.detect()).available
    assert replay.skill_dirs == (".gemini/skills",)  # the gemini provider's own, from the registry
    record(suite_root / "other", HELLO, provider="someone-else", model="m")
    unknown = ReplayProvider(suite_root / "other")
    assert (await unknown.detect()).available
    assert unknown.skill_dirs == (".claude/skills", ".agents/skills")  # no such provider: both usual places


async def test_several_pairs_need_a_source(suite_root: Path) -> None:
    record(suite_root, HELLO)
    record(suite_root, HELLO, provider="codex", model="gpt-5")
    detection = await ReplayProvider(suite_root).detect()
    assert not detection.available
    assert detection.problem is not None
    assert "claude/sonnet, codex/gpt-5" in detection.problem
    assert (await ReplayProvider(suite_root, "codex/gpt-5").detect()).default_model == "gpt-5"


async def test_model_chooses_among_the_recorded_pairs(suite_root: Path) -> None:
    record(suite_root, HELLO)
    record(suite_root, HELLO, provider="codex", model="gpt-5")
    assert (await ReplayProvider(suite_root, model="gpt-5").detect()).default_model == "gpt-5"
    assert (await ReplayProvider(suite_root, "claude/sonnet", "sonnet").detect()).default_model == "sonnet"
    missing = await ReplayProvider(suite_root, model="o3").detect()
    assert missing.problem is not None
    assert "no cassettes recorded with model 'o3'" in missing.problem
    assert "recorded pairs: claude/sonnet, codex/gpt-5" in missing.problem


async def test_a_model_that_is_not_the_sources_is_a_usage_error(suite_root: Path) -> None:
    # Replaying sonnet's cassettes while the run says o3 would label one model's results as another's.
    with pytest.raises(UsageError, match="--model o3 and --replay-source claude/sonnet disagree"):
        ReplayProvider(suite_root, "claude/sonnet", "o3")


async def test_a_source_with_no_cassettes_lists_the_recorded_pairs(suite_root: Path) -> None:
    record(suite_root, HELLO)
    detection = await ReplayProvider(suite_root, "codex/o3").detect()
    assert not detection.available
    assert detection.problem is not None
    assert "no cassettes recorded by codex/o3" in detection.problem
    assert "recorded pairs: claude/sonnet" in detection.problem


@pytest.mark.parametrize("source", ["claude", "claude/", "/sonnet", "a/b/c"])
def test_a_malformed_source_is_a_usage_error(suite_root: Path, source: str) -> None:
    with pytest.raises(UsageError, match="must be 'provider/model'"):
        ReplayProvider(suite_root, source)


async def test_prompt_lane_replays_text_and_usage_without_running_anything(
    suite_root: Path, tmp_path: Path
) -> None:
    path = record(suite_root, HELLO, lane="prompt")
    req = request(tmp_path, lane="prompt")
    result = await ReplayProvider(suite_root).invoke(req)
    assert result.ok, result.error_message
    assert result.trace.final_text == "Saved snapshot.txt"
    assert result.trace.usage == TokenUsage(input=1200, output=80, cache_read=300)
    assert result.trace.model == "sonnet", "the header's model stands in when the stream names none"
    assert result.trace.tool_calls[1].output == "recorded text"
    assert result.model == "sonnet"
    assert result.cassette == str(path)
    assert result.warnings == ()
    assert not (Path(req.workspace) / "snapshot.txt").exists()
    assert Path(req.stdout_path).read_text().splitlines() == HELLO


async def test_execution_lane_reenacts_the_recorded_commands(suite_root: Path, tmp_path: Path) -> None:
    record(suite_root, HELLO)
    req = request(tmp_path)
    result = await ReplayProvider(suite_root).invoke(req)
    assert result.ok, result.error_message
    assert (Path(req.workspace) / "snapshot.txt").read_text() == "ECHO: hello world\n"
    calls = result.trace.tool_calls
    assert [c.command for c in calls] == [SNAPSHOT, "cat snapshot.txt"]
    assert calls[1].output == "ECHO: hello world\n", "the trace carries the re-enacted output"
    assert [c.exit_code for c in calls] == [0, 0]
    log = Path(req.stderr_path).read_text()
    assert f"$ {SNAPSHOT}\n" in log
    assert "[exit 0]" in log


async def test_reenacted_calls_keep_their_place_among_the_messages(suite_root: Path, tmp_path: Path) -> None:
    write = json.dumps({"file_path": "notes.md", "content": "seen\n"})
    record(
        suite_root,
        [
            event(type="tool_call", name="Write", input=write),
            event(type="message", role="assistant", text="Wrote the notes; now the snapshot."),
            *HELLO,
        ],
    )
    result = await ReplayProvider(suite_root).invoke(request(tmp_path))
    assert result.ok, result.error_message
    calls = result.trace.tool_calls
    assert [(c.name, c.after_messages) for c in calls] == [("Write", 0), ("Bash", 2), ("Bash", 2)]
    assert calls[2].output == "ECHO: hello world\n", "re-enacted, in the same place"


async def test_reenacted_commands_see_the_trial_env(suite_root: Path, tmp_path: Path) -> None:
    record(suite_root, [event(type="tool_call", name="Bash", command="echo $SKILLGYM_TRIAL_ID > id.txt")])
    req = request(tmp_path)
    assert (await ReplayProvider(suite_root).invoke(req)).ok
    assert (Path(req.workspace) / "id.txt").read_text() == "t-1\n"


async def test_a_different_exit_code_on_replay_is_a_warning(suite_root: Path, tmp_path: Path) -> None:
    record(suite_root, [event(type="tool_call", name="Bash", command="exit 4", exit_code=0)])
    result = await ReplayProvider(suite_root).invoke(request(tmp_path))
    assert result.ok
    assert result.trace.tool_calls[0].exit_code == 4
    assert result.trace.tool_calls[0].is_error
    assert result.warnings == ("command 1 exited 4 on replay but 0 when recorded: exit 4",)


async def test_the_deadline_stops_reenactment(suite_root: Path, tmp_path: Path) -> None:
    record(
        suite_root,
        [
            event(type="tool_call", name="Bash", command="sleep 30"),
            event(type="tool_call", name="Bash", command="touch after.txt"),
        ],
    )
    req = request(tmp_path, timeout_s=0.5)
    result = await ReplayProvider(suite_root).invoke(req)
    assert not result.ok
    assert result.error_class == "timeout"
    assert result.error_message is not None
    assert "ran past the case's 0.5s budget at command 1" in result.error_message
    assert [c.command for c in result.trace.tool_calls] == ["sleep 30"]
    assert not (Path(req.workspace) / "after.txt").exists()


async def test_the_trial_cassette_wins_over_the_condition_cassette(suite_root: Path, tmp_path: Path) -> None:
    record(suite_root, [event(type="result", text="any trial")])
    trial_two = record(suite_root, [event(type="result", text="trial two")], trial=2)
    provider = ReplayProvider(suite_root)
    first = await provider.invoke(request(tmp_path, trial=1))
    second = await provider.invoke(request(tmp_path, trial=2))
    assert first.trace.final_text == "any trial"
    assert (second.trace.final_text, second.cassette) == ("trial two", str(trial_two))


async def test_a_missing_cassette_names_where_it_looked(suite_root: Path, tmp_path: Path) -> None:
    record(suite_root, HELLO, case="other-case")
    result = await ReplayProvider(suite_root).invoke(request(tmp_path, trial=3))
    assert not result.ok
    assert result.error_class == "provider-error"
    base = suite_root / "cassettes" / "claude" / "sonnet" / "execution" / "hello-prompt"
    assert result.error_message is not None
    assert f"looked for {base}/none/trial-3.jsonl and then {base}/none.jsonl" in result.error_message


async def test_a_stale_fingerprint_is_a_warning_not_a_failure(suite_root: Path, tmp_path: Path) -> None:
    path = record(suite_root, HELLO, fingerprint="old-fp")
    result = await ReplayProvider(suite_root).invoke(request(tmp_path, fingerprint="new-fp"))
    assert result.ok
    assert result.warnings == (
        f"cassette recorded for fingerprint old-fp, case is now new-fp: re-record with --record ({path})",
    )


async def test_a_malformed_stream_line_names_the_file_line(suite_root: Path, tmp_path: Path) -> None:
    path = record(suite_root, [HELLO[0], '{"type":"tool_call"}'])
    result = await ReplayProvider(suite_root).invoke(request(tmp_path))
    assert not result.ok
    assert result.error_class == "provider-error"
    assert result.error_message is not None
    assert result.error_message.startswith(f"{path}:3: expected one JSON object per line")
    assert "missing required field `name`" in result.error_message


async def test_an_unknown_format_says_which_are_known(suite_root: Path, tmp_path: Path) -> None:
    record(suite_root, HELLO, format="claude-stream-json-v9")
    result = await ReplayProvider(suite_root).invoke(request(tmp_path))
    assert not result.ok
    assert result.error_message is not None
    assert "format 'claude-stream-json-v9' has no parser" in result.error_message
    assert "known: claude-stream-json, codex-json, gemini-stream-json, skillgym-trace" in result.error_message


async def test_a_recorded_failure_replays_as_that_failure(suite_root: Path, tmp_path: Path) -> None:
    record(suite_root, HELLO, error_class="provider-error", error_message="claude exited 1: overloaded")
    result = await ReplayProvider(suite_root).invoke(request(tmp_path))
    assert not result.ok
    assert result.error_class == "provider-error"
    assert result.error_message is not None
    assert result.error_message.endswith("claude exited 1: overloaded")
    assert not (Path(request(tmp_path).workspace) / "snapshot.txt").exists()


async def test_replay_in_a_materialized_hermetic_trial(suite_root: Path, tmp_path: Path) -> None:
    """Workspace, env, replay and cleanup together, as the runner strings them."""
    record(suite_root, HELLO, condition="self-load")
    layout = layout_for(tmp_path / "run" / "trial")
    case = ExecutionCase(id="hello-prompt", category="session", task="t", budget=Budget(timeout_s=30))
    condition = Condition(id="self-load")
    env = hermetic_env(
        layout,
        trial_id=f"{RUN}/hello",
        suite_root=suite_root,
        passthrough={},
        preset_env={},
        lane="execution",
        condition_env={},
        case_env={},
        parent={"PATH": os.environ.get("PATH", os.defpath)},
    )
    provider = ReplayProvider(suite_root)
    await materialize(
        layout,
        suite=Suite(root=str(suite_root)),
        case=case,
        condition=condition,
        preset=None,
        env=env,
        skill_dirs=provider.skill_dirs,
    )
    req = request(
        tmp_path,
        condition="self-load",
        workspace=layout.workspace,
        trial_dir=layout.trial_dir,
        env=env,
        stdout_path=layout.stdout,
        stderr_path=layout.stderr,
    )
    result = await provider.invoke(req)
    assert result.ok, result.error_message
    assert (Path(layout.workspace) / "snapshot.txt").read_text() == "ECHO: hello world\n"
    await cleanup(layout, trial_id=f"{RUN}/hello", keep_workspace=False)
    assert not Path(layout.workspace).exists()
    assert Path(layout.stdout).read_text().splitlines() == HELLO


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
async def test_reenacted_tmux_sessions_live_on_the_trial_socket_until_cleanup(
    suite_root: Path, tmp_path: Path
) -> None:
    commands = [
        "tmux new-session -d -s demo cat",
        "tmux has-session -t demo && echo live > live.txt",
    ]
    record(suite_root, [event(type="tool_call", name="Bash", command=c, exit_code=0) for c in commands])
    layout = layout_for(tmp_path / "trial")
    env = hermetic_env(
        layout,
        trial_id=f"{RUN}/tmux",
        suite_root=suite_root,
        passthrough={},
        preset_env={},
        lane="execution",
        condition_env={},
        case_env={},
        parent={"PATH": os.environ.get("PATH", os.defpath), "TERM": "xterm"},
    )
    await materialize(
        layout,
        suite=Suite(root=str(suite_root)),
        case=ExecutionCase(id="hello-prompt", category="s", task="t", budget=Budget(timeout_s=30)),
        condition=Condition(id="none"),
        preset=None,
        env=env,
        skill_dirs=(),
    )
    req = request(tmp_path, workspace=layout.workspace, env=env)
    try:
        result = await ReplayProvider(suite_root).invoke(req)
        assert result.ok, result.error_message
        assert result.warnings == ()
        assert (Path(layout.workspace) / "live.txt").read_text() == "live\n"
    finally:
        report = await cleanup(layout, trial_id=f"{RUN}/tmux", keep_workspace=False)
    assert len(report.tmux_sockets) == 1
    assert report.tmux_sockets[0].startswith(layout.tmux_tmpdir)


RECORDED_WS = (
    "/home/someone/project/runs/20260101-000000-abc/trials/"
    "execution/hello-prompt/none/claude/trial-1/workspace"
)


def test_relocate_points_recorded_workspace_paths_at_this_trial() -> None:
    from skillgym.providers.replay import relocate

    assert relocate(f"cat {RECORDED_WS}/out.txt", "/new/ws") == "cat /new/ws/out.txt"
    assert relocate(f"cd '{RECORDED_WS}' && ls", "/new/ws") == "cd '/new/ws' && ls"
    assert relocate("cat /etc/trials/x.txt", "/new/ws") == "cat /etc/trials/x.txt"
    assert relocate(f"{RECORDED_WS}-old/x", "/new/ws") == f"{RECORDED_WS}-old/x"


async def test_editing_tools_and_absolute_paths_are_replayed_in_the_new_workspace(
    suite_root: Path, tmp_path: Path
) -> None:
    write = {"file_path": f"{RECORDED_WS}/notes/report.md", "content": "# Report\nstatus: draft\n"}
    edit = {"file_path": f"{RECORDED_WS}/notes/report.md", "old_string": "draft", "new_string": "final"}
    outside = {"file_path": "/etc/skillgym-should-not-exist.txt", "content": "x"}
    record(
        suite_root,
        [
            event(type="tool_call", name="Write", input=json.dumps(write), output="ok"),
            event(type="tool_call", name="Edit", input=json.dumps(edit), output="ok"),
            event(
                type="tool_call",
                name="Bash",
                command=f"cp {RECORDED_WS}/notes/report.md copy.md",
                exit_code=0,
            ),
            event(type="tool_call", name="Write", input=json.dumps(outside), output="ok"),
        ],
    )
    req = request(tmp_path)
    result = await ReplayProvider(suite_root).invoke(req)
    assert result.ok, result.error_message
    workspace = Path(req.workspace)
    assert (workspace / "notes/report.md").read_text() == "# Report\nstatus: final\n"
    assert (workspace / "copy.md").read_text() == "# Report\nstatus: final\n"
    assert not Path("/etc/skillgym-should-not-exist.txt").exists()
    assert any("outside the workspace" in w for w in result.warnings)
