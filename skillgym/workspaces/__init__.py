"""Per-trial workspaces: layout, hermetic environment, materialization and cleanup."""

from __future__ import annotations

from .cleanup import CleanupReport as CleanupReport
from .cleanup import cleanup as cleanup
from .env import BASE_KEYS as BASE_KEYS
from .env import ENV_ORDER as ENV_ORDER
from .env import ENV_ORDER_TEXT as ENV_ORDER_TEXT
from .env import HARNESS_KEYS as HARNESS_KEYS
from .env import TRIAL_ID_VAR as TRIAL_ID_VAR
from .env import harness_env as harness_env
from .env import hermetic_env as hermetic_env
from .layout import TrialLayout as TrialLayout
from .layout import layout_for as layout_for
from .materialize import EnvironmentSetupError as EnvironmentSetupError
from .materialize import Materialized as Materialized
from .materialize import injected_text as injected_text
from .materialize import materialize as materialize
from .paths import UnsafePathError as UnsafePathError
from .removal import background_removal as background_removal
from .removal import remove_tree as remove_tree

__all__ = (
    "BASE_KEYS",
    "ENV_ORDER",
    "ENV_ORDER_TEXT",
    "HARNESS_KEYS",
    "TRIAL_ID_VAR",
    "CleanupReport",
    "EnvironmentSetupError",
    "Materialized",
    "TrialLayout",
    "UnsafePathError",
    "background_removal",
    "cleanup",
    "harness_env",
    "hermetic_env",
    "injected_text",
    "layout_for",
    "materialize",
    "remove_tree",
)
