"""Command-line commands, one module each: its parser and its main."""
