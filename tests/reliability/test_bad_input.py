"""Bad input corpus: every entry gets exit code 2, one clear line naming the place and the fix, no write."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.conftest import run_cli, write_suite

BASE = {
    "suite.py": """
        from skillgym import skill, workspace_preset

        skill("demo", "skills/demo", stale="stale.md")
        workspace_preset("ws")
    """,
    "skills/demo/SKILL.md": "---\nname: demo\ndescription: d\n---\nUse demo.\n",
    "stale.md": "old advice\n",
    "fixtures/app.py": "print('READY> ')\n",
    "stubs/ok.md": "I would wait.\n",
    "ok.py": """
        from skillgym import prompt_case

        with prompt_case("ok") as c:
            c.category("trigger")
            c.prompt("p")
            c.expect_skill(None)
            with c.step("waits") as s:
                s.must_mention("wait")
    """,
}


def prompt_case(body: str, case_id: str = "bad") -> str:
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return f"from skillgym import prompt_case\n\nwith prompt_case({case_id!r}) as c:\n{lines}\n"


def execution_case(body: str) -> str:
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return f"from skillgym import execution_case\n\nwith execution_case('bad') as c:\n{lines}\n"


FULL_PROMPT = 'c.category("trigger")\nc.prompt("p")\nc.expect_skill(None)\n'
# An execution case in workspace preset 't'.
TEMPLATE_CASE = execution_case(
    'c.category("s")\nc.task("t")\nc.workspace("t")\nwith c.assertions() as a:\n    a.file_exists("x")'
).replace("'bad'", "'tpl'")
# A prompt-lane cassette of a stream format every install has.
REPLAYABLE = (
    '{"cassette": 1, "provider": "rec", "model": "m1", "format": "claude-stream-json", "lane": "prompt", '
    '"case": "ok", "condition": "none", "trial": null, "fingerprint": "", "recorded_at": "x"}\n'
)


class Bad(NamedTuple):
    files: dict[str, str]
    args: tuple[str, ...]
    expect: tuple[str, ...]
    env: dict[str, str] = {}
    absent: tuple[str, ...] = ()  # what the error must not show (a secret)


RUN = ("run", "--provider", "stub")
LIST = ("list",)

CORPUS: dict[str, Bad] = {
    # --- case definitions ---
    "missing-category": Bad(
        {"bad.py": prompt_case('c.prompt("p")\nc.expect_skill(None)')},
        LIST,
        ("bad.py:3", "case 'bad'", "category"),
    ),
    "missing-prompt-text": Bad(
        {"bad.py": prompt_case('c.category("t")\nc.expect_skill(None)')}, LIST, ("bad.py:3", "prompt")
    ),
    "missing-expected-skill": Bad(
        {"bad.py": prompt_case('c.category("t")\nc.prompt("p")')}, LIST, ("bad.py:3", "expect_skill")
    ),
    "execution-without-verifier": Bad(
        {"bad.py": execution_case('c.category("s")\nc.task("t")')}, LIST, ("bad.py:3", "verifier")
    ),
    "dogfood-without-requirements": Bad(
        {
            "bad.py": "from skillgym import dogfood_case\n\nwith dogfood_case('bad') as c:\n"
            "    c.category('qa')\n    c.task('t')\n"
        },
        LIST,
        ("bad.py:3", "report"),
    ),
    "invalid-regex": Bad(
        {"bad.py": prompt_case(FULL_PROMPT + 'with c.step("s") as s:\n    s.must_mention("(")')},
        LIST,
        ("bad.py:8", "invalid regex '('"),
    ),
    "requires-and-forbids-same": Bad(
        {
            "bad.py": prompt_case(
                FULL_PROMPT + 'with c.step("s") as s:\n    s.must_mention("x")\n    s.must_not_mention("x")'
            )
        },
        LIST,
        ("bad.py", "'s'", "forbid"),
    ),
    "depends-on-unknown-step": Bad(
        {
            "bad.py": prompt_case(
                FULL_PROMPT + 'with c.step("s", depends_on=("nope",)) as s:\n    s.must_mention("x")'
            )
        },
        LIST,
        ("bad.py", "'nope'"),
    ),
    "dependency-cycle": Bad(
        {
            "bad.py": prompt_case(
                FULL_PROMPT + 'with c.step("a", depends_on=("b",)) as s:\n    s.must_mention("x")\n'
                'with c.step("b", depends_on=("a",)) as s:\n    s.must_mention("y")'
            )
        },
        LIST,
        ("bad.py", "cycle", "a -> b -> a"),
    ),
    "empty-workflow": Bad(
        {
            "bad.py": execution_case(
                'c.category("s")\nc.task("t")\nwith c.workflow() as w:\n    pass\n'
                'with c.assertions() as a:\n    a.file_exists("x")'
            )
        },
        LIST,
        ("bad.py:6", "workflow"),
    ),
    "unknown-preset": Bad(
        {
            "bad.py": execution_case(
                'c.category("s")\nc.task("t")\nc.workspace("nope")\n'
                'with c.assertions() as a:\n    a.file_exists("x")'
            )
        },
        LIST,
        ("bad.py:6", "unknown workspace preset 'nope'", "workspace_preset("),  # the c.workspace() line
    ),
    "unknown-condition": Bad(
        {"bad.py": prompt_case(FULL_PROMPT + 'c.conditions("stail")')},
        LIST,
        ("bad.py:7", "unknown condition 'stail'", "none, self-load, preloaded, stale"),
    ),
    "unknown-fixture": Bad(
        {
            "bad.py": execution_case(
                'c.category("s")\nc.task("t")\nc.fixture("ghost")\n'
                'with c.assertions() as a:\n    a.file_exists("x")'
            )
        },
        LIST,
        ("bad.py:6", "unknown fixture 'ghost'", "fixtures/ghost.py"),
    ),
    "undeclared-expected-skill": Bad(
        {"bad.py": prompt_case('c.category("t")\nc.prompt("p")\nc.expect_skill("tmux")')},
        LIST,
        ("bad.py:6", "expected skill 'tmux'", "demo"),
    ),
    "assertions-in-prompt-lane": Bad(
        {"bad.py": prompt_case(FULL_PROMPT + 'with c.assertions() as a:\n    a.file_exists("x")')},
        LIST,
        ("bad.py:7", "assertions", "execution"),
    ),
    "recorder-used-after-close": Bad(
        {
            "bad.py": prompt_case(
                FULL_PROMPT + 'with c.step("s") as s:\n    s.must_mention("x")\ns.must_mention("y")'
            )
        },
        LIST,
        ("bad.py:9", "inside"),
    ),
    "duplicate-case-id": Bad(
        {"bad.py": prompt_case(FULL_PROMPT, case_id="ok")},
        LIST,
        ("duplicate case id 'ok'", "ok.py:3", "bad.py:3"),
    ),
    "invalid-case-id": Bad(
        {"bad.py": prompt_case(FULL_PROMPT, case_id="Bad Id")}, LIST, ("bad.py:3", "'Bad Id'", "bad-id")
    ),
    "bundle-path-escapes": Bad(
        {
            "bad.py": "from skillgym import dogfood_case\n\nwith dogfood_case('bad') as c:\n"
            "    c.category('qa')\n    c.task('t')\n    c.bundle_path('../outside')\n"
        },
        LIST,
        ("bad.py:6", "'../outside'"),
    ),
    "template-escapes-suite": Bad(
        {
            "suite2.py": "from skillgym import workspace_preset\n\n"
            "workspace_preset('esc', template='../../etc')\n"
        },
        LIST,
        ("suite2.py:3", "'../../etc'"),
    ),
    "bootstrap-as-shell-string": Bad(
        {
            "suite2.py": "from skillgym import workspace_preset\n\n"
            "workspace_preset('sh', bootstrap=['make all'])\n"
        },
        LIST,
        ("suite2.py:3", "argv list"),
    ),
    "custom-verifier-target": Bad(
        {
            "bad.py": execution_case(
                'c.category("s")\nc.task("t")\nwith c.assertions() as a:\n    a.custom("not-a-target")'
            )
        },
        LIST,
        ("bad.py:7", "module:function"),
    ),
    "file-raises-at-import": Bad(
        {"bad.py": "x = 1\nraise RuntimeError('half-written helper')\n"},
        LIST,
        ("bad.py:2", "RuntimeError: half-written helper"),
    ),
    "syntax-error": Bad({"bad.py": "def broken(:\n"}, LIST, ("bad.py:1", "SyntaxError")),
    "sys-exit-at-import-list": Bad(
        {"bad.py": "import sys\n\nsys.exit(0)\n"},
        LIST,
        ("bad.py:3", "SystemExit(0)", "remove the sys.exit()"),
    ),
    "sys-exit-at-import-run": Bad(
        {"bad.py": "raise SystemExit('done early')\n"}, RUN, ("bad.py:1", "SystemExit('done early')")
    ),
    "endless-loop-at-import": Bad(
        {"bad.py": "x = 0\nwhile True:\n    x += 1\n"},
        LIST,
        ("bad.py:", "still importing after 1 s", "SKILLGYM_LOAD_TIMEOUT_S"),
        {"SKILLGYM_LOAD_TIMEOUT_S": "1"},
    ),
    "endless-loop-swallowing-errors": Bad(
        {
            "bad.py": "import time\n\nwhile True:\n    try:\n        time.sleep(30)\n    except Exception:\n"
            "        pass\n"
        },
        RUN,
        ("bad.py:5", "still importing after 1 s"),
        {"SKILLGYM_LOAD_TIMEOUT_S": "1"},
    ),
    "load-timeout-not-a-number": Bad(
        {}, LIST, ("SKILLGYM_LOAD_TIMEOUT_S='soon'", "positive number"), {"SKILLGYM_LOAD_TIMEOUT_S": "soon"}
    ),
    "case-env-null-byte": Bad(
        {"bad.py": prompt_case(FULL_PROMPT + 'c.env({"X": "a\\x00b"})')},
        LIST,
        ("bad.py:7", "case 'bad'", "c.env()['X']", "null byte"),
    ),
    "secret-env-null-byte": Bad(  # the value is a secret: the line names where, never what
        {"bad.py": prompt_case(FULL_PROMPT + 'c.env({"HOST_TOKEN": "sk-\\x00-unshown"})')},
        LIST,
        ("bad.py:7", "c.env()['HOST_TOKEN']", "null byte", "<redacted>"),
        absent=("unshown",),
    ),
    "secret-too-short": Bad(
        {
            "suite2.py": "from skillgym import secret, workspace_preset\n\n"
            "workspace_preset('w', env={'A': secret('pin1')})\n"
        },
        LIST,
        ("suite2.py:3", "skillgym.secret()", "4 characters", "6 or more"),
    ),
    "case-env-name-null-byte": Bad(
        {"bad.py": prompt_case(FULL_PROMPT + 'c.env({"X\\x00": "a"})')},
        LIST,
        ("bad.py:7", "case 'bad'", "invalid variable name", "null byte"),
    ),
    "preset-env-null-byte": Bad(
        {
            "suite2.py": "from skillgym import workspace_preset\n\n"
            "workspace_preset('nul', env={'X': 'a\\x00b'})\n"
        },
        LIST,
        ("suite2.py:3", "workspace preset 'nul'", "['X']", "null byte"),
    ),
    "bootstrap-command-env-null-byte": Bad(
        {
            "suite2.py": "from skillgym import Command, workspace_preset\n\n"
            "workspace_preset('nul', bootstrap=[Command(argv=('true',), env={'X': 'a\\x00b'})])\n"
        },
        LIST,
        ("suite2.py:3", "workspace preset 'nul'", "['X']", "null byte"),
    ),
    "setup-argv-null-byte": Bad(
        {
            "bad.py": execution_case(
                'c.category("s")\nc.task("t")\nc.setup(["echo", "a\\x00b"])\n'
                'with c.assertions() as a:\n    a.file_exists("x")'
            )
        },
        LIST,
        ("bad.py:6", "case 'bad'", "c.setup() argv", "null byte"),
    ),
    "setup-env-null-byte": Bad(
        {
            "bad.py": execution_case(
                'c.category("s")\nc.task("t")\nc.setup(["true"], env={"K": "a\\x00b"})\n'
                'with c.assertions() as a:\n    a.file_exists("x")'
            )
        },
        LIST,
        ("bad.py:6", "case 'bad'", "env['K']", "null byte"),
    ),
    "command-check-argv-null-byte": Bad(
        {
            "bad.py": execution_case(
                'c.category("s")\nc.task("t")\nwith c.assertions() as a:\n    a.command(["test", "a\\x00b"])'
            )
        },
        LIST,
        ("bad.py:7", "case 'bad'", "a.command() argv", "null byte"),
    ),
    "missing-condition-material": Bad(
        {"suite.py": BASE["suite.py"].replace('stale="stale.md"', 'stale="gone.md"')}, RUN, ("gone.md",)
    ),
    # --- cassettes ---
    "malformed-cassette": Bad(
        {"cassettes/rec/m1/prompt/ok/none.jsonl": '{"cassette": 1, "provider": "rec"\n'},
        ("run", "--condition", "none"),
        ("cassettes/rec/m1/prompt/ok/none.jsonl:1",),
    ),
    "cassette-unknown-format": Bad(
        {
            "cassettes/rec/m1/prompt/ok/none.jsonl": '{"cassette": 1, "provider": "rec", "model": "m1", '
            '"format": "gpt-xml", "lane": "prompt", "case": "ok", "condition": "none", "trial": null, '
            '"fingerprint": "", "recorded_at": "x"}\n'
        },
        ("run", "--condition", "none"),
        ("none.jsonl", "gpt-xml"),
    ),
    "no-cassettes-for-replay": Bad({}, ("run",), ("cassettes", "--record")),
    "cassette-missing-for-a-condition": Bad(
        {"cassettes/rec/m1/prompt/ok/none.jsonl": REPLAYABLE},
        ("run", "--condition", "none", "--condition", "stale"),
        ("replay has nothing to play", "'stale'", "cassettes/rec/m1/prompt/ok/stale.jsonl", "--record"),
    ),
    # --- files the plan names ---
    "missing-template": Bad(
        {
            "suite2.py": "from skillgym import workspace_preset\n\n"
            "workspace_preset('t', template='templates/gone')\n",
            "uses.py": TEMPLATE_CASE,
            "stubs/tpl.md": "done\n",
        },
        RUN,
        ("workspace preset 't' template", "templates/gone", "does not exist"),
    ),
    "trace-stub-that-does-not-parse": Bad(
        {
            "bad.py": execution_case(
                'c.category("s")\nc.task("t")\nwith c.assertions() as a:\n    a.file_exists("x")'
            ),
            "stubs/bad.jsonl": '{"type": "tool_call", "command": "ls"}\n',
        },
        (*RUN, "--condition", "none", "--case", "bad"),
        ("stubs/bad.jsonl is not a skillgym-trace: line 1",),
    ),
    "missing-stub": Bad(
        {
            "other.py": prompt_case(
                FULL_PROMPT + 'with c.step("s") as s:\n    s.must_mention("wait")', "other"
            )
        },
        (*RUN, "--condition", "none"),
        ("stub has nothing to play", "'other'", "stubs/other.md"),
    ),
    # --- command line ---
    "unknown-flag": Bad({}, ("run", "--trails", "3"), ("--trails",)),
    "zero-trials": Bad({}, (*RUN, "--trials", "0"), ("--trials must be at least 1",)),
    "zero-concurrency": Bad({}, (*RUN, "--concurrency", "0"), ("--concurrency must be at least 1",)),
    "unknown-lane": Bad(
        {}, (*RUN, "--lane", "promt"), ("'promt'", "valid lanes: prompt, execution, dogfood")
    ),
    "unknown-case": Bad({}, (*RUN, "--case", "nope"), ("'nope'", "valid case ids: ok")),
    "filters-select-nothing": Bad(
        {}, (*RUN, "--lane", "execution", "--case", "ok"), ("nothing to run", "'ok' is in the prompt lane")
    ),
    "unknown-provider": Bad({}, ("run", "--provider", "gpt4"), ("'gpt4'", "valid providers")),
    "unknown-reporter": Bad({}, (*RUN, "--reporter", "html"), ("'html'", "console, jsonl, junit")),
    "jsonl-without-output": Bad({}, (*RUN, "--reporter", "jsonl"), ("--reporter-output",)),
    "command-without-agent": Bad({}, ("run", "--provider", "command"), ("--agent-command",)),
    "agent-not-executable": Bad(
        {"agent.sh": "echo hi\n"},
        ("run", "--provider", "command", "--agent-command", "{suite}/agent.sh"),
        ("agent.sh is not executable", "chmod +x", "'sh "),
    ),
    "agent-missing-relative": Bad(
        {},
        ("run", "--provider", "command", "--agent-command", "./evals/agent.sh"),
        ("evals/agent.sh does not exist", "check --agent-command"),
    ),
    "bad-replay-source": Bad({}, ("run", "--replay-source", "claude"), ("'claude'", "provider/model")),
    "baseline-not-a-report": Bad(
        {"notes.json": '{"hello": 1}'},
        (*RUN, "--compare-baseline", "{suite}/notes.json"),
        ("notes.json", "not a skillgym report"),
    ),
    "resume-not-a-run-dir": Bad({}, ("run", "--resume", "{suite}"), ("events.jsonl", "not a skillgym run")),
    "resume-with-plan-flags": Bad({}, ("run", "--resume", "{suite}", "--trials", "2"), ("drop --trials",)),
    "report-not-a-run-dir": Bad({}, ("report", "{suite}"), ("events.jsonl",)),
    "suite-is-a-file": Bad(
        {},
        ("list", "--suite", "{suite}/ok.py"),
        ("ok.py is a file", "a suite is a folder", "pass the folder"),
    ),
    "run-suite-is-a-file": Bad({}, (*RUN, "--suite", "{suite}/suite.py"), ("suite.py is a file",)),
}


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.parametrize("name", list(CORPUS))
def test_bad_input_is_one_clear_line_exit_2_and_writes_nothing(name: str, tmp_path: Path) -> None:
    bad = CORPUS[name]
    suite = write_suite(tmp_path / "evals", {**BASE, **bad.files})
    before = _tree(tmp_path)
    args = [a.replace("{suite}", str(suite)) for a in bad.args]
    if args[0] in ("run", "list") and "--suite" not in args and "--resume" not in args:
        args += ["--suite", str(suite)]
    proc = run_cli(*args, cwd=tmp_path, env=bad.env)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 or lines[0].startswith("usage:"), proc.stderr  # argparse prints usage first
    for fragment in bad.expect:
        assert fragment in proc.stderr, (fragment, proc.stderr)
    for fragment in bad.absent:
        assert fragment not in proc.stderr + proc.stdout, (fragment, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert _tree(tmp_path) == before, "bad input must not write or change any file"


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 30
