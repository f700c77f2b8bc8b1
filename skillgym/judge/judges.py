"""Judges: a provider of the provider registry in judge mode (text only, no tools, in the sandbox).

``--judge claude:MODEL`` and ``--judge codex:MODEL`` run the real CLIs headless on the judge's prompt with
every tool turned off, one turn, in a folder of their own inside a sandbox. A provider that stands in for
an agent (``stub``) answers judge questions itself (``judge_answer``) without a process. ``replay`` plays
recorded verdicts only (see ``skillgym.judge.store``) and never asks anyone.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Final, Protocol

import msgspec

from ..errors import UsageError
from ..identity import TrialId, item_key
from ..model import Data
from ..plugins import PROVIDERS
from ..providers.base import Provider, ProviderRequest, ProviderSettings
from ..redact import with_secrets
from ..sandboxes.base import SandboxBackend, SandboxUnavailable
from ..sandboxes.none import NoSandbox
from ..sandboxes.spec import trial_spec
from ..trace import TokenUsage, with_total
from ..workspaces import hermetic_env, layout_for
from ..workspaces.env import home_dirs
from ..workspaces.removal import remove_tree
from .flags import DEFAULT_JUDGE_TIMEOUT_S
from .questions import Question as Question

REPLAY: Final = "replay"


class JudgeSpec(Data, frozen=True, kw_only=True):
    """Which judge: a provider name and its model (``claude:claude-sonnet-4-5``), as ``--judge`` names it.

    ``replay`` plays the verdicts recorded by ``recorded`` (a spec of its own) and asks no one.
    """

    provider: str
    model: str | None = None
    recorded: JudgeSpec | None = None

    @property
    def label(self) -> str:
        """``provider:model`` (``provider`` when no model is named): what cache keys and reports use."""
        if self.provider == REPLAY and self.recorded is not None:
            return self.recorded.label
        return f"{self.provider}:{self.model}" if self.model else self.provider


def parse_spec(text: str, *, flag: str = "--judge") -> JudgeSpec:
    """``PROVIDER[:MODEL]`` or ``replay[:PROVIDER[:MODEL]]``; a ``UsageError`` naming the fix otherwise."""
    given = text.strip()
    name, _, model = given.partition(":")
    if not name:
        raise UsageError(f"{flag} {text!r} names no judge; write PROVIDER[:MODEL], for example claude:sonnet")
    if name == REPLAY:
        return JudgeSpec(provider=REPLAY, recorded=parse_spec(model, flag=flag) if model else None)
    PROVIDERS.get(name)  # an unknown name is a UsageError listing the valid providers
    if ":" in model:
        raise UsageError(f"{flag} {text!r}: one model after the provider, as in {name}:MODEL")
    return JudgeSpec(provider=name, model=model or None)


def _JUDGE_ID(provider: str) -> TrialId:
    """The identity a judge request carries: not a trial's (the judge never learns which trial it grades)."""
    key = item_key("prompt", "judge", "judge", provider, 1)
    return TrialId(
        key=key, lane="prompt", case_id="judge", condition="judge", provider=provider, trial=1, fingerprint=""
    )


class Answer(Data, frozen=True, kw_only=True):
    """What a judge said: its raw text, the usage it reported, and an error when it gave no answer."""

    text: str = ""
    model: str | None = None
    usage: TokenUsage | None = None
    error: str = ""
    duration_s: float = 0.0


class Judge(Protocol):
    """Answers judge questions; ``calls`` counts the questions that reached it (not the store), and
    ``caches`` says whether its answers are worth storing (a stand-in's are not)."""

    spec: JudgeSpec
    calls: int
    caches: bool

    async def answer(self, question: Question, *, folder: str) -> Answer: ...


class StandIn(Protocol):
    """A provider that answers judge questions itself (the ``stub``)."""

    def judge_answer(self, question: Question) -> str: ...


class ProviderJudge:
    """A provider of the registry in judge mode: text only, no tools, one turn, in its own sandbox."""

    def __init__(
        self,
        spec: JudgeSpec,
        provider: Provider,
        *,
        suite_root: str,
        sandbox: SandboxBackend | None = None,
        timeout_s: float = DEFAULT_JUDGE_TIMEOUT_S,
    ) -> None:
        self.spec = spec
        self.calls = 0
        self.caches = getattr(provider, "judge_answer", None) is None
        self._provider = provider
        self._suite_root = suite_root
        self._sandbox = sandbox or NoSandbox()
        self._timeout_s = timeout_s

    async def answer(self, question: Question, *, folder: str) -> Answer:
        self.calls += 1
        started = time.monotonic()
        stand_in = getattr(self._provider, "judge_answer", None)
        if stand_in is not None:
            text = stand_in(question)
            return Answer(text=text, model=self.spec.model, duration_s=time.monotonic() - started)
        try:
            return await self._ask_cli(question, folder, started)
        finally:
            # The judge's private home and empty workspace are of no use afterwards; its logs stay.
            layout = layout_for(folder)
            for spent in (layout.home, layout.workspace, layout.tmp, layout.fixture_log_dir):
                remove_tree(Path(spent))

    async def _ask_cli(self, question: Question, folder: str, started: float) -> Answer:
        provider = self._provider
        layout = layout_for(folder)
        for made in (
            layout.workspace,
            layout.home,
            *(os.path.join(layout.home, d) for d in home_dirs(provider.home_env).values()),
        ):
            os.makedirs(made, exist_ok=True)
        os.makedirs(layout.tmp, mode=0o700, exist_ok=True)
        passthrough = {k: os.environ[k] for k in provider.passthrough_env if k in os.environ}
        env = hermetic_env(
            layout,
            trial_id=f"judge/{os.path.basename(folder)}",
            suite_root=Path(self._suite_root),
            passthrough=passthrough,
            preset_env={},
            lane="judge",
            condition_env={},  # blind: nothing of the trial's condition reaches the judge
            case_env={},
            home_env=provider.home_env,
        )
        sandbox = self._sandbox.open(
            trial_spec(
                layout,
                env=env,
                suite_root=self._suite_root,
                network=provider.network,
                programs=provider.sandbox_readable,
            )
        )
        request = ProviderRequest(
            id=_JUDGE_ID(provider.name),
            model=self.spec.model,
            prompt=question.prompt,
            workspace=layout.workspace,
            trial_dir=layout.trial_dir,
            env=env,
            timeout_s=self._timeout_s,
            max_turns=1,
            stdout_path=layout.stdout,
            stderr_path=layout.stderr,
            sandbox=sandbox,
            text_only=True,
            secrets=with_secrets((), passthrough),  # scrubbed from the judge's logs as from a trial's
        )
        try:
            result = await provider.invoke(request)
        except SandboxUnavailable as exc:
            return Answer(error=f"the judge's sandbox cannot start: {exc}")
        except Exception as exc:  # an adapter bug is this question's error, not the run's crash
            return Answer(error=f"judge provider {provider.name!r} raised {type(exc).__name__}: {exc}")
        finally:
            await sandbox.close()
        usage = with_total(result.trace.usage) if result.trace.usage is not None else None
        elapsed = time.monotonic() - started
        if not result.ok:
            return Answer(
                text=result.trace.final_text,
                model=result.model,
                usage=usage,
                error=result.error_message or result.error_class or "the judge's provider failed",
                duration_s=elapsed,
            )
        return Answer(text=result.trace.final_text, model=result.model, usage=usage, duration_s=elapsed)


class ReplayJudge:
    """Plays recorded verdicts only: every question must be answered by the store; it is never called."""

    def __init__(self, spec: JudgeSpec) -> None:
        self.spec = spec
        self.calls = 0
        self.caches = False

    async def answer(self, question: Question, *, folder: str) -> Answer:
        return Answer(
            error=(
                f"no recorded verdict of {self.spec.label} for this question; record one with "
                f"--judge {self.spec.label} --judge-record"
            )
        )


async def open_judge(
    spec: JudgeSpec,
    *,
    suite_root: str,
    sandbox: SandboxBackend | None = None,
    timeout_s: float = DEFAULT_JUDGE_TIMEOUT_S,
) -> ProviderJudge | ReplayJudge:
    """The judge ``spec`` names, detected here; a ``UsageError`` saying how to fix it when it cannot run."""
    if spec.provider == REPLAY:
        if spec.recorded is None:
            raise UsageError(
                "--judge replay plays the verdicts of one judge: the suite's judge(...) names it, "
                "or write --judge replay:PROVIDER:MODEL"
            )
        return ReplayJudge(spec)
    provider_class: Any = PROVIDERS.get(spec.provider)
    provider: Provider = provider_class.from_settings(
        ProviderSettings(suite_root=suite_root, model=spec.model)
    )
    if getattr(provider, "judge_answer", None) is None:
        if not getattr(provider, "text_only", False):
            raise UsageError(
                f"provider {spec.provider!r} cannot judge: it has no text-only mode (every tool off) and no "
                "judge stand-in; use --judge claude:MODEL, codex:MODEL or stub"
            )
        detected = await provider.detect()
        if not detected.available:
            raise UsageError(f"judge {spec.label} cannot run here: {detected.problem}")
    return ProviderJudge(spec, provider, suite_root=suite_root, sandbox=sandbox, timeout_s=timeout_s)


def usage_sum(usages: list[TokenUsage | None]) -> TokenUsage | None:
    """The field-wise sum of ``usages``; a field no usage reported stays None (never guessed as 0)."""
    known = [u for u in usages if u is not None]
    if not known:
        return None

    def total(name: str) -> int | None:
        values = [getattr(u, name) for u in known if getattr(u, name) is not None]
        return sum(values) if values else None

    return msgspec.structs.replace(
        TokenUsage(),
        **{f: total(f) for f in ("input", "output", "cache_read", "cache_write", "reasoning", "total")},
    )
