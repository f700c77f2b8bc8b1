"""Command-line commands that live in modules of their own: each exposes ``add_parser`` and ``main``."""
