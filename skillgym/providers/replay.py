"""The replay provider: feed a recorded cassette through its format's parser, offline and free.

In the execution and dogfood lanes the recorded shell commands, and the files the agent wrote with its
own editing tools (Write, Edit, MultiEdit), are run again in order in the trial's fresh workspace, with
paths into the recorded workspace pointed at the new one, so verifiers judge real effects rather than a
transcript.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

import anyio.to_thread
import msgspec

from ..errors import UsageError
from ..identity import TrialId
from ..plugins import PROVIDERS, STREAM_FORMATS, provider
from ..process import ProcessStartError
from ..results import ErrorClass
from ..sandboxes.base import Network
from ..trace import ToolCall, Trace
from .base import Detection, ProviderRequest, ProviderResult, ProviderSettings
from .cassette import (
    DEFAULT_MODEL,
    CassetteError,
    CassetteMeta,
    cassette_candidates,
    cassettes_root,
    find_cassette,
    iter_cassette_lines,
    read_cassette,
)
from .tracefmt import StreamParseError

# Lanes whose verifiers look at the workspace, so the recorded commands must really happen there.
REENACT_LANES: Final = ("execution", "dogfood")
# A re-enacted command's output goes into the trace for graders to read, not into memory without bound.
_MAX_OUTPUT: Final = 1024 * 1024


@provider
class ReplayProvider:
    """Replays cassettes recorded by ``source`` (``"provider/model"``) from ``<suite_root>/cassettes``.

    With ``source`` None the suite must hold exactly one provider/model pair, which is used; ``model``
    (``--model``) narrows that choice to the pairs recorded with that model, and must agree with ``source``.
    """

    name = "replay"
    # Until detect knows which provider recorded the cassettes; then that provider's own folders, so a
    # re-enacted command that reads an installed skill finds it where the recorded agent did.
    skill_dirs: tuple[str, ...] = (".claude/skills", ".agents/skills")
    runs_agent: bool = False
    network: Network = "none"  # re-enacted commands are offline, like the cassette they come from
    sandbox_readable: tuple[str, ...] = ()
    # A replayed trial mostly waits (on the recorded commands' sleeps and the programs they drive), and
    # calls no model: far more of them fit on a machine than real agents.
    default_concurrency = 24
    passthrough_env: tuple[str, ...] = ()
    home_env: dict[str, str] = {}
    stream_format: str | None = None  # each cassette names its own

    def __init__(self, suite_root: Path, source: str | None = None, model: str | None = None) -> None:
        self._root = cassettes_root(suite_root)
        self._suite_root = Path(suite_root)
        self._source = _split_source(source) if source is not None else None
        self._model = model
        if self._source is not None and model is not None and self._source[1] != model:
            raise UsageError(
                f"--model {model} and --replay-source {'/'.join(self._source)} disagree: replay plays the "
                "cassettes of one recorded model; drop --model or make the two match"
            )

    @classmethod
    def from_settings(cls, settings: ProviderSettings) -> ReplayProvider:
        return cls(Path(settings.suite_root), settings.replay_source, settings.model)

    def pairs(self) -> list[tuple[str, str]]:
        """The provider/model pairs recorded under the cassettes dir, sorted."""
        if not self._root.is_dir():
            return []
        return [
            (provider.name, model.name)
            for provider in sorted(self._root.iterdir())
            if provider.is_dir() and not provider.name.startswith(".")
            for model in sorted(provider.iterdir())
            if model.is_dir() and not model.name.startswith(".")
        ]

    def resolve_source(self) -> tuple[str, str]:
        """The provider/model pair to replay, or a ``UsageError`` that lists the pairs there are."""
        pairs = self.pairs()
        listed = ", ".join(f"{p}/{m}" for p, m in pairs)
        if self._source is not None:
            if self._source not in pairs:
                provider, model = self._source
                raise UsageError(
                    f"no cassettes recorded by {provider}/{model} under {self._root}; "
                    + (f"recorded pairs: {listed}" if pairs else "record some with --record")
                )
            return self._source
        if not pairs:
            raise UsageError(
                f"no cassettes under {self._root}: expected folders cassettes/<provider>/<model>/; "
                "record some with --record, or use --provider stub"
            )
        if self._model is not None:
            pairs = [pair for pair in pairs if pair[1] == self._model]
            if not pairs:
                raise UsageError(
                    f"no cassettes recorded with model {self._model!r} under {self._root}; recorded "
                    f"pairs: {listed}; drop --model, or name one of them with --replay-source"
                )
        if len(pairs) == 1:
            return pairs[0]
        named = ", ".join("/".join(pair) for pair in pairs)
        raise UsageError(
            f"several recorded provider/model pairs under {self._root}: {named}; "
            "choose one with --replay-source (for example the first, '" + "/".join(pairs[0]) + "')"
        )

    async def detect(self) -> Detection:
        try:
            provider, model = self.resolve_source()
        except UsageError as exc:
            return Detection(provider=self.name, available=False, problem=str(exc))
        # A damaged cassette is bad suite input: say so once, before the matrix, naming file and line,
        # rather than as a failed trial per case.
        problem = await anyio.to_thread.run_sync(_first_damaged, self._root / provider / model)
        if problem is not None:
            return Detection(provider=self.name, available=False, problem=problem)
        if provider in PROVIDERS and provider != self.name:
            recorded = getattr(PROVIDERS.get(provider), "skill_dirs", None)
            if isinstance(recorded, tuple) and recorded:
                self.skill_dirs = recorded
        note = (
            f"replay plays the cassettes in {self._root / provider / model}; in the execution and dogfood "
            "lanes their recorded commands and file edits run again in each trial: review cassettes like code"
        )
        return Detection(provider=self.name, available=True, default_model=model, note=note)

    def missing_material(self, trials: Sequence[TrialId]) -> list[str]:
        """One line per case/condition of ``trials`` lacking a cassette for some trial (naming them), and
        one per cassette they would play that does not parse (file, line and problem)."""
        try:
            provider, model = self.resolve_source()
        except UsageError as exc:
            return [str(exc)]
        lacking: dict[tuple[str, str, str], list[int]] = {}
        checked: set[Path] = set()  # a condition-level cassette serves every trial: parsed once
        problems: list[str] = []
        for trial in trials:
            group = (trial.lane, trial.case_id, trial.condition)
            try:
                candidates = cassette_candidates(
                    self._suite_root,
                    provider=provider,
                    model=model,
                    lane=trial.lane,
                    case=trial.case_id,
                    condition=trial.condition,
                    trial=trial.trial,
                )
            except CassetteError as exc:
                problems.append(str(exc))
                continue
            found = find_cassette(candidates)
            if found is None:
                lacking.setdefault(group, []).append(trial.trial)
            elif found not in checked:
                checked.add(found)
                try:
                    _load(found, Path(os.devnull))
                except CassetteError as exc:
                    problems.append(str(exc))
                except OSError as exc:
                    problems.append(
                        f"{found}: cannot read the cassette ({exc}); make it readable or re-record"
                    )
        for (lane, case, condition), numbers in lacking.items():
            folder = self._root / provider / model / lane / case
            problems.append(
                f"replay has nothing to play for {lane} case {case!r}, condition {condition!r}, "
                f"trial(s) {_spans(numbers)}: no {folder / condition}.jsonl nor "
                f"{folder / condition}/trial-<n>.jsonl; record them with --record --provider {provider}"
                + ("" if model == DEFAULT_MODEL else f" --model {model}")
            )
        return list(dict.fromkeys(problems))

    async def invoke(self, request: ProviderRequest) -> ProviderResult:
        started = time.monotonic()
        try:
            provider, model = self.resolve_source()
        except UsageError as exc:
            return _failed("provider-unavailable", str(exc))
        try:
            candidates = cassette_candidates(
                self._suite_root,
                provider=provider,
                model=model,
                lane=request.id.lane,
                case=request.id.case_id,
                condition=request.id.condition,
                trial=request.id.trial,
            )
        except CassetteError as exc:
            return _failed("provider-error", str(exc))
        path = find_cassette(candidates)
        if path is None:
            trial = request.id
            return _failed(
                "provider-error",
                f"no cassette for {trial.lane} case {trial.case_id!r}, condition {trial.condition!r}, "
                f"trial {trial.trial}: looked for {candidates[0]} and then {candidates[1]}; record one "
                f"with --record --provider {provider} --model {model}",
            )
        try:
            meta, trace = await anyio.to_thread.run_sync(_load, path, Path(request.stdout_path))
        except CassetteError as exc:
            return _failed("provider-error", str(exc), cassette=path)
        except OSError as exc:
            return _failed("provider-error", f"cannot replay {path}: {exc}", cassette=path)
        warnings = _warnings(meta, request, path)
        if meta.error_class is not None:
            return ProviderResult(
                ok=False,
                trace=trace,
                model=meta.model,
                error_class=meta.error_class,
                error_message=(
                    f"replayed a recorded failure from {path}: {meta.error_message or meta.error_class}"
                ),
                cassette=str(path),
                warnings=warnings,
            )
        if request.id.lane in REENACT_LANES:
            deadline = started + request.timeout_s
            trace, timed_out, more = await reenact(trace, request, deadline)
            warnings += more
            if timed_out is not None:
                return ProviderResult(
                    ok=False,
                    trace=trace,
                    model=meta.model,
                    error_class="timeout",
                    error_message=(
                        f"re-enacting {path} ran past the case's {request.timeout_s:g}s budget at command "
                        f"{timed_out}; raise the budget or re-record"
                    ),
                    cassette=str(path),
                    warnings=warnings,
                )
        else:
            Path(request.stderr_path).write_bytes(b"")
        return ProviderResult(ok=True, trace=trace, model=meta.model, cassette=str(path), warnings=warnings)


def _spans(numbers: Sequence[int]) -> str:
    """``[1, 2, 3, 5]`` as ``1-3, 5``: a thousand missing trials stay one short line."""
    spans: list[str] = []
    ordered = sorted(numbers)
    start = prev = ordered[0]
    for number in [*ordered[1:], None]:
        if number is not None and number == prev + 1:
            prev = number
            continue
        spans.append(str(start) if start == prev else f"{start}-{prev}")
        if number is not None:
            start = prev = number
    return ", ".join(spans)


def _split_source(source: str) -> tuple[str, str]:
    provider, slash, model = source.partition("/")
    if not slash or not provider or not model or "/" in model:
        raise UsageError(
            f"replay source {source!r} must be 'provider/model', the folders under cassettes/ it was "
            "recorded in (for example 'claude/claude-sonnet-4-5')"
        )
    return provider, model


def _first_damaged(folder: Path) -> str | None:
    """The first cassette under ``folder`` that does not parse, as ``file:line: problem``, or None."""
    for path in sorted(folder.rglob("*.jsonl")):
        try:
            _load(path, Path(os.devnull))
        except CassetteError as exc:
            return str(exc)
        except OSError as exc:
            return f"{path}: cannot read the cassette ({exc})"
    return None


def _load(path: Path, stdout_path: Path) -> tuple[CassetteMeta, Trace]:
    """Header, then the stream: copied line by line to ``stdout_path`` while the parser reads it."""
    meta = read_cassette(path)
    if meta.format not in STREAM_FORMATS:
        raise CassetteError(
            f"{path}:1: format {meta.format!r} has no parser in this skillgym (known: "
            f"{', '.join(sorted(STREAM_FORMATS.names()))}); upgrade skillgym, install the plug-in that "
            "provides it, or re-record"
        )
    parser = STREAM_FORMATS.get(meta.format)
    with open(stdout_path, "wb") as stdout:

        def tee() -> Iterator[bytes]:
            for line in iter_cassette_lines(path):
                stdout.write(line + b"\n")
                yield line

        try:
            trace = parser(tee())
        except StreamParseError as exc:
            # The parser counts stream lines; the file has the header first.
            raise CassetteError(
                f"{path}:{exc.line + 1}: expected {exc.expected}; {exc.problem} (found {exc.found!r}); "
                "fix the line or re-record the cassette"
            ) from exc
    return meta, trace if trace.model is not None else msgspec.structs.replace(trace, model=meta.model)


def _warnings(meta: CassetteMeta, request: ProviderRequest, path: Path) -> tuple[str, ...]:
    found: list[str] = []
    if meta.fingerprint != request.id.fingerprint:
        found.append(
            f"cassette recorded for fingerprint {meta.fingerprint}, case is now {request.id.fingerprint}: "
            f"re-record with --record ({path})"
        )
    recorded = (meta.lane, meta.case, meta.condition)
    wanted = (request.id.lane, request.id.case_id, request.id.condition)
    if recorded != wanted:
        found.append(
            f"cassette {path} says it was recorded for {'/'.join(recorded)} but is stored as "
            f"{'/'.join(wanted)}; move it or re-record"
        )
    return tuple(found)


async def reenact(
    trace: Trace, request: ProviderRequest, deadline: float
) -> tuple[Trace, int | None, tuple[str, ...]]:
    """Run the trace's shell commands again; the calls carry the new output and exit codes.

    Returns the updated trace, the number of the command the deadline cut (None if none) and warnings
    for commands whose exit code differs from the recording. After a cut, later calls are dropped: they
    never happened in this workspace.
    """
    calls: list[ToolCall] = []
    warnings: list[str] = []
    # Small local writes between processes; the stderr file is this replay's log of what it re-ran.
    log = open(request.stderr_path, "wb")  # noqa: SIM115 - closed in finally, across awaits
    try:
        for number, call in enumerate(trace.tool_calls, start=1):
            if call.command is None:
                if call.name in FILE_TOOLS:
                    problem = _apply_file_tool(call, Path(request.workspace))
                    log.write(f"[{call.name} {problem or 'applied'}]\n".encode())
                    if problem:
                        warnings.append(
                            f"tool call {number} ({call.name}) could not be re-applied: {problem}"
                        )
                calls.append(call)
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return _replace_calls(trace, calls), number, tuple(warnings)
            command = relocate(call.command, request.workspace)
            log.write(f"$ {command}\n".encode())
            try:
                result = await request.sandbox.run(
                    ["bash", "-c", command],
                    cwd=Path(request.workspace),
                    env=request.env,
                    timeout_s=remaining,
                    max_capture_bytes=_MAX_OUTPUT,
                )
            except ProcessStartError as exc:
                calls.append(_rerun(call, output=f"could not start bash: {exc}", exit_code=None))
                log.write(f"[could not start: {exc}]\n\n".encode())
                warnings.append(f"command {number} `{call.command}` could not start: {exc}")
                continue
            output = (result.stdout + result.stderr).decode("utf-8", errors="replace")
            log.write(result.stdout + result.stderr)
            log.write(f"[exit {result.exit_code}{' timed out' if result.timed_out else ''}]\n\n".encode())
            calls.append(_rerun(call, output=output, exit_code=result.exit_code))
            if result.timed_out:
                return _replace_calls(trace, calls), number, tuple(warnings)
            if call.exit_code is not None and result.exit_code != call.exit_code:
                warnings.append(
                    f"command {number} exited {result.exit_code} on replay but {call.exit_code} when "
                    f"recorded: {call.command}"
                )
    finally:
        log.close()
    return _replace_calls(trace, calls), None, tuple(warnings)


# Files written by an agent's own editing tools rather than the shell; replay writes them too.
FILE_TOOLS: Final = frozenset({"Write", "Edit", "MultiEdit"})
# A recorded trial workspace: <anything>/trials/<lane>/<case>/<condition>/<provider>/trial-<n>/workspace.
_RECORDED_WORKSPACE = re.compile(
    r"(?:/[^\s'\"`;|&<>]+)*?/trials(?:/[^/\s'\"`;|&<>]+){4}/trial-\d+/workspace(?![\w.-])"
)


def relocate(text: str, workspace: str) -> str:
    """``text`` with paths into the recorded trial's workspace pointing into this trial's instead."""
    return _RECORDED_WORKSPACE.sub(lambda _: workspace, text)


def _apply_file_tool(call: ToolCall, workspace: Path) -> str | None:
    """Re-apply a Write, Edit or MultiEdit inside ``workspace``; returns a problem, or None when done."""
    try:
        args = msgspec.json.decode(call.input or "{}")
    except msgspec.DecodeError:
        return "its recorded input is not JSON"
    if not isinstance(args, dict) or not isinstance(args.get("file_path"), str):
        return "its recorded input has no file_path"
    target = Path(relocate(args["file_path"], str(workspace)))
    if not target.is_absolute():
        target = workspace / target
    resolved = target.resolve()
    if not resolved.is_relative_to(workspace.resolve()):
        return f"{args['file_path']} is outside the workspace"
    try:
        if call.name == "Write":
            resolved.parent.mkdir(parents=True, exist_ok=True)
            resolved.write_text(str(args.get("content", "")), encoding="utf-8")
            return None
        text = resolved.read_text(encoding="utf-8")
        edits = args.get("edits") if call.name == "MultiEdit" else [args]
        for edit in edits if isinstance(edits, list) else []:
            old, new = str(edit.get("old_string", "")), str(edit.get("new_string", ""))
            if old not in text:
                return f"{resolved.name} does not contain the text the recorded edit replaced"
            text = text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)
        resolved.write_text(text, encoding="utf-8")
    except OSError as exc:
        return f"{resolved}: {exc.strerror or exc}"
    return None


def _rerun(call: ToolCall, *, output: str, exit_code: int | None) -> ToolCall:
    # The same call in the same place in the conversation, with what it printed this time.
    return msgspec.structs.replace(call, output=output, exit_code=exit_code, is_error=exit_code != 0)


def _replace_calls(trace: Trace, calls: list[ToolCall]) -> Trace:
    return msgspec.structs.replace(trace, tool_calls=tuple(calls))


def _failed(error_class: ErrorClass, message: str, *, cassette: Path | None = None) -> ProviderResult:
    return ProviderResult(
        ok=False,
        trace=Trace(),
        error_class=error_class,
        error_message=message,
        cassette=str(cassette) if cassette else None,
    )
