"""Fingerprints: stable across processes, blind to cosmetic fields, sensitive to what is graded."""

from __future__ import annotations

import subprocess
import sys

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from skillgym.fingerprint import EXCLUDED_FIELDS, HASHED_WHEN_SET, canonical_bytes, fingerprint, short
from skillgym.model import (
    Budget,
    CaseSandbox,
    Command,
    CommandCheck,
    CustomVerifier,
    ExecutionCase,
    FileContains,
    NoLiveSessions,
    Pattern,
    PromptCase,
    TokenBudget,
    TrialPolicy,
    Verifier,
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


# The canonical bytes, spelled out the slow way: the sorted JSON of the case's builtins without the
# excluded fields of any Struct, keeping every key of the user's own mappings (env, config).
def _reference_bytes(case: object) -> bytes:
    def strip(data: object, user_data: bool = False) -> object:
        if isinstance(data, dict):
            if user_data:
                return data
            return {
                k: strip(v, user_data=k in {"env", "config"})
                for k, v in data.items()
                if k not in EXCLUDED_FIELDS and not (k in HASHED_WHEN_SET and v in (None, (), [], ""))
            }
        if isinstance(data, (list, tuple)):
            return [strip(item) for item in data]
        return data

    return msgspec.json.encode(strip(msgspec.to_builtins(case)), order="deterministic")


_words = st.text(max_size=12)
_patterns = st.builds(Pattern, regex=_words, flags=st.sampled_from(["", "i", "ims"]))
_config = st.dictionaries(
    st.sampled_from(["description", "origin", "n", "tags"]),
    st.one_of(_words, st.integers(), st.dictionaries(st.sampled_from(["description", "x"]), _words)),
    max_size=3,
)
_verifiers = st.lists(
    st.one_of(
        st.builds(FileContains, id=_words, path=_words, pattern=_patterns, description=_words, origin=_words),
        st.builds(CustomVerifier, id=_words, target=_words, config=_config, description=_words),
        st.builds(NoLiveSessions, id=_words, required=st.booleans(), origin=_words),
        st.builds(CommandCheck, id=_words, argv=st.tuples(_words), stdout_pattern=st.none() | _patterns),
    ),
    max_size=3,
)


@given(
    verifiers=_verifiers,
    setup=st.lists(
        st.builds(Command, argv=st.tuples(_words), description=_words, env=st.dictionaries(_words, _words)),
        max_size=2,
    ),
    env=st.dictionaries(_words, _words, max_size=2),
    timeout=st.integers(1, 100) | st.floats(1, 1e4),
    origin=_words,
)
def test_property_canonical_bytes_match_the_sorted_builtins_without_excluded_fields(
    verifiers: list[Verifier], setup: list[Command], env: dict[str, str], timeout: float, origin: str
) -> None:
    case = ExecutionCase(
        id="x",
        category="c",
        task="t",
        budget=Budget(timeout_s=timeout),
        env=env,
        setup=tuple(setup),
        verifiers=tuple(verifiers),
        origin=origin,
        description=origin,
    )
    assert canonical_bytes(case) == _reference_bytes(case)


def test_a_case_not_shaped_like_the_model_still_gets_its_fingerprint() -> None:
    # A hand-built Struct may hold a str where a Pattern belongs; the fingerprint still covers it.
    def case(pattern: object) -> ExecutionCase:
        verifier = FileContains(id="f", path="out.txt", pattern=pattern)  # type: ignore[arg-type]
        return ExecutionCase(
            id="x", category="c", task="t", budget=Budget(timeout_s=1), verifiers=(verifier,)
        )

    assert canonical_bytes(case("hello")) == _reference_bytes(case("hello"))
    assert fingerprint(case("hello")) != fingerprint(case("hullo"))


def test_a_case_sandbox_is_hashed_only_when_the_case_declares_one() -> None:
    plain = ExecutionCase(id="x", category="c", task="t", budget=Budget(timeout_s=1))
    assert b"sandbox" not in canonical_bytes(plain)  # every fingerprint stored before it stays valid
    online = msgspec.structs.replace(plain, sandbox=CaseSandbox(network="host"))
    offline = msgspec.structs.replace(plain, sandbox=CaseSandbox(network="none"))
    assert len({fingerprint(plain), fingerprint(online), fingerprint(offline)}) == 3
    assert canonical_bytes(online) == _reference_bytes(online)


def test_grader_notes_are_hashed_in_other_lanes_only_when_the_case_has_them() -> None:
    plain = ExecutionCase(id="x", category="c", task="t", budget=Budget(timeout_s=1))
    assert b"grader_notes" not in canonical_bytes(plain)  # every fingerprint stored before it stays valid
    noted = msgspec.structs.replace(plain, grader_notes="report.md names July")
    other = msgspec.structs.replace(plain, grader_notes="report.md names August")
    assert len({fingerprint(plain), fingerprint(noted), fingerprint(other)}) == 3
    assert canonical_bytes(noted) == _reference_bytes(noted)


def test_prompt_cases_hash_their_grader_notes_as_they_always_did() -> None:
    prompt = PromptCase(id="x", category="c", prompt="t", budget=Budget(timeout_s=1))
    assert b'"grader_notes":""' in canonical_bytes(prompt)  # prompt cases held the field from the start
    noted = msgspec.structs.replace(prompt, grader_notes="n")
    assert fingerprint(noted) != fingerprint(prompt)


def test_a_case_trial_policy_never_changes_its_fingerprint() -> None:
    plain = ExecutionCase(id="x", category="c", task="t", budget=Budget(timeout_s=1))
    adaptive = msgspec.structs.replace(plain, trials=TrialPolicy(auto=True, max_trials=30))
    assert b"trials" not in canonical_bytes(adaptive)  # how often a case runs is not what it asks
    assert fingerprint(adaptive) == fingerprint(plain)
