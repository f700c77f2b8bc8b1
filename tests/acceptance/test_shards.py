"""Acceptance: `run --shard I/N` then `skillgym merge` give the unsharded run, apart from ids and timing."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, agent_run, run_agent, run_cli, run_dirs, running_cli, wait_for

SuiteDir = Callable[[dict[str, str]], Path]

# Fields that are ids and timing (and where the run happened): what may differ from the unsharded run.
VOLATILE = {
    "run_id",
    "at",
    "started_at",
    "finished_at",
    "duration_s",
    "waited_s",
    "judge_s",
    "argv",
    "run_dir",
    "concurrency",
    "total_trials",
    "shard",
    "merged",
}
_RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")
_TMUX = re.compile(r"skillgym-tmux-[0-9a-f]+")  # a private socket folder each trial makes afresh


def normalized(value: Any, run_dir: Path) -> Any:
    """``value`` without its ids and timing, its run folder's path written as <RUN>, a cassette's path
    (relative to the run folder, which may sit at another depth) as the file it names."""
    if isinstance(value, dict):
        if isinstance(value.get("cassette"), str) and "result" in value:  # a result's paths
            value = {**value, "cassette": os.path.normpath(run_dir / value["cassette"])}
        return {k: normalized(v, run_dir) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalized(v, run_dir) for v in value]
    if isinstance(value, str):
        return _TMUX.sub("<TMUX>", value.replace(str(run_dir), "<RUN>"))
    return value


def events(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


def assert_same_events(merged: Path, whole: Path) -> None:
    ours, theirs = events(merged), events(whole)
    assert [e["type"] for e in ours] == [e["type"] for e in theirs]
    for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert normalized(a, merged) == normalized(b, whole), f"event {index} ({a['type']}) differs"


def assert_same_reports(merged: Path, whole: Path) -> None:
    ours = json.loads((merged / "report.json").read_text())
    theirs = json.loads((whole / "report.json").read_text())
    for field in sorted((set(ours) | set(theirs)) - VOLATILE):  # field by field, so a failure names the field
        assert normalized(ours.get(field), merged) == normalized(theirs.get(field), whole), field

    def md(run_dir: Path) -> str:
        return _RUN_ID.sub("<ID>", (run_dir / "report.md").read_text().replace(str(run_dir), "<RUN>"))

    assert md(merged) == md(whole)


def junit(run_dir: Path) -> list[tuple[str, dict[str, str], str]]:
    """Every element of junit.xml below its root (whose name holds the run id), without times."""
    root = ET.parse(run_dir / "junit.xml").getroot()
    return [
        (node.tag, {k: v for k, v in node.attrib.items() if k != "time"}, (node.text or "").strip())
        for node in root.iter()
        if node is not root
    ]


def only_run(folder: Path) -> Path:
    (run_dir,) = run_dirs(folder)
    return run_dir


def test_merged_shards_equal_the_unsharded_run_field_by_field(tmp_path: Path) -> None:
    # The example suite with replay, from the repository (whose committed snapshots give the costs).
    # The none and stale conditions are left out: there the recorded agents sleep instead of waiting,
    # and whether the program was ready in time differs between any two runs, sharded or not.
    suite = str(REPO / "evals")
    plan = ["--suite", suite, "--condition", "preloaded", "--condition", "self-load", "--reporter", "junit"]
    whole = run_cli(
        "run", *plan, "--concurrency", "1", "--output", str(tmp_path / "whole"), cwd=REPO, timeout=300
    )
    assert whole.returncode in (0, 1), whole.stderr
    for index in (1, 2, 3):
        shard = run_cli(
            "run",
            *plan,
            "--shard",
            f"{index}/3",
            "--output",
            str(tmp_path / f"s{index}"),
            cwd=REPO,
            timeout=300,
        )
        assert shard.returncode in (0, 1), shard.stderr
        assert f"shard {index}/3:" in shard.stderr
    shards = [only_run(tmp_path / f"s{index}") for index in (1, 2, 3)]
    out = tmp_path / "merged"
    merged = run_cli("merge", str(out), *map(str, reversed(shards)), cwd=REPO)
    assert merged.returncode == whole.returncode, merged.stderr
    assert "merged 3 shard(s) of plan" in merged.stdout
    whole_dir = only_run(tmp_path / "whole")

    assert_same_events(out, whole_dir)
    assert_same_reports(out, whole_dir)
    assert junit(out) == junit(whole_dir)
    # Token data: the run's token section (in run.finish, compared above) and every trial's own file.
    usage = sorted(p.relative_to(whole_dir) for p in whole_dir.glob("trials/**/token-usage.json"))
    assert usage and usage == sorted(p.relative_to(out) for p in out.glob("trials/**/token-usage.json"))
    for rel in usage:
        assert json.loads((out / rel).read_text()) == json.loads((whole_dir / rel).read_text())
    # Every trial's folder came along, and every path a result names exists in the merged folder.
    for event in events(out):
        if event["type"] == "trial.finish":
            for path in event["result"]["paths"].values():
                assert path is None or (out / path).exists(), path

    runs = {
        name: json.loads((d / "run.json").read_text()) for name, d in [("whole", whole_dir), ("merged", out)]
    }
    specs = [json.loads((d / "run.json").read_text())["shard"] for d in shards]
    assert [(s["index"], s["count"]) for s in specs] == [(1, 3), (2, 3), (3, 3)]
    assert {s["plan_fingerprint"] for s in specs} == {runs["whole"]["plan_fingerprint"]}
    assert runs["merged"]["plan_fingerprint"] == runs["whole"]["plan_fingerprint"]
    assert runs["merged"]["shard"] is None and [m["index"] for m in runs["merged"]["merged"]] == [1, 2, 3]
    assert sum(m["trials"] for m in runs["merged"]["merged"]) == runs["whole"]["total_trials"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merged", "s1", "s2", "s3", "whole"]  # no temp
    # The merged folder is a run like any other: its report rebuilds from its log to the same bytes.
    before = (out / "report.json").read_bytes()
    rebuilt = run_cli("report", str(out), cwd=REPO)
    assert rebuilt.returncode == 0 and "disagrees" not in rebuilt.stderr  # result.json files match the log
    assert (out / "report.json").read_bytes() == before


# Prompt cases answered by a small command agent; case-4's agent hangs while a flag file exists.
SUITE = {
    "suite.py": """
        from skillgym import condition, prompt_case

        condition("none")
        condition("hinted", inject_text="Use the wait skill.")
        for i in range(6):
            with prompt_case(f"case-{i}") as c:
                c.category("trigger")
                c.prompt(f"question {i}: should we wait?")
                c.expect_skill(None)
                c.budget(timeout_s=60)
                with c.step("waits") as s:
                    s.must_mention("wait")
    """,
}

AGENT = """
import json, os, sys, time
prompt = sys.stdin.read()
if os.path.exists(HANG_FLAG) and "question 4" in prompt:
    time.sleep(300)
answer = "no" if "question 3" in prompt else "I would wait"
print(json.dumps({"type": "usage", "input": 50, "output": 5}))
print(json.dumps({"type": "result", "text": answer}))
"""


def _agent(tmp_path: Path) -> str:
    """The agent's command, the same in every run (it is part of the plan); ``tmp_path/hang`` hangs case-4."""
    script = tmp_path / "agent.py"
    script.write_text(f"HANG_FLAG = {str(tmp_path / 'hang')!r}\n{AGENT}")
    return f"{sys.executable} {script}"


def _planned(root: Path, agent: str, *args: str) -> list[str]:
    proc = run_agent(root, agent, *args, "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr
    return [item["id"]["key"] for item in json.loads(proc.stdout)["items"]]


def test_an_interrupted_shard_resumes_and_then_merges(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent = _agent(tmp_path)
    run_agent(root, agent, "--trials", "2", "--concurrency", "1", "--output", "whole")
    # The shard that holds case-4's trials is stopped while they hang, after all its others finished.
    parts = {i: _planned(root, agent, "--trials", "2", "--shard", f"{i}/2") for i in (1, 2)}
    hung = next(i for i in (1, 2) if any("/case-4/" in k for k in parts[i]))
    other = 3 - hung
    assert (
        run_agent(root, agent, "--trials", "2", "--shard", f"{other}/2", "--output", "other").returncode == 1
    )
    flag = tmp_path / "hang"
    flag.write_text("")
    args = agent_run(root, agent)
    others = sum("/case-4/" not in k for k in parts[hung])
    with running_cli(
        *args, "--trials", "2", "--shard", f"{hung}/2", "--output", "hung", cwd=root.parent
    ) as child:
        wait_for(
            lambda: (
                len(list((root.parent / "hung").glob("*/trials/prompt/*/*/command/trial-*/result.json")))
                >= others
            ),
            timeout=90,
            what="the shard to get to where only case-4 hangs",
            every=0.1,
        )
        child.send_signal(signal.SIGINT)
        child.communicate(timeout=60)
    assert child.returncode == 130
    hung_dir, other_dir = only_run(root.parent / "hung"), only_run(root.parent / "other")
    out = tmp_path / "merged"
    refused = run_cli("merge", str(out), str(hung_dir), str(other_dir), cwd=root.parent)
    assert refused.returncode == 2
    assert f"shard {hung}/2 ({hung_dir}) was interrupted" in refused.stderr
    assert f"skillgym run --resume {hung_dir}" in refused.stderr
    assert not out.exists()

    flag.unlink()
    resumed = run_cli("run", "--resume", str(hung_dir), cwd=root.parent)
    assert resumed.returncode == 1, resumed.stderr
    assert json.loads((hung_dir / "run.json").read_text())["shard"]["index"] == hung
    merged = run_cli("merge", str(out), str(hung_dir), str(other_dir), cwd=root.parent)
    assert merged.returncode == 1, merged.stderr
    whole = only_run(root.parent / "whole")
    assert_same_events(out, whole)
    assert_same_reports(out, whole)


@pytest.fixture
def two_shards(suite_dir: SuiteDir, tmp_path: Path) -> tuple[Path, str, list[Path]]:
    root = suite_dir(SUITE)
    agent = _agent(tmp_path)
    for index in (1, 2):
        proc = run_agent(root, agent, "--shard", f"{index}/2", "--output", f"s{index}")
        assert proc.returncode in (0, 1), proc.stderr  # case-3's agent fails, in whichever shard
    return root, agent, [only_run(root.parent / f"s{index}") for index in (1, 2)]


def _refused(cwd: Path, out: Path, *shards: Path) -> str:
    proc = run_cli("merge", str(out), *map(str, shards), cwd=cwd)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert not out.exists()
    assert not list(out.parent.glob(f".{out.name}.merging-*"))
    return proc.stderr


def test_merge_refuses_a_missing_or_repeated_shard_naming_it(
    two_shards: tuple[Path, str, list[Path]], tmp_path: Path
) -> None:
    root, _, (one, two) = two_shards
    assert json.loads((one / "report.json").read_text())["shard"] == "1/2"
    assert "> **Shard 1/2:** this run holds its part of the plan only" in (one / "report.md").read_text()
    out = tmp_path / "merged"
    assert "shard(s) 2/2 missing" in _refused(root.parent, out, one)
    assert f"shard 1/2 is given twice: {one} and {one}" in _refused(root.parent, out, one, one, two)


def test_merge_refuses_shards_of_another_plan_or_split(
    two_shards: tuple[Path, str, list[Path]], tmp_path: Path
) -> None:
    root, agent, (one, _) = two_shards
    out = tmp_path / "merged"
    assert run_agent(root, agent, "--trials", "2", "--shard", "2/2", "--output", "other-plan").returncode in (
        0,
        1,
    )
    assert "ran different plans" in _refused(root.parent, out, one, only_run(root.parent / "other-plan"))
    assert run_agent(root, agent, "--shard", "2/3", "--output", "three").returncode in (0, 1)
    assert "split the plan 2 and 3 ways" in _refused(root.parent, out, one, only_run(root.parent / "three"))
    assert run_agent(root, agent, "--output", "whole").returncode == 1
    whole = only_run(root.parent / "whole")
    assert f"{whole} is a whole run, not a shard" in _refused(root.parent, out, one, whole)


def test_merge_refuses_a_shard_that_did_not_finish(
    two_shards: tuple[Path, str, list[Path]], tmp_path: Path
) -> None:
    root, _, (one, two) = two_shards
    killed = tmp_path / "killed"
    shutil.copytree(two, killed)
    lines = (killed / "events.jsonl").read_text().splitlines(keepends=True)
    (killed / "events.jsonl").write_text("".join(lines[:-3]))  # as if killed before its last trials
    stderr = _refused(root.parent, tmp_path / "merged", one, killed)
    assert f"shard 2/2 ({killed}) did not finish" in stderr
    assert f"skillgym run --resume {killed}" in stderr


def test_merge_refuses_an_existing_out_and_leaves_it_alone(
    two_shards: tuple[Path, str, list[Path]], tmp_path: Path
) -> None:
    root, _, shards = two_shards
    out = tmp_path / "merged"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    proc = run_cli("merge", str(out), *map(str, shards), cwd=root.parent)
    assert proc.returncode == 2 and "already exists" in proc.stderr
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_more_shards_than_trials_leaves_some_empty_and_they_still_merge(
    suite_dir: SuiteDir, tmp_path: Path
) -> None:
    root = suite_dir(SUITE)
    agent = _agent(tmp_path)
    args = ["--case", "case-0", "--condition", "none"]  # one trial, five shards
    for index in range(1, 6):
        proc = run_agent(root, agent, *args, "--shard", f"{index}/5", "--output", f"s{index}")
        assert proc.returncode == 0, proc.stderr
    shards = [only_run(root.parent / f"s{index}") for index in range(1, 6)]
    assert sorted(json.loads((s / "run.json").read_text())["total_trials"] for s in shards) == [0, 0, 0, 0, 1]
    proc = run_cli("merge", str(tmp_path / "merged"), *map(str, shards), cwd=root.parent)
    assert proc.returncode == 0, proc.stderr
    assert "1 trials: 1 passed" in proc.stdout


def test_shard_flags_are_checked_before_anything_runs(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent = _agent(tmp_path)
    for args, message in [
        (["--shard", "3/2"], "the shard number must be between 1 and 2"),
        (["--shard", "two"], "is not I/N"),
        (["--shard-by", "case"], "add --shard I/N"),
        (["--shard", "1/2", "--snapshot-check"], "skillgym snapshots check --run OUT"),
    ]:
        proc = run_agent(root, agent, *args)
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)
    assert not (root.parent / "runs").exists()


def test_a_dry_run_of_a_shard_lists_its_part(suite_dir: SuiteDir, tmp_path: Path) -> None:
    root = suite_dir(SUITE)
    agent = _agent(tmp_path)
    whole = _planned(root, agent, "--trials", "3")
    parts = [
        _planned(root, agent, "--trials", "3", "--shard", f"{i}/3", "--shard-by", "case") for i in (1, 2, 3)
    ]
    assert sorted(k for part in parts for k in part) == sorted(whole)
    for part in parts:
        cases = {k.split("/")[1] for k in part}
        assert part == [k for k in whole if k.split("/")[1] in cases]
