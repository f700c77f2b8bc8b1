"""Executors: where a run's trials run (see ``base``); ``local`` by default, ``ray`` for a cluster."""

from __future__ import annotations

from .base import (
    DEFAULT_EXECUTOR,
    TRANSFERS,
    Executor,
    ExecutorSettings,
    ExecutorUnavailable,
    Transfer,
    make_executor,
)

__all__ = (
    "DEFAULT_EXECUTOR",
    "TRANSFERS",
    "Executor",
    "ExecutorSettings",
    "ExecutorUnavailable",
    "Transfer",
    "make_executor",
)
