"""Subcommands that live in a module of their own: each exposes ``add_parser(sub)`` and ``main``."""
