"""What a trial's sandbox hides and keeps: the user's home goes, what the trial needs to run stays.

The home folder holds what a trial must never see (SSH keys, cloud credentials, the user's own agent
settings and memories); it is replaced by an empty, read-only folder. What lives in it and a trial
needs is kept, read-only: the install prefix of every program on PATH (``~/.pyenv`` for
``~/.pyenv/shims``, ``~/.nvm/versions/node/v20`` for its ``bin``), Python's own prefixes, the suite,
the agent's install folder, and what the case declares.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pwd
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from ..workspaces.layout import TrialLayout
from .base import Network, SandboxSpec

# A PATH entry with one of these names is a prefix's bin folder: the prefix beside it is what runs.
_BIN_NAMES: Final = frozenset({"bin", "sbin", "shims"})


@functools.lru_cache(maxsize=1)
def user_private_folders() -> tuple[str, ...]:
    """The folders a trial sees empty: this user's home (by $HOME and by the password database) and
    their runtime folder (``/run/user/<uid>``: session bus, keyring and agent sockets)."""
    found: list[str] = []
    candidates = [os.environ.get("HOME", ""), f"/run/user/{os.getuid()}"]
    with contextlib.suppress(KeyError):  # a uid with no entry (a container's): $HOME is all there is
        candidates.append(pwd.getpwuid(os.getuid()).pw_dir)
    for folder in candidates:
        real = os.path.realpath(folder) if folder else ""
        if real and real != "/" and os.path.isdir(real) and real not in found:
            found.append(real)
    return tuple(found)


def install_root(program: str) -> str:
    """The folder a program needs besides itself: its package's ``node_modules`` parent for an npm
    package, the prefix for one in a ``bin`` folder, else its own folder."""
    real = os.path.realpath(program)
    parts = real.split(os.sep)
    if "node_modules" in parts:
        return os.sep.join(parts[: parts.index("node_modules")]) or os.sep
    folder = os.path.dirname(real)
    return os.path.dirname(folder) if os.path.basename(folder) in _BIN_NAMES else folder


def trial_spec(
    layout: TrialLayout,
    *,
    env: Mapping[str, str],
    suite_root: str,
    network: Network,
    programs: Sequence[str] = (),
    readable: Sequence[str] = (),
    writable: Sequence[str] = (),
    hidden: Sequence[str] | None = None,
) -> SandboxSpec:
    """The sandbox of one trial.

    ``programs`` are files and folders the agent runs or reads (the provider's ``sandbox_readable``):
    each keeps its install folder readable, or only itself where that folder would hold a hidden one
    (a script right in the home must not open the whole home). ``readable`` and ``writable`` are what the
    case or the run declares, kept as given. ``hidden`` defaults to ``user_private_folders()``.
    """
    hide = tuple(hidden) if hidden is not None else user_private_folders()
    extra_writable = list(writable)
    if not _below(layout.tmux_tmpdir, layout.trial_dir):
        extra_writable.append(layout.tmux_tmpdir)  # a short socket dir, outside the trial for its length
    return SandboxSpec(
        trial_dir=layout.trial_dir,
        tmp=layout.tmp,
        hidden=hide,
        readable=_kept_readable(env.get("PATH", ""), suite_root, tuple(programs), tuple(readable), hide),
        writable=tuple(_unique(extra_writable)),
        network=network,
    )


# Every trial of a run asks with the same PATH, suite and programs, and resolving them touches the disk
# (a realpath per PATH entry and program): worked out once, not once per trial.
@functools.lru_cache(maxsize=64)
def _kept_readable(
    path: str, suite_root: str, programs: tuple[str, ...], readable: tuple[str, ...], hide: tuple[str, ...]
) -> tuple[str, ...]:
    """What is mounted again inside the hidden folders and /tmp, read-only: see ``trial_spec``."""

    def holds_hidden(folder: str) -> bool:
        return any(_below(h, os.path.realpath(folder)) for h in hide)

    def widened(path: str, wide: str) -> list[str]:
        # The install folder if it holds nothing hidden, else the path alone if that holds nothing hidden.
        return [wide] if not holds_hidden(wide) else [] if holds_hidden(path) else [path]

    entries = [e for e in path.split(os.pathsep) if e]
    kept = [
        *(kept for e in entries for kept in widened(e, install_root_of_entry(e))),
        sys.prefix,
        sys.base_prefix,
        suite_root,
        *(kept for p in programs for kept in widened(p, install_root(p) if os.path.isfile(p) else p)),
        *readable,
    ]
    # The host's /tmp is the trial's own inside: what is kept from it is mounted again, like the home's.
    covered = (*hide, "/tmp")
    return tuple(f for f in _unique(kept) if any(_below(os.path.realpath(f), c) for c in covered))


def install_root_of_entry(entry: str) -> str:
    """A PATH entry's install prefix: ``~/.cargo`` for ``~/.cargo/bin``; the entry itself otherwise."""
    entry = os.path.abspath(entry)
    return os.path.dirname(entry) if os.path.basename(entry) in _BIN_NAMES else entry


def _below(path: str, folder: str) -> bool:
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _unique(paths: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(os.path.abspath(p) for p in paths))
