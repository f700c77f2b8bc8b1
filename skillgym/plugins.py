"""The plug-in registry: providers, stream formats, reporters, verifier kinds, sandboxes and executors.

Every plug-in registers itself with a decorator when its module is imported. ``load_plugins`` imports
the built-in modules and then every entry point of the group ``skillgym`` (a module or an object in a
third-party package), so a package can add a provider or a reporter with no change to skillgym::

    [project.entry-points.skillgym]
    my-agent = "my_package.skillgym_agent"

The command line's choices, help texts and "valid providers: ..." messages come from these registries,
so they never drift from what is installed.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from .errors import SkillgymError, UsageError

if TYPE_CHECKING:
    from .executors.base import Executor
    from .providers.base import ProviderClass
    from .providers.tracefmt import StreamParser
    from .reporters.base import ReporterPlugin
    from .sandboxes.base import SandboxBackend

ENTRY_POINT_GROUP: Final = "skillgym"
# Every module of these packages is imported by ``load_plugins`` before any entry point, so a built-in
# provider, stream format or reporter is one new file in its package and nothing else.
BUILTIN_PACKAGES: Final = (
    "skillgym.providers",
    "skillgym.reporters",
    "skillgym.sandboxes",
    "skillgym.executors",
)
BUILTIN_MODULES: Final = ("skillgym.grading.verifiers",)

T = TypeVar("T")


class PluginError(SkillgymError):
    """A plug-in cannot be registered or loaded: a name taken twice, or an entry point that fails."""


class Registry(Generic[T]):
    """Named plug-ins of one kind, kept in registration order."""

    def __init__(self, kind: str, flag: str | None = None) -> None:
        self.kind = kind
        self.flag = flag  # the command-line flag that names one, for error messages
        self._entries: dict[str, T] = {}
        self._origins: dict[str, str] = {}

    def add(self, name: str, value: T, *, origin: str) -> None:
        """Register ``value`` as ``name``; the same name from another place is an error naming both."""
        if not name or not isinstance(name, str):
            raise PluginError(f"{origin}: a {self.kind} needs a non-empty string name, got {name!r}")
        known = self._entries.get(name)
        if known is not None and known is not value:
            raise PluginError(
                f"{self.kind} {name!r} is registered twice: by {self._origins[name]} and by {origin}; "
                f"rename one of them"
            )
        self._entries[name] = value
        self._origins[name] = origin

    def get(self, name: str) -> T:
        """The plug-in called ``name``; a ``UsageError`` listing the valid names otherwise."""
        load_plugins()
        try:
            return self._entries[name]
        except KeyError:
            given = f" given to {self.flag}" if self.flag else ""
            raise UsageError(
                f"unknown {self.kind} {name!r}{given}; valid {self.kind}s: {', '.join(self.names())}"
            ) from None

    def names(self) -> tuple[str, ...]:
        """Every registered name, sorted: skillgym's own first, then those of other packages."""
        load_plugins()
        return tuple(sorted(self._entries, key=lambda n: (not self._origins[n].startswith("skillgym."), n)))

    def origin(self, name: str) -> str:
        """Where ``name`` was registered (``module.qualname``)."""
        return self._origins[name]

    def __contains__(self, name: object) -> bool:
        load_plugins()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def remove(self, name: str) -> None:
        """Forget ``name`` (for tests that register a throw-away plug-in)."""
        self._entries.pop(name, None)
        self._origins.pop(name, None)


PROVIDERS: Final[Registry[ProviderClass]] = Registry("provider", "--provider")
STREAM_FORMATS: Final[Registry[StreamParser]] = Registry("stream format")
REPORTERS: Final[Registry[ReporterPlugin]] = Registry("reporter", "--reporter")
VERIFIER_KINDS: Final[Registry[Callable[..., Any]]] = Registry("verifier kind")
SANDBOXES: Final[Registry[type[SandboxBackend]]] = Registry("sandbox", "--sandbox")
EXECUTORS: Final[Registry[type[Executor]]] = Registry("executor", "--executor")


def _origin(obj: object) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__name__', repr(obj))}"


P = TypeVar("P", bound="ProviderClass")


def provider(cls: P) -> P:
    """Class decorator: register a provider under its ``name`` attribute."""
    PROVIDERS.add(cls.name, cls, origin=_origin(cls))
    return cls


F = TypeVar("F", bound=Callable[..., Any])


def stream_format(name: str) -> Callable[[F], F]:
    """Register a whole-stream parser (``Iterable[bytes] -> Trace``) as the format ``name``.

    Cassettes name their format in their header; replay parses them with the parser registered here,
    the same one the live provider's stream is read with.
    """

    def register(parser: F) -> F:
        STREAM_FORMATS.add(name, parser, origin=_origin(parser))
        return parser

    return register


R = TypeVar("R", bound="ReporterPlugin")


def reporter(cls: R) -> R:
    """Class decorator: register a reporter plug-in under its ``name`` attribute."""
    REPORTERS.add(cls.name, cls, origin=_origin(cls))
    return cls


def verifier_kind(tag: str) -> Callable[[F], F]:
    """Register the function that judges verifiers whose tag is ``tag``."""

    def register(judge: F) -> F:
        VERIFIER_KINDS.add(tag, judge, origin=_origin(judge))
        return judge

    return register


S = TypeVar("S", bound="type[SandboxBackend]")


def sandbox_backend(cls: S) -> S:
    """Class decorator: register a sandbox backend under its ``name`` attribute (``--sandbox NAME``)."""
    SANDBOXES.add(cls.name, cls, origin=_origin(cls))
    return cls


E = TypeVar("E", bound="type[Executor]")


def executor(cls: E) -> E:
    """Class decorator: register an executor under its ``name`` attribute (``--executor NAME``)."""
    EXECUTORS.add(cls.name, cls, origin=_origin(cls))
    return cls


_loaded = False
_loading = False


def load_plugins() -> None:
    """Import the built-in plug-ins, then every ``skillgym`` entry point; only the first call works.

    An entry point that cannot be imported is a ``PluginError`` naming it and its package, so a broken
    third-party package is reported as such rather than as a missing provider.
    """
    global _loaded, _loading
    if _loaded or _loading:
        return
    _loading = True
    try:
        for package in BUILTIN_PACKAGES:
            for info in pkgutil.iter_modules(importlib.import_module(package).__path__, prefix=f"{package}."):
                importlib.import_module(info.name)
        for module in BUILTIN_MODULES:
            importlib.import_module(module)
        for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
            where = f"entry point {point.name!r} ({point.value}) of {_distribution(point)}"
            try:
                point.load()
            except Exception as exc:
                raise PluginError(
                    f"the skillgym plug-in {where} cannot be loaded: {type(exc).__name__}: {exc}; fix or "
                    "uninstall that package"
                ) from exc
        _loaded = True
    finally:
        _loading = False


def _distribution(point: Any) -> str:
    dist = getattr(point, "dist", None)
    return f"package {dist.name} {dist.version}" if dist is not None else "an unknown package"
