#!/usr/bin/env python3
"""record.py: record a tmux pane to an asciicast v2 file (standard library only).

    record.py start SESSION OUT.cast [MAX_SECONDS]   start recording in the background, return once the
                                                     screen at start is recorded
    record.py stop OUT.cast                          take a last frame, stop, and print a summary
    record.py run SESSION OUT.cast [MAX_SECONDS]     record in the foreground until the session ends

The recorder captures the pane (with colours) every --interval seconds, writes a frame whenever the screen
changes and a resize event whenever the pane's size does. It stops on `stop`, when the session ends, or
after MAX_SECONDS (default 120). The file is valid after every frame.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path


def tmux(socket: str, *args: str) -> str | None:
    done = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else None


def pane_size(socket: str, session: str) -> str | None:
    size = tmux(socket, "display-message", "-p", "-t", session, "#{pane_width}x#{pane_height}")
    return size.strip() if size else None


def record(session: str, out_path: str, max_seconds: float, interval: float, socket: str) -> int:
    size = pane_size(socket, session)
    if size is None:
        print(f"record: no session {session!r} on socket {socket!r}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _s, _f: stop.set())
    cols, rows = (int(n) for n in size.split("x"))
    started = time.time()
    header = {
        "version": 2,
        "width": cols,
        "height": rows,
        "timestamp": int(started),
        "title": session,
        "env": {
            "TERM": os.environ.get("TERM", "xterm-256color"),
            "SHELL": os.environ.get("SHELL", "/bin/sh"),
        },
    }
    with open(out_path, "w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        out.flush()
        last_frame, last_size = None, size
        while True:
            final = stop.is_set() or time.time() - started >= max_seconds
            now = round(time.time() - started, 3)
            size = pane_size(socket, session)
            frame = tmux(socket, "capture-pane", "-e", "-p", "-t", session)
            if size is None or frame is None:
                break  # the session ended: the recording is complete
            if size != last_size:
                last_size = size
                out.write(json.dumps([now, "r", size]) + "\n")
            if frame != last_frame:
                last_frame = frame
                data = "\x1b[H\x1b[2J" + frame.rstrip("\n").replace("\n", "\r\n")
                out.write(json.dumps([now, "o", data]) + "\n")
            out.flush()
            if final:
                break
            stop.wait(interval)  # the sampling period; `stop` wakes it early
    return 0


def summary(out_path: str) -> str:
    lines = Path(out_path).read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines[1:] if line.strip()]
    frames = sum(1 for e in events if e[1] == "o")
    length = events[-1][0] if events else 0.0
    return f"record: {out_path}: asciicast v2, {frames} frame(s), {length:.1f}s"


def has_frame(out_path: Path) -> bool:
    try:
        return out_path.read_text(encoding="utf-8").count("\n") >= 2  # the header, then a whole frame
    except OSError:
        return False


def start(args: argparse.Namespace) -> int:
    if pane_size(args.socket, args.session) is None:
        print(f"record: no session {args.session!r} on socket {args.socket!r}", file=sys.stderr)
        return 2
    pid_file, out = Path(args.out + ".pid"), Path(args.out)
    out.unlink(missing_ok=True)  # an earlier recording there must not pass for this one's first frame
    if os.fork() == 0:
        # A new session, so the recorder outlives the shell that started it (and its process group).
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        pid_file.write_text(str(os.getpid()))
        os._exit(record(args.session, args.out, args.max_seconds, args.interval, args.socket))
    deadline = time.time() + 5
    while time.time() < deadline and not (pid_file.exists() and has_frame(out)):
        time.sleep(0.02)  # until the screen at start is recorded: what follows start comes after it
    if not has_frame(out):
        print("record: the recorder did not start", file=sys.stderr)
        return 1
    print(f"record: recording {args.session} to {args.out} (stop with: record.sh stop {args.out})")
    return 0


def stop(args: argparse.Namespace) -> int:
    pid_file = Path(args.out + ".pid")
    try:
        pid = int(pid_file.read_text())
    except (OSError, ValueError):
        print(f"record: no recording running for {args.out}", file=sys.stderr)
        return 1
    try:
        os.kill(pid, signal.SIGTERM)
        deadline = time.time() + 5
        while time.time() < deadline:
            os.kill(pid, 0)
            time.sleep(0.02)  # until the recorder has written its last frame and exited
    except ProcessLookupError:
        pass
    pid_file.unlink(missing_ok=True)
    print(summary(args.out))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description="record a tmux pane to an asciicast v2 file")
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--socket", default=os.environ.get("TMUX_SOCKET", "skillgym"))
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("start", "run"):
        one = sub.add_parser(name)
        one.add_argument("session")
        one.add_argument("out")
        one.add_argument("max_seconds", nargs="?", type=float, default=120.0)
    sub.add_parser("stop").add_argument("out")
    args = parser.parse_args()
    if args.command == "start":
        return start(args)
    if args.command == "stop":
        return stop(args)
    code = record(args.session, args.out, args.max_seconds, args.interval, args.socket)
    if code == 0:
        print(summary(args.out))
    return code


if __name__ == "__main__":
    sys.exit(main())
