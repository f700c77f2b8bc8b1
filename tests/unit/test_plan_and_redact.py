"""Plan expansion (order, keys, filters) and secret redaction."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillgym.errors import UsageError
from skillgym.model import Budget, Condition, ExecutionCase, PromptCase, Suite, WorkspacePreset
from skillgym.plan import build_plan, item_key
from skillgym.redact import (
    REDACTED,
    is_secret_key,
    redact_env,
    scrub,
    scrub_tree,
    secret_values,
    with_secrets,
)


def _suite() -> Suite:
    return Suite(
        root="evals",
        conditions=(Condition(id="none"), Condition(id="self-load")),
        presets=(WorkspacePreset(id="ws"), WorkspacePreset(id="unused")),
        cases=(
            ExecutionCase(
                id="e1",
                category="c",
                task="t",
                budget=Budget(timeout_s=1),
                workspace="ws",
                conditions=("none",),
                fingerprint="f" * 64,
            ),
            PromptCase(
                id="p1",
                category="c",
                prompt="p",
                budget=Budget(timeout_s=1),
                conditions=("none", "self-load"),
                fingerprint="a" * 64,
            ),
        ),
    )


def test_items_are_ordered_by_lane_then_case_condition_provider_trial() -> None:
    plan = build_plan(_suite(), providers=("stub", "replay"), trials=2)
    keys = [i.id.key for i in plan.items]
    assert keys[:4] == [
        "prompt/p1/none/stub/trial-1",
        "prompt/p1/none/stub/trial-2",
        "prompt/p1/none/replay/trial-1",
        "prompt/p1/none/replay/trial-2",
    ]
    assert keys[-1] == "execution/e1/none/replay/trial-2"
    assert len(keys) == (2 + 1) * 2 * 2
    assert [p.id for p in plan.presets] == ["ws"]  # only presets the plan uses


def test_filters_and_case_conditions_intersect() -> None:
    plan = build_plan(_suite(), conditions=("self-load",))
    assert [i.id.key for i in plan.items] == ["prompt/p1/self-load/replay/trial-1"]
    assert build_plan(_suite(), lanes=("execution",)).lanes == ("execution",)
    assert [i.id.case_id for i in build_plan(_suite(), case_ids=("e1",)).items] == ["e1"]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"lanes": ("bogus",)}, "valid lanes: prompt, execution, dogfood"),
        ({"conditions": ("stale",)}, "valid conditions: none, self-load"),
        ({"case_ids": ("zzz",)}, "valid case ids: e1, p1"),
        ({"trials": 0}, "--trials must be at least 1"),
    ],
)
def test_bad_filters_are_usage_errors(kwargs: dict[str, object], expected: str) -> None:
    with pytest.raises(UsageError, match=expected):
        build_plan(_suite(), **kwargs)  # type: ignore[arg-type]


def test_item_key_mirrors_the_trial_directory() -> None:
    assert item_key("prompt", "c", "none", "stub", 10) == "prompt/c/none/stub/trial-10"


def test_secret_keys_and_values() -> None:
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-123456",
        "GITHUB_TOKEN": "ghp_abcdef",
        "DB_PASSWORD": "hunter22",
        "AWS_SECRET": "s3cr3t-value",
        "PATH": "/usr/bin",
        "KEYBOARD": "us",
        "PIN_KEY": "1",
    }
    assert {k for k in env if is_secret_key(k)} == {
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "AWS_SECRET",
        "PIN_KEY",
    }
    redacted = redact_env(env)
    assert redacted["ANTHROPIC_API_KEY"] == REDACTED and redacted["PATH"] == "/usr/bin"
    values = secret_values(env)
    assert "1" not in values  # too short to scrub from free text safely
    text = "key sk-ant-123456 and ghp_abcdef and hunter22"
    assert scrub(text, values) == f"key {REDACTED} and {REDACTED} and {REDACTED}"


def test_the_run_secrets_grow_by_the_suites_env_longest_first() -> None:
    run = ("run-secret-value",)
    assert with_secrets(run, {"MODE": "plain-value"}, {"PIN_KEY": "1"}) is run  # nothing to add
    grown = with_secrets(run, {"A_TOKEN": "short1"}, {"B_KEY": "a-much-longer-secret", "C_TOKEN": "short1"})
    assert grown == ("a-much-longer-secret", "run-secret-value", "short1")


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64])
def test_scrubbing_a_tree_in_chunks_catches_every_secret_whatever_the_boundaries(
    tmp_path: Path, chunk: int
) -> None:
    secrets = ("abcdefgh", "defghijk-longer", "zzzzzz")
    text = b"abcdefgh..defghijk-longer.abcdefghijk-longer!zzzzzzzabcdefgh"
    (tmp_path / "out.txt").write_bytes(text)
    (tmp_path / "run.sh").write_bytes(b"#!/bin/sh\necho abcdefgh\n")
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "clean.txt").write_bytes(b"nothing here abcdefg")
    before = os.stat(tmp_path / "clean.txt")
    assert scrub_tree(str(tmp_path), secrets, chunk_bytes=chunk) == []
    # As if the file were read whole: where two secrets overlap, the one that starts first is replaced.
    expected = b"<r>..<r>.<r>ijk-longer!<r>z<r>".replace(b"<r>", REDACTED.encode())
    assert (tmp_path / "out.txt").read_bytes() == expected
    assert (tmp_path / "run.sh").read_bytes() == f"#!/bin/sh\necho {REDACTED}\n".encode()
    assert (tmp_path / "run.sh").stat().st_mode & 0o777 == 0o755  # rewritten, mode kept
    # A file without a secret is only read, and no temp file is left anywhere.
    assert os.stat(tmp_path / "clean.txt").st_ino == before.st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clean.txt", "out.txt", "run.sh"]
