"""The peer side of the stub-pipeline benchmark: the same N samples run by inspect_ai's mock model.

Usage: python benchmarks/peer_inspect.py TRIALS LOG_DIR

One sample per skillgym trial (TRIALS / 4 cases x 4 conditions), the same prompt and canned answer as
``_generated_suite`` in run.py, a trivial ``includes()`` scorer, no sandbox, the eval log written to
LOG_DIR (inspect's equivalent of a skillgym run directory). run.py times this script in a fresh process.
"""

from __future__ import annotations

import os
import re
import sys

CONDITIONS = ("none", "self-load", "preloaded", "stale")
SERVER = re.compile(r"server (\d+)")


def main() -> int:
    trials, log_dir = int(sys.argv[1]), sys.argv[2]
    # Offline and quiet: no telemetry, API-key or required hooks; the log goes where run.py says.
    for name in ("INSPECT_TELEMETRY", "INSPECT_API_KEY_OVERRIDE", "INSPECT_REQUIRED_HOOKS"):
        os.environ.pop(name, None)
    os.environ["INSPECT_LOG_DIR"] = log_dir

    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    samples = [
        Sample(
            id=f"wait-{i}/{condition}",
            input=f"Wait until server {i} prints Listening before running tests",
            target="Listening",
        )
        for i in range(trials // len(CONDITIONS))
        for condition in CONDITIONS
    ]

    def answer(messages: list[object], tools: object, tool_choice: object, config: object) -> ModelOutput:
        match = SERVER.search(str(getattr(messages[-1], "text", "")))
        text = f"I would wait until server {match.group(1) if match else '?'} prints Listening.\n"
        output = ModelOutput.from_content(model="mockllm/model", content=text)
        # Usage given up front: otherwise mockllm counts tokens with tiktoken, whose first use downloads
        # its encoding file (a network lookup the benchmark must not make).
        output.usage = ModelUsage(input_tokens=12, output_tokens=len(text), total_tokens=12 + len(text))
        return output

    [log] = eval(
        Task(dataset=MemoryDataset(samples), solver=generate(), scorer=includes()),
        model="mockllm/model",
        model_args={"custom_outputs": answer},
        log_dir=log_dir,
        display="none",
        max_samples=64,  # skillgym's stub pipeline runs at --concurrency 64
        sandbox=None,
    )
    done = log.results.completed_samples if log.results else 0
    if log.status != "success" or done != len(samples):
        print(f"inspect_ai run {log.status}: {done} of {len(samples)} samples", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
