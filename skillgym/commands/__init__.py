"""Subcommands in modules of their own: each exposes ``add_parser(sub)`` and ``main(args, out, err)``."""
