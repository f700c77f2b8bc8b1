"""Fingerprints: stable across processes, blind to cosmetic fields, sensitive to what is graded."""

from __future__ import annotations

import subprocess
import sys

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from skillgym.fingerprint import canonical_bytes, fingerprint, short
from skillgym.model import (
    Budget,
    CustomVerifier,
    ExecutionCase,
    FileContains,
    Pattern,
    PromptCase,
    TokenBudget,
    WorkflowCheck,
)
from tests.conftest import REPO


def _case(**changes: object) -> PromptCase:
    base = PromptCase(
        id="c",
        category="trigger",
        prompt="wait for the server",
        budget=Budget(timeout_s=30),
        workflow=(WorkflowCheck(id="s", required_patterns=(Pattern(regex="wait"),), origin="a.py:1"),),
        origin="a.py:1",
    )
    return msgspec.structs.replace(base, **changes)


def test_full_digest_is_hex_blake3_and_short_is_twelve() -> None:
    digest = fingerprint(_case())
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert short(digest) == digest[:12]


def test_cosmetic_fields_do_not_change_the_fingerprint() -> None:
    base = fingerprint(_case())
    assert fingerprint(_case(origin="elsewhere.py:99")) == base
    assert fingerprint(_case(description="new words")) == base
    assert fingerprint(_case(tags=("smoke",), category="other")) == base
    assert fingerprint(_case(conditions=("none",))) == base
    assert fingerprint(_case(token_budget=TokenBudget(max_regression_percent=5))) == base
    moved = (
        WorkflowCheck(id="s", required_patterns=(Pattern(regex="wait"),), origin="b.py:7", description="x"),
    )
    assert fingerprint(_case(workflow=moved)) == base


def test_what_the_agent_sees_or_is_graded_on_changes_it() -> None:
    base = fingerprint(_case())
    assert fingerprint(_case(prompt="wait for the server!")) != base
    assert fingerprint(_case(budget=Budget(timeout_s=31))) != base
    assert fingerprint(_case(expected_skill="tmux-tui")) != base
    assert fingerprint(_case(env={"A": "1"})) != base
    flags = (WorkflowCheck(id="s", required_patterns=(Pattern(regex="wait", flags=""),)),)
    assert fingerprint(_case(workflow=flags)) != base


def test_lane_is_part_of_the_identity() -> None:
    prompt = PromptCase(id="x", category="c", prompt="t", budget=Budget(timeout_s=1))
    execution = ExecutionCase(id="x", category="c", task="t", budget=Budget(timeout_s=1))
    assert fingerprint(prompt) != fingerprint(execution)


def test_user_config_keys_named_like_excluded_fields_are_kept() -> None:
    def case(config: dict[str, object]) -> ExecutionCase:
        verifier = CustomVerifier(id="v", target="m:f", config=config)
        return ExecutionCase(
            id="x", category="c", task="t", budget=Budget(timeout_s=1), verifiers=(verifier,)
        )

    assert fingerprint(case({"description": "a"})) != fingerprint(case({"description": "b"}))


def test_identical_in_a_fresh_process() -> None:
    code = (
        "from tests.unit.test_fingerprint import _case; from skillgym.fingerprint import fingerprint;"
        "print(fingerprint(_case()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == fingerprint(_case())


def test_canonical_encoding_sorts_keys() -> None:
    data = canonical_bytes(_case())
    decoded = msgspec.json.decode(data)
    assert list(decoded) == sorted(decoded)
    assert b"origin" not in data and b"a.py" not in data


text = st.text(max_size=40)


@given(prompt=text, regex=st.from_regex(r"[a-z]{1,8}", fullmatch=True), timeout=st.floats(1, 1e4))
def test_property_stable_under_reconstruction_and_cosmetics(prompt: str, regex: str, timeout: float) -> None:
    case = _case(
        prompt=prompt,
        budget=Budget(timeout_s=timeout),
        workflow=(WorkflowCheck(id="s", required_patterns=(Pattern(regex=regex),)),),
    )
    rebuilt = msgspec.json.decode(msgspec.json.encode(case), type=PromptCase)
    assert fingerprint(rebuilt) == fingerprint(case)
    assert fingerprint(msgspec.structs.replace(case, origin="z.py:1", description=prompt)) == fingerprint(
        case
    )


@given(a=text, b=text)
def test_property_different_prompts_differ(a: str, b: str) -> None:
    assert (fingerprint(_case(prompt=a)) == fingerprint(_case(prompt=b))) == (a == b)


def test_file_contains_pattern_change_is_detected() -> None:
    def case(regex: str) -> ExecutionCase:
        v = FileContains(id="f", path="out.txt", pattern=Pattern(regex=regex))
        return ExecutionCase(id="x", category="c", task="t", budget=Budget(timeout_s=1), verifiers=(v,))

    assert fingerprint(case("hello")) != fingerprint(case("hullo"))
