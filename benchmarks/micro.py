"""The event loop's own cost of the low-level paths, in one process: children and bus events.

Usage: python benchmarks/micro.py children|bus [CHECKOUT]

`children`: 400 `run_process` calls, 50 at a time, of a shell that reads its stdin and prints a line;
`bus`: 20,000 rounds of four events from 64 workers (as a stub run posts them) to three subscribers. Each
prints the CPU seconds of this process, which is the loop's: the children's own CPU is not counted.
CHECKOUT (default: this one) is the skillgym checkout imported, so two checkouts can be compared in turn.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import anyio.lowlevel

CHECKOUT = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else Path(__file__).resolve().parent.parent
sys.path.insert(0, str(CHECKOUT))

from skillgym.bus import running_bus  # noqa: E402  (from CHECKOUT)
from skillgym.events import Event, LaneStart  # noqa: E402
from skillgym.process import run_process  # noqa: E402


async def children() -> str:
    limit = anyio.Semaphore(50)
    env = dict(os.environ)

    async def one() -> None:
        async with limit:
            argv = ["sh", "-c", "cat >/dev/null; echo done"]
            result = await run_process(
                argv,
                cwd=Path.cwd(),
                env=env,
                timeout_s=30,
                stdin_data=b"prompt",
                on_stdout_line=lambda _: None,
            )
            assert result.exit_code == 0, result

    start = time.process_time()
    async with anyio.create_task_group() as tg:
        for _ in range(400):
            tg.start_soon(one)
    return f"400 children, 50 at a time: {time.process_time() - start:.3f} s of the loop's CPU"


class _Counter:
    def __init__(self, name: str) -> None:
        self.name = name
        self.seen = 0

    async def on_event(self, event: Event) -> None:
        self.seen += 1

    async def finish(self) -> None:
        pass


class _Flushing(_Counter):
    async def flush(self) -> None:
        pass


async def bus() -> str:
    event = LaneStart(run_id="r", at=0.0, lane="prompt", total_trials=1)
    subscribers = [_Counter("a"), _Flushing("b"), _Counter("c")]
    left = 20_000
    start = time.process_time()
    async with running_bus(*subscribers) as events:

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                await anyio.lowlevel.checkpoint()
                await events.room()
                for _ in range(4):
                    events.post(event)

        async with anyio.create_task_group() as tg:
            for _ in range(64):
                tg.start_soon(worker)
    assert all(s.seen == 80_000 for s in subscribers)
    return f"80,000 events to 3 subscribers: {time.process_time() - start:.3f} s of CPU"


def main() -> int:
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    if which not in ("children", "bus"):
        print(__doc__, file=sys.stderr)
        return 2
    print(f"{CHECKOUT.name}: {anyio.run(children if which == 'children' else bus)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
