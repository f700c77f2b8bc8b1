"""`skillgym run`'s executor flags: --executor, --ray-address and what each trial reserves and sends back."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from ..errors import UsageError
from .base import DEFAULT_EXECUTOR, TRANSFERS, ExecutorSettings

# The flags that only mean something on a cluster, by their argparse names.
_CLUSTER_FLAGS = ("ray_address", "trial_cpus", "trial_memory_mb", "trial_files")


def add_executor_flags(run: argparse.ArgumentParser) -> None:
    """Register where trials run on ``skillgym run``."""
    group = run.add_argument_group("executor (where trials run)")
    group.add_argument(
        "--executor",
        default=None,
        metavar="NAME",
        help=f"{{executors}} (default {DEFAULT_EXECUTOR}: this machine; ray: the nodes of a Ray cluster, "
        "pip install 'skillgym[ray]')",
    )
    group.add_argument(
        "--ray-address",
        metavar="HOST:PORT",
        default=None,
        help="the Ray cluster to join (default: $RAY_ADDRESS, else a Ray instance on this machine)",
    )
    group.add_argument(
        "--trial-cpus",
        type=_positive_float,
        default=None,
        metavar="N",
        help="CPUs each trial reserves on its node (default 1)",
    )
    group.add_argument(
        "--trial-memory-mb",
        type=_positive_int,
        default=None,
        metavar="MB",
        help="memory each trial reserves on its node (default: none reserved)",
    )
    group.add_argument(
        "--trial-files",
        choices=TRANSFERS,
        default=None,
        help="how a trial's folder reaches the run folder: shared (every node mounts --output at the same "
        "path), copy (sent back from the node), auto (shared where a node sees the run folder; default)",
    )


def given_executor_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The executor flags given on the command line, by their argparse names."""
    return {f: getattr(args, f) for f in ("executor", *_CLUSTER_FLAGS) if getattr(args, f) is not None}


def executor_settings(given: dict[str, Any], recorded: dict[str, Any] | None = None) -> ExecutorSettings:
    """The run's executor from the ``given`` flags (see ``given_executor_flags``), over ``recorded`` (a
    resumed run's own, from run.json) when there is one: a resume runs where the run ran unless told.

    A cluster flag without ``--executor ray`` is refused: it would be silently ignored.
    """
    base = msgspec.convert(recorded, ExecutorSettings) if recorded else ExecutorSettings()
    name = given.get("executor") or base.name
    if name != base.name:  # another executor: the old one's options do not carry over
        base = ExecutorSettings()
    cluster = [flag for flag in _CLUSTER_FLAGS if flag in given]
    if name == DEFAULT_EXECUTOR and cluster:
        shown = ", ".join(f"--{flag.replace('_', '-')}" for flag in cluster)
        raise UsageError(f"{shown} only apply to trials on a cluster: add --executor ray, or drop them")
    renamed = {"ray_address": "address", "trial_files": "transfer"}
    changes = {renamed.get(flag, flag): given[flag] for flag in cluster}
    return msgspec.structs.replace(base, name=name, **changes)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of CPUs, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of CPUs, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of megabytes, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of megabytes, got {text!r}")
    return value
