"""``python -m skillgym``: the engine that the nox sessions forward to."""

from __future__ import annotations

from .cli import main

raise SystemExit(main())
