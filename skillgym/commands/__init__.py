"""Subcommands in modules of their own: each ``add_parser(sub)`` adds its parser, whose ``handler`` is the
module's ``main(args, out, err)``."""

from __future__ import annotations

from . import compare, export, import_evals, merge, plan, view

# In the order `skillgym --help` lists them, after the commands the cli module defines itself.
COMMANDS = (compare, plan, import_evals, export, merge, view)
