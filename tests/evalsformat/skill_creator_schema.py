"""skill-creator's result files as its references/schemas.md documents them, to check an export against.

Written from the documented format (not from skillgym's code): every field the viewer and the aggregation
script read is required with its type; keys the format leaves open are allowed.
"""

from __future__ import annotations

from typing import Literal

import msgspec


class Expectation(msgspec.Struct, frozen=True):
    text: str
    passed: bool
    evidence: str


class GradingSummary(msgspec.Struct, frozen=True):
    passed: int
    failed: int
    total: int
    pass_rate: float


class Grading(msgspec.Struct, frozen=True):
    expectations: list[Expectation]
    summary: GradingSummary


class Timing(msgspec.Struct, frozen=True):
    total_tokens: int | None
    duration_ms: int
    total_duration_seconds: float


class EvalMetadata(msgspec.Struct, frozen=True):
    eval_id: int | str
    eval_name: str
    prompt: str
    assertions: list[str]


class Metadata(msgspec.Struct, frozen=True):
    skill_name: str
    timestamp: str
    evals_run: list[int | str]
    runs_per_configuration: int
    # In the documented example, not the field list: the agent's model and the grading model.
    skill_path: str | None
    executor_model: str | None
    analyzer_model: str | None


class RunResult(msgspec.Struct, frozen=True):
    pass_rate: float
    passed: int
    failed: int
    total: int
    time_seconds: float
    tokens: int | None
    errors: int


class Run(msgspec.Struct, frozen=True):
    eval_id: int | str
    eval_name: str
    configuration: Literal["with_skill", "without_skill"]
    run_number: int
    result: RunResult
    expectations: list[Expectation]


class Stat(msgspec.Struct, frozen=True):
    mean: float
    stddev: float
    min: float
    max: float


class ConfigSummary(msgspec.Struct, frozen=True):
    pass_rate: Stat
    time_seconds: Stat
    tokens: Stat | None


class Delta(msgspec.Struct, frozen=True):
    pass_rate: str
    time_seconds: str
    tokens: str | None


class RunSummary(msgspec.Struct, frozen=True):
    with_skill: ConfigSummary
    without_skill: ConfigSummary
    delta: Delta


class Benchmark(msgspec.Struct, frozen=True):
    metadata: Metadata
    runs: list[Run]
    run_summary: RunSummary
    notes: list[str]


class TriggerResult(msgspec.Struct, frozen=True):
    query: str
    should_trigger: bool
    trigger_rate: float
    triggers: int
    runs: int
    pass_: bool = msgspec.field(name="pass")


class TriggerSummary(msgspec.Struct, frozen=True):
    total: int
    passed: int
    failed: int


class TriggerResults(msgspec.Struct, frozen=True):
    skill_name: str
    description: str
    results: list[TriggerResult]
    summary: TriggerSummary
