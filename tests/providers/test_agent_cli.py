"""Tests for skillgym.providers.agent_cli: what a CLI provider must write, and the shared detection."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillgym.providers.agent_cli import AgentCliProvider, CliRun, Failure
from skillgym.providers.base import ProviderRequest

pytestmark = pytest.mark.anyio


class Half(AgentCliProvider):
    """A provider that forgot its parser."""

    name = program = "half"
    env_var, install = "SKILLGYM_HALF", "install half"

    def argv(self, executable: str, request: ProviderRequest) -> tuple[list[str], bytes | None]:
        return [executable], None

    def classify(self, ran: CliRun, parser: object, request: ProviderRequest) -> Failure | None:
        return None


def test_a_provider_missing_a_required_method_cannot_be_built() -> None:
    with pytest.raises(TypeError, match=r"abstract method.*parser"):
        Half()  # type: ignore[abstract]


class Keyed(Half):
    credentials = ("HALF_KEY", "HALF_TOKEN")
    login = "a `half login` session"

    def parser(self) -> object:
        return object()


async def test_a_cli_that_is_not_there_is_named_with_how_to_install_it() -> None:
    detection = await Keyed("/nonexistent/half").detect()
    assert (detection.available, detection.problem) == (
        False,
        "the half CLI '/nonexistent/half' was not found at that path; install it (install half) or point "
        "SKILLGYM_HALF at the executable",
    )


async def test_a_missing_credential_is_named_with_what_the_private_home_hides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = tmp_path / "half"
    cli.write_text("#!/bin/sh\necho half 1.2.3\n")
    cli.chmod(0o755)
    monkeypatch.delenv("HALF_KEY", raising=False)
    monkeypatch.delenv("HALF_TOKEN", raising=False)
    detection = await Keyed(str(cli)).detect()
    assert (detection.available, detection.version) == (False, "1.2.3")
    assert detection.problem == (
        "no credentials for half: set HALF_KEY or HALF_TOKEN (trials run in a private home, so a "
        "`half login` session is not used)"
    )
    monkeypatch.setenv("HALF_TOKEN", "t")
    assert (await Keyed(str(cli)).detect()).available
