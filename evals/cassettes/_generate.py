"""Generate the suite's synthetic cassettes from scripted agent behaviour, one per case and condition.

    python evals/cassettes/_generate.py                 # every case x condition
    python evals/cassettes/_generate.py --case hello-prompt --condition stale
    python evals/cassettes/_generate.py --list          # what would be written

Each behaviour script (``_behaviour/<lane>.py``) says what a plausible agent does under one condition: the
text it writes and the tools it calls. For the execution and dogfood lanes every Bash command really runs,
in a trial workspace built by skillgym's own ``materialize`` with the same hermetic environment a run
uses (private TMUX_TMPDIR, fixtures at $SKILLGYM_FIXTURES, the condition's skills installed), so the tool
results in the cassette are what the commands printed. The output is Claude Code ``stream-json``: an
``init`` line, assistant lines with text and ``tool_use`` blocks, user lines with ``tool_result`` blocks,
and a final ``result`` line with the token usage. Token counts follow a fixed model of a Claude Code
session (see ``Usage``), so regenerating gives the same usage and the token snapshots stay put.

This file lives in ``cassettes/`` and starts with ``_``: the suite loader never imports it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
SUITE = HERE.parent
REPO = SUITE.parent
sys.path[:0] = [str(HERE), str(REPO)]

from skillgym.loader import load_suite  # noqa: E402
from skillgym.model import Case, Suite  # noqa: E402
from skillgym.process import run_process  # noqa: E402
from skillgym.prompts import build_prompt  # noqa: E402
from skillgym.providers.cassette import CASSETTE_VERSION, CassetteMeta, write_cassette  # noqa: E402
from skillgym.workspaces import cleanup, hermetic_env, injected_text, layout_for, materialize  # noqa: E402

PROVIDER = "claude"
MODEL = "scripted"  # the folder name and the model the streams report: these are not real recordings
FORMAT = "claude-stream-json"
RECORDED_AT = "2026-11-29T00:00:00Z"  # fixed, so regenerating only changes what really changed
CLAUDE_VERSION = "2.1.27"
SKILL_DIRS = (".claude/skills", ".agents/skills")  # where self-load installs, as the replay provider does
TOOLS = ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "WebFetch", "TodoWrite", "Skill"]
# What tool results look like in the cassettes: machine paths replaced by stable stand-ins.
TRIAL_STAND_IN = "/tmp/skillgym-trial"
SUITE_STAND_IN = "/opt/skillgym/evals"


# The behaviour scripts


@dataclass
class Turn:
    """One API call of the agent: optional text, then the tools it asked for (none: the final answer)."""

    text: str = ""
    tools: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


class Agent:
    """What a behaviour script writes: ``say`` opens a turn, tool calls join the current turn."""

    def __init__(self, lane: str, case: str, condition: str) -> None:
        self.lane, self.case, self.condition = lane, case, condition
        self.turns: list[Turn] = []
        self.final = ""

    def say(self, text: str) -> Agent:
        self.turns.append(Turn(text=text.strip()))
        return self

    def _tool(self, name: str, payload: dict[str, Any]) -> Agent:
        # A tool call joins the turn whose text announced it; otherwise it is an API call of its own.
        if not self.turns or self.turns[-1].tools:
            self.turns.append(Turn())
        self.turns[-1].tools.append((name, payload))
        return self

    def bash(self, command: str, description: str = "") -> Agent:
        """A shell command; in the execution and dogfood lanes it really runs when the cassette is made."""
        return self._tool("Bash", {"command": command.strip("\n"), "description": description})

    def write(self, path: str, text: str, description: str = "") -> Agent:
        """A file written through the shell (a heredoc), so that replay re-enacts it."""
        body = text.strip("\n") + "\n"
        marker = "EOF"
        while marker in body:
            marker += "_"
        return self.bash(
            f"mkdir -p \"$(dirname '{path}')\" && cat > '{path}' <<'{marker}'\n{body}{marker}",
            description or f"Write {path}",
        )

    def skill(self, name: str) -> Agent:
        return self._tool("Skill", {"skill": name})

    def read(self, path: str) -> Agent:
        return self._tool("Read", {"file_path": path})

    def done(self, text: str) -> Agent:
        self.final = text.strip()
        return self


Behaviour = Callable[[Agent], None]


# Token usage


def tokens(text: str) -> int:
    """A rough token count: about 3.6 characters per token for English and shell."""
    return max(1, round(len(text) / 3.6))


@dataclass
class Usage:
    """A fixed model of how a Claude Code session spends tokens, so generated usage is realistic and stable.

    Every API call reads the cached prefix (system prompt, tools, the conversation so far), writes what
    is new since the last call to the cache, sends a few uncached tokens and produces its output (text,
    tool calls and some thinking).
    """

    system: int = 13_900  # Claude Code's system prompt and tool definitions
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    context: int = 0
    calls: int = 0

    def call(self, new_context: int, produced: int) -> dict[str, int]:
        first = self.calls == 0
        written = new_context + (self.system if first else 0)
        read = 0 if first else self.context
        uncached = 3 + (new_context % 7)
        out = produced + 24 + (produced * 7) // 50  # a little thinking around every answer
        self.calls += 1
        self.context += written
        self.input += uncached
        self.cache_write += written
        self.cache_read += read
        self.output += out
        return {
            "input_tokens": uncached,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "output_tokens": out,
        }

    def total(self) -> dict[str, int]:
        return {
            "input_tokens": self.input,
            "cache_creation_input_tokens": self.cache_write,
            "cache_read_input_tokens": self.cache_read,
            "output_tokens": self.output,
        }

    def cost(self) -> float:
        # Sonnet list prices in USD per million tokens: input 3, output 15, cache write 3.75, cache read 0.30.
        usd = (self.input * 3 + self.output * 15 + self.cache_write * 3.75 + self.cache_read * 0.30) / 1e6
        return round(usd, 6)


# Running the tools


@dataclass
class Trial:
    """Where the scripted commands run: a workspace built as a real trial's would be."""

    workspace: Path
    env: dict[str, str]
    trial_dir: Path


@dataclass
class ToolResult:
    text: str
    is_error: bool = False
    extra: str = ""  # text the harness shows the agent after the result (a loaded skill's body)


def stand_ins(text: str, trial: Trial | None) -> str:
    if trial is not None:
        text = text.replace(str(trial.trial_dir), TRIAL_STAND_IN)
        text = text.replace(trial.env.get("TMUX_TMPDIR", "\0"), f"{TRIAL_STAND_IN}/tmux")
    return text.replace(str(SUITE), SUITE_STAND_IN)


async def run_tool(name: str, payload: dict[str, Any], trial: Trial | None, condition: str) -> ToolResult:
    if name == "Bash":
        if trial is None:
            return ToolResult("", is_error=True)  # the prompt lane answers in text; never reached
        done = await run_process(
            ["bash", "-c", payload["command"]],
            cwd=trial.workspace,
            env=trial.env,
            timeout_s=120,
            max_capture_bytes=64 * 1024,
        )
        output = (done.stdout + done.stderr).decode("utf-8", errors="replace").rstrip("\n")
        output = stand_ins(output, trial)
        if len(output) > 6000:
            output = output[:6000] + "\n... (output truncated)"
        if done.exit_code != 0:
            return ToolResult(f"Exit code {done.exit_code}\n{output}".rstrip(), is_error=True)
        return ToolResult(output)
    if name == "Skill":
        skill = payload["skill"]
        installed = condition in ("self-load", "preloaded")
        if not installed:
            return ToolResult(f"<tool_use_error>Unknown skill: {skill}</tool_use_error>", is_error=True)
        body = (SUITE / "skills" / skill / "SKILL.md").read_text(encoding="utf-8")
        base = f"{TRIAL_STAND_IN}/workspace/.claude/skills/{skill}"
        extra = f"Base directory for this skill: {base}\n\n{body}"
        return ToolResult(f"Launching skill: {skill}", extra=extra)
    if name == "Read":
        path = payload["file_path"]
        source = _readable(path, trial, condition)
        if source is None:
            return ToolResult("<tool_use_error>File does not exist.</tool_use_error>", is_error=True)
        lines = source.read_text(encoding="utf-8").splitlines()
        return ToolResult("\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines, 1)))
    raise ValueError(f"unknown tool {name!r}")


def _readable(path: str, trial: Trial | None, condition: str) -> Path | None:
    if trial is not None:
        target = trial.workspace / path
        return target if target.is_file() else None
    match = re.match(r"\.(?:claude|agents)/skills/([\w-]+)/(.+)$", path)
    if match and condition in ("self-load", "preloaded"):
        target = SUITE / "skills" / match.group(1) / match.group(2)
        return target if target.is_file() else None
    return None


# The stream


def _ids(seed: str) -> Iterator[str]:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    n = 0
    while True:
        digest = hashlib.sha256(f"{seed}/{n}".encode()).digest()
        yield "".join(alphabet[b % len(alphabet)] for b in digest[:24])
        n += 1


def installed_skills(condition: str) -> list[str]:
    return ["tmux-tui", "tui-qa"] if condition in ("self-load", "preloaded") else []


async def stream(agent: Agent, prompt: str, trial: Trial | None) -> list[dict[str, Any]]:
    """The Claude Code stream-json lines of one scripted session."""
    seed = f"{agent.lane}/{agent.case}/{agent.condition}"
    session = str(uuid.uuid5(uuid.NAMESPACE_URL, f"skillgym-cassette:{seed}"))
    ids = _ids(seed)
    cwd = f"{TRIAL_STAND_IN}/workspace"
    lines: list[dict[str, Any]] = [
        {
            "type": "system",
            "subtype": "init",
            "cwd": cwd,
            "session_id": session,
            "tools": TOOLS,
            "mcp_servers": [],
            "model": MODEL,
            "permissionMode": "bypassPermissions",
            "slash_commands": ["compact", "context", "cost", "init", "review"],
            "skills": installed_skills(agent.condition),
            "apiKeySource": "ANTHROPIC_API_KEY",
            "claude_code_version": CLAUDE_VERSION,
            "output_style": "default",
            "uuid": next(ids),
        }
    ]
    usage = Usage()
    pending = tokens(prompt)  # new context for the next call: the prompt, then each round of results
    duration_ms = 0
    turns = [t for t in agent.turns if t.text or t.tools] + [Turn(text=agent.final)]
    for turn in turns:
        tools = turn.tools
        produced = tokens(turn.text) + sum(tokens(json.dumps(p)) + 12 for _n, p in tools)
        per_call = usage.call(pending, produced)
        message_id = f"msg_01{next(ids)}"
        blocks: list[dict[str, Any]] = []
        if turn.text:
            blocks.append({"type": "text", "text": turn.text})
        uses = [(f"toolu_01{next(ids)}", n, p) for n, p in tools]
        blocks += [{"type": "tool_use", "id": i, "name": n, "input": p} for i, n, p in uses]
        for block in blocks:  # Claude Code prints each content block of a message on its own line
            lines.append(
                {
                    "type": "assistant",
                    "message": {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": MODEL,
                        "content": [block],
                        "stop_reason": None,
                        "stop_sequence": None,
                        # As Claude Code prints it: taken when the message started (output 1).
                        "usage": {**per_call, "output_tokens": 1, "service_tier": "standard"},
                    },
                    "parent_tool_use_id": None,
                    "session_id": session,
                    "uuid": next(ids),
                }
            )
        duration_ms += 2400 + 18 * per_call["output_tokens"]
        pending = per_call["output_tokens"]  # what the agent wrote is context for its next call
        for tool_id, name, payload in uses:
            started = time.monotonic()
            result = await run_tool(name, payload, trial, agent.condition)
            duration_ms += _tool_ms(name, payload, time.monotonic() - started)
            pending += tokens(result.text) + 10
            content: list[dict[str, Any]] = [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_id,
                    "content": result.text,
                    "is_error": result.is_error,
                }
            ]
            lines.append(
                {
                    "type": "user",
                    "message": {"role": "user", "content": content},
                    "parent_tool_use_id": None,
                    "session_id": session,
                    "uuid": next(ids),
                }
            )
            if result.extra:
                pending += tokens(result.extra)
                lines.append(
                    {
                        "type": "user",
                        "message": {"role": "user", "content": [{"type": "text", "text": result.extra}]},
                        "parent_tool_use_id": None,
                        "session_id": session,
                        "isMeta": True,
                        "uuid": next(ids),
                    }
                )
    lines.append(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": duration_ms,
            "duration_api_ms": duration_ms - 400 * len(turns),
            "num_turns": len(turns),
            "result": agent.final,
            "session_id": session,
            "total_cost_usd": usage.cost(),
            "usage": {
                **usage.total(),
                "server_tool_use": {"web_search_requests": 0},
                "service_tier": "standard",
            },
            "permission_denials": [],
            "uuid": next(ids),
        }
    )
    return lines


def _tool_ms(name: str, payload: dict[str, Any], measured_s: float) -> int:
    """A stable stand-in for how long a tool took: fixed sleeps count in full, polls a little."""
    if name != "Bash":
        return 40
    command = payload["command"]
    sleeps = sum(float(s) for s in re.findall(r"\bsleep\s+(\d+(?:\.\d+)?)\b(?!.*\bdo\b)", command))
    return int(150 + 1000 * min(sleeps, 30) + (300 if "wait-for" in command else 0))


# Putting it together


def behaviours() -> dict[tuple[str, str, str], Behaviour]:
    from _behaviour import BEHAVIOURS

    return BEHAVIOURS


async def one(suite: Suite, case: Case, condition: str, behaviour: Behaviour, out: Path) -> str:
    cond = next(c for c in suite.conditions if c.id == condition)
    agent = Agent(case.lane, case.id, condition)
    behaviour(agent)
    if not agent.final:
        raise ValueError(f"behaviour for {case.lane}/{case.id}/{condition} never calls done()")
    prompt = build_prompt(case, injected=injected_text(SUITE, cond))
    trial: Trial | None = None
    layout = None
    trial_id = f"cassette-gen/{case.lane}/{case.id}/{condition}/{uuid.uuid4().hex[:8]}"
    scratch = Path(tempfile.mkdtemp(prefix="sg-cassette-"))
    try:
        if case.lane != "prompt":
            layout = layout_for(scratch / "trial")
            preset = next((p for p in suite.presets if p.id == case.workspace), None)
            env = hermetic_env(
                layout,
                trial_id=trial_id,
                suite_root=SUITE,
                passthrough={},
                preset_env=preset.env if preset else {},
                lane=case.lane,
                condition_env=cond.env,
                case_env=case.env,
            )
            ready = await materialize(
                layout, suite=suite, case=case, condition=cond, preset=preset, env=env, skill_dirs=SKILL_DIRS
            )
            trial = Trial(workspace=Path(ready.cwd), env=env, trial_dir=Path(layout.trial_dir))
        lines = await stream(agent, prompt, trial)
    finally:
        if layout is not None:
            await cleanup(layout, trial_id=trial_id, keep_workspace=False)
        shutil.rmtree(scratch, ignore_errors=True)
    meta = CassetteMeta(
        cassette=CASSETTE_VERSION,
        provider=PROVIDER,
        model=MODEL,
        format=FORMAT,
        lane=case.lane,
        case=case.id,
        condition=condition,
        trial=None,
        fingerprint=case.fingerprint,
        recorded_at=RECORDED_AT,
    )
    path = out / PROVIDER / MODEL / case.lane / case.id / f"{condition}.jsonl"
    encoded = [json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() for line in lines]
    write_cassette(path, meta, encoded)
    return str(path.relative_to(out.parent))


async def main_async(args: argparse.Namespace) -> int:
    suite = load_suite(SUITE)
    table = behaviours()
    jobs: list[tuple[Case, str, Behaviour]] = []
    missing: list[str] = []
    for case in suite.cases:
        if args.case and case.id not in args.case:
            continue
        for condition in case.conditions:
            if args.condition and condition not in args.condition:
                continue
            behaviour = table.get((case.lane, case.id, condition))
            if behaviour is None:
                missing.append(f"{case.lane}/{case.id}/{condition}")
            else:
                jobs.append((case, condition, behaviour))
    extra = sorted(
        f"{lane}/{case}/{cond}" for lane, case, cond in table if not any(c.id == case for c in suite.cases)
    )
    if extra:
        print(f"behaviours for cases the suite does not have: {', '.join(extra)}", file=sys.stderr)
        return 2
    if args.list:
        for case, condition, _b in jobs:
            print(f"{case.lane}/{case.id}/{condition}")
        for name in missing:
            print(f"{name}  (no behaviour)")
        return 0
    limiter = anyio.CapacityLimiter(args.jobs)
    written: list[str] = []
    failures: list[str] = []

    async def run(case: Case, condition: str, behaviour: Behaviour) -> None:
        async with limiter:
            try:
                written.append(await one(suite, case, condition, behaviour, HERE))
            except Exception as exc:  # report every broken behaviour, not just the first
                failures.append(f"{case.lane}/{case.id}/{condition}: {type(exc).__name__}: {exc}")

    async with anyio.create_task_group() as tg:
        for job in jobs:
            tg.start_soon(run, *job)
    for name in sorted(written):
        print(f"wrote {name}")
    for name in missing:
        print(f"no behaviour for {name}", file=sys.stderr)
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    return 1 if failures or missing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", default=[], help="only this case (repeatable)")
    parser.add_argument("--condition", action="append", default=[], help="only this condition (repeatable)")
    parser.add_argument("--jobs", type=int, default=8, help="sessions generated at once (default 8)")
    parser.add_argument("--list", action="store_true", help="list what would be written and stop")
    return anyio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
