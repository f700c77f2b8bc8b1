"""Tests for skillgym.providers.stub: canned answers, honest failure, cached reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillgym.providers.stub import StubProvider

from .support import request

pytestmark = pytest.mark.anyio


def canned(suite_root: Path, relative: str, text: str) -> None:
    path = suite_root / "stubs" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


async def test_detect_is_always_available(suite_root: Path) -> None:
    detection = await StubProvider(suite_root).detect()
    assert detection.available
    assert detection.provider == "stub"


async def test_the_case_file_is_the_final_text(suite_root: Path, tmp_path: Path) -> None:
    canned(suite_root, "hello-prompt.md", "I would use tmux-tui.\n")
    req = request(tmp_path)
    result = await StubProvider(suite_root).invoke(req)
    assert result.ok
    assert result.trace.final_text == "I would use tmux-tui.\n"
    assert result.trace.tool_calls == ()
    assert result.trace.usage is None
    assert not Path(req.stdout_path).exists()  # no process ran: the answer lives in the trace
    assert not Path(req.stderr_path).exists()


async def test_a_condition_file_wins_over_the_case_file(suite_root: Path, tmp_path: Path) -> None:
    canned(suite_root, "hello-prompt.md", "generic")
    canned(suite_root, "hello-prompt/stale.md", "misled by stale guidance")
    provider = StubProvider(suite_root)
    stale = await provider.invoke(request(tmp_path, condition="stale"))
    other = await provider.invoke(request(tmp_path, condition="none"))
    assert stale.trace.final_text == "misled by stale guidance"
    assert other.trace.final_text == "generic"


async def test_without_canned_output_it_fails_honestly(suite_root: Path, tmp_path: Path) -> None:
    result = await StubProvider(suite_root).invoke(request(tmp_path, case_id="wait-for-output"))
    assert not result.ok
    assert result.error_class == "environment-error"  # the suite's configuration, not the agent's failure
    assert result.error_message is not None
    assert result.error_message.startswith(
        "stub provider has no canned output for case wait-for-output: add stubs/wait-for-output.md"
    )


async def test_each_file_is_read_once(suite_root: Path, tmp_path: Path) -> None:
    canned(suite_root, "hello-prompt.md", "cached")
    provider = StubProvider(suite_root)
    assert (await provider.invoke(request(tmp_path))).trace.final_text == "cached"
    (suite_root / "stubs" / "hello-prompt.md").unlink()
    assert (await provider.invoke(request(tmp_path))).trace.final_text == "cached"


async def test_an_unsafe_case_id_is_a_provider_error(suite_root: Path, tmp_path: Path) -> None:
    result = await StubProvider(suite_root).invoke(request(tmp_path, case_id="../secrets"))
    assert not result.ok
    assert result.error_message is not None
    assert "cannot be used as a file name" in result.error_message


async def test_the_case_file_is_read_once_for_every_condition(suite_root: Path, tmp_path: Path) -> None:
    canned(suite_root, "hello-prompt.md", "shared")
    provider = StubProvider(suite_root)
    assert (await provider.invoke(request(tmp_path, condition="none"))).trace.final_text == "shared"
    (suite_root / "stubs" / "hello-prompt.md").unlink()
    for condition in ("self-load", "preloaded", "stale"):
        assert (await provider.invoke(request(tmp_path, condition=condition))).trace.final_text == "shared"


async def test_an_unsafe_condition_id_is_refused_even_for_a_cached_case(
    suite_root: Path, tmp_path: Path
) -> None:
    canned(suite_root, "hello-prompt.md", "shared")
    canned(suite_root, "hello-prompt/none.md", "own")
    provider = StubProvider(suite_root)
    assert (await provider.invoke(request(tmp_path, condition="none"))).trace.final_text == "own"
    result = await provider.invoke(request(tmp_path, condition="../../x"))
    assert not result.ok
    assert result.error_message is not None
    assert "cannot be used as a file name" in result.error_message
