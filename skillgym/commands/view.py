"""``skillgym view [RUN_DIR]``: open a run's report.html in a browser, or serve its folder on 127.0.0.1."""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import sys
import webbrowser
from pathlib import Path
from typing import Any

from rich.console import Console

from ..errors import ExitCode, UsageError
from ..latest import LATEST, latest_run_dir
from ..report.html import HTML_NAME


def add_parser(sub: Any) -> None:
    """Add ``view`` to the command line's subcommands."""
    view = sub.add_parser(
        "view",
        help="open a run's report.html (the latest run by default), or serve it on 127.0.0.1",
        description="Open RUN_DIR/report.html in a browser. Without a browser that can open files (no "
        "display, or --serve) the run folder is served on 127.0.0.1 and the URL printed; Ctrl-C stops it.",
    )
    view.set_defaults(handler=main)
    view.add_argument(
        "run_dir", type=Path, nargs="?", metavar="RUN_DIR", help=f"a run folder (default: OUTPUT/{LATEST})"
    )
    view.add_argument(
        "--output", type=Path, default=Path("runs"), metavar="DIR", help="where runs are (default: runs)"
    )
    view.add_argument("--serve", action="store_true", help="serve the run folder instead of opening a file")
    view.add_argument("--port", type=int, default=0, help="the port to serve on (default: any free one)")


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Open (or serve) the report; returns the exit code."""
    run_dir = resolve_run(args.run_dir, args.output)
    page = run_dir / HTML_NAME
    if not args.serve and can_open_files():
        if webbrowser.open(page.resolve().as_uri()):
            out.print(f"opened {page}", markup=False)
            return ExitCode.OK
        err.print("skillgym: no browser could open the file; serving the run folder instead", markup=False)
    return serve(run_dir, args.port, out)


def resolve_run(given: Path | None, output: Path) -> Path:
    """The run folder to show: ``given``, else the latest under ``output``; a UsageError saying the fix."""
    if given is None:
        from ..snapshots.commands import latest_run

        found = latest_run_dir(output) or latest_run(output)
        if found is None:
            raise UsageError(
                f"no run under {output}/: run `skillgym run` first, or pass a run folder (or --output DIR)"
            )
        given = found
    if not given.is_dir():
        raise UsageError(f"{given} is not a folder; pass a run folder such as runs/<run-id>")
    if not (given / "events.jsonl").is_file() and (newest := latest_run_dir(given)) is not None:
        given = newest  # the output folder itself (`skillgym view runs`): its newest run
    if not (given / HTML_NAME).is_file():
        if (given / "events.jsonl").is_file():
            raise UsageError(
                f"{given} has no {HTML_NAME} (a run from before it, or one still going): "
                f"write it with `skillgym report {given}`"
            )
        raise UsageError(f"{given} is not a skillgym run folder (no events.jsonl, no {HTML_NAME})")
    return given


def can_open_files() -> bool:
    """Whether a browser here can be asked to open a file: not on a Linux box without a display."""
    display = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    if sys.platform.startswith("linux") and not display:
        return bool(os.environ.get("BROWSER"))  # a browser the user named knows what it can do
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files; no request log on stderr (the printed URL is all the user needs)."""

    def log_message(self, format: str, *args: Any) -> None:
        return None


def serve(run_dir: Path, port: int, out: Console) -> int:
    """Serve ``run_dir`` on 127.0.0.1 until Ctrl-C; only that folder, read-only (GET and HEAD)."""
    handler = functools.partial(_QuietHandler, directory=str(run_dir.resolve()))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise UsageError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}; try --port 0") from exc
    with server:
        bound = server.server_address[1]
        out.print(f"serving {run_dir} at http://127.0.0.1:{bound}/{HTML_NAME} (Ctrl-C to stop)", markup=False)
        out.file.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            out.print("stopped", markup=False)
    return ExitCode.OK
