"""Scrubbing secret values: from byte streams fed in any chunks, from structs, and the suite's secrets."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from skillgym.events import TrialStart
from skillgym.identity import trial_id
from skillgym.model import Budget, Command, Condition, ExecutionCase, Suite, WorkspacePreset
from skillgym.redact import REDACTED, ByteScrubber, scrub_struct, suite_secrets

_letters = st.text(alphabet="ab", min_size=1, max_size=200)


def _fed(data: bytes, cuts: list[int], secrets: tuple[str, ...]) -> bytes:
    scrubber = ByteScrubber(secrets)
    out, start = [], 0
    for cut in sorted(c % (len(data) + 1) for c in cuts):
        out.append(scrubber.feed(data[start:cut]))
        start = cut
    out.append(scrubber.feed(data[start:]))
    return b"".join(out) + scrubber.finish()


@settings(max_examples=300, deadline=None)
@given(
    text=_letters,
    secrets=st.lists(st.text(alphabet="ab", min_size=2, max_size=9), min_size=1, max_size=4),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_a_stream_is_scrubbed_the_same_whatever_its_chunks(
    text: str, secrets: list[str], cuts: list[int]
) -> None:
    data = text.encode()
    whole = _fed(data, [], tuple(secrets))
    assert _fed(data, cuts, tuple(secrets)) == whole
    for value in secrets:  # none is left whole (the marker is not made of a and b)
        assert value.encode() not in whole


def test_a_scrubber_holds_back_only_what_a_secret_could_still_complete() -> None:
    scrubber = ByteScrubber(["secret-value"])
    assert scrubber.feed(b"hello world, secret-") == b"hello wor"  # 11 bytes wait: one short of a secret
    assert scrubber.feed(b"value!") == b"ld, <redacted>"  # a whole secret goes out at once
    assert scrubber.finish() == b"!"
    assert scrubber.replaced
    assert ByteScrubber([]).feed(b"anything") == b"anything"


def _start(env: dict[str, str]) -> TrialStart:
    trial = trial_id(lane="prompt", case_id="c", condition="none", provider="stub", trial=1, fingerprint="f")
    return TrialStart(run_id="r", at=1733000123.0, id=trial, model=None, workspace={"env": env})


def test_a_struct_without_a_secret_is_returned_as_it_is() -> None:
    event = _start({"MODE": "plain"})
    assert scrub_struct(event, ("sk-nowhere-here",)) is event
    assert scrub_struct(event, ()) is event


def test_a_struct_is_rebuilt_with_its_strings_and_keys_scrubbed_and_numbers_untouched() -> None:
    # The secret also reads like part of the timestamp: only strings are scrubbed, so the JSON stays valid.
    event = _start({"HARMLESS": "x 1733000123 y", "1733000123": "a 'quoted\" value"})
    cleaned = scrub_struct(event, ("1733000123", 'quoted" value'))
    assert isinstance(cleaned, TrialStart)
    assert cleaned.at == event.at and cleaned.id == event.id
    assert cleaned.workspace == {"env": {"HARMLESS": f"x {REDACTED} y", REDACTED: f"a '{REDACTED}"}}
    assert b"quoted" not in msgspec.json.encode(cleaned)


def test_the_suite_secrets_are_its_marked_values_and_every_secret_looking_env_value() -> None:
    boot = Command(argv=("true",), env={"BOOT_TOKEN": "bootstrap-token"})
    suite = Suite(
        root="evals",
        presets=(
            WorkspacePreset(id="ws", env={"PRESET_API_KEY": "preset-key", "MODE": "demo"}, bootstrap=(boot,)),
        ),
        conditions=(Condition(id="none", env={"COND_SECRET": "condition-secret"}),),
        cases=(
            ExecutionCase(
                id="c", category="x", task="t", budget=Budget(timeout_s=1), env={"CASE_TOKEN": "case-token"}
            ),
        ),
        secrets=("marked-value",),
    )
    assert suite_secrets(suite, ("from-the-user",)) == (
        "condition-secret",
        "bootstrap-token",
        "from-the-user",
        "marked-value",
        "case-token",
        "preset-key",
    )
