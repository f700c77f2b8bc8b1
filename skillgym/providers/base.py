"""The provider contract: detect once per run, then invoke once per trial and return a Trace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Protocol

from ..identity import TrialId
from ..model import Data
from ..results import ErrorClass
from ..sandboxes.base import UNSANDBOXED, Network, TrialSandbox
from ..trace import Trace


class Detection(Data, frozen=True, kw_only=True):
    """Whether a provider can run here; ``problem`` says what is wrong and how to fix it."""

    provider: str
    available: bool
    version: str | None = None
    default_model: str | None = None
    problem: str | None = None
    note: str | None = None  # worth saying at run start (what a stand-in plays back, for instance)


class ProviderRequest(Data, frozen=True, kw_only=True):
    """Everything a provider needs for one trial; paths are absolute."""

    id: TrialId
    model: str | None
    prompt: str
    workspace: str
    trial_dir: str
    env: dict[str, str]
    timeout_s: float
    max_turns: int | None = None
    stdout_path: str
    stderr_path: str
    record_path: str | None = None  # --record: where to save the raw stream as a cassette
    # The trial's secrets, scrubbed from what the provider writes: its streams as they come, a cassette.
    secrets: tuple[str, ...] = ()
    # Every process of the trial runs inside it: start them with ``sandbox.run`` (``run_process``'s twin).
    sandbox: TrialSandbox = UNSANDBOXED
    # Judge mode: answer in text only, with every tool of the agent turned off (see skillgym.judge).
    text_only: bool = False


class ProviderResult(Data, frozen=True, kw_only=True):
    """The outcome of one invocation; a failure is data (error class and message), never a raise."""

    ok: bool
    trace: Trace
    model: str | None = None
    exit_code: int | None = None
    error_class: ErrorClass | None = None
    error_message: str | None = None
    cassette: str | None = None  # the cassette that was replayed or recorded, if any
    warnings: tuple[str, ...] = ()  # worth showing, not a failure (for example a stale cassette)


class ProviderSettings(Data, frozen=True, kw_only=True):
    """Provider options from the command line; each provider reads only its own."""

    suite_root: str = "."
    replay_source: str | None = None  # "provider/model": which cassettes replay plays
    model: str | None = None  # --model: for replay, which recorded model's cassettes (must match the source)
    agent_command: str | None = None  # the command provider's program and arguments


# Trials at once for a provider that does not say: an agent CLI holds a few hundred MB and shares its
# model's rate limits, so a laptop runs a few at a time.
DEFAULT_CONCURRENCY: Final = 4


def default_concurrency(provider: object) -> int:
    """How many of ``provider``'s trials run at once unless ``--concurrency`` says: its optional
    ``default_concurrency`` attribute (a stand-in whose trials mostly wait sets a higher one), else 4."""
    value = getattr(provider, "default_concurrency", DEFAULT_CONCURRENCY)
    return value if isinstance(value, int) and value >= 1 else DEFAULT_CONCURRENCY


class Provider(Protocol):
    """An adapter that runs an agent (or stands in for one).

    The properties are plain class attributes in a provider (``name = "claude"``); they are read-only
    here so that a provider may narrow their types.
    """

    @property
    def name(self) -> str: ...

    @property
    def skill_dirs(self) -> tuple[str, ...]:
        """Where the agent discovers skills natively, relative to the workspace (self-load installs there)."""
        ...

    @property
    def runs_agent(self) -> bool:
        """True when invoking starts an agent process, which needs a workspace and a hermetic home even
        in the prompt lane; stand-ins that only read files (stub, replay of a text answer) skip both."""
        ...

    @property
    def passthrough_env(self) -> tuple[str, ...]:
        """Credentials and endpoint settings copied from skillgym's own environment into the otherwise
        hermetic trial env (for example ANTHROPIC_API_KEY); their values are scrubbed from every output."""
        ...

    @property
    def home_env(self) -> Mapping[str, str]:
        """Harness variables that point into the trial's private home, as variable -> path relative to
        that home (``{"CODEX_HOME": ".codex"}``): the workspace code creates them and they always win."""
        ...

    @property
    def network(self) -> Network:
        """The network its trials get unless the run (``--network``) or the case says otherwise: ``host``
        for an agent that calls its model's API, ``none`` for a stand-in."""
        ...

    @property
    def sandbox_readable(self) -> tuple[str, ...]:
        """Files and folders its agent runs or reads that a sandbox would hide (its executable in the
        user's home): each keeps its install folder readable; read after ``detect``."""
        ...

    @property
    def stream_format(self) -> str | None:
        """The stream format (a name in ``plugins.STREAM_FORMATS``) its raw output and cassettes are read
        with; None when it records none."""
        ...

    async def detect(self) -> Detection: ...

    async def invoke(self, request: ProviderRequest) -> ProviderResult: ...


class ProviderClass(Protocol):
    """What ``@provider`` registers: a class that builds its provider from the run's settings."""

    @property
    def name(self) -> str: ...

    def from_settings(self, settings: ProviderSettings, /) -> Provider:
        """A provider built from the run's settings (a classmethod on the provider class)."""
        ...
