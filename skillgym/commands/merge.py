"""`skillgym merge OUT SHARD_DIR...`: the shard runs of one plan joined into one run folder.

The merged folder is what the unsharded run would have written, apart from ids and timing: its events
are posted again, in plan order, through the same reporters a run uses (event log, report, junit, the
token section), and every trial's folder is carried over. It is built in a temporary folder beside OUT
and renamed into place, so OUT is either complete or absent.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import secrets as _secrets
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
from rich.console import Console

from ..bus import Subscriber, running_bus
from ..claim import claim_run_dir
from ..errors import SkillgymError
from ..eventlog import RunLog, read_run_log
from ..events import EVENT_SCHEMA, MergedShard, RunFinish, RunStart, TrialStart, event_decoder
from ..files import write_atomic
from ..fingerprint import short
from ..loader import load_suite
from ..model import Data, Suite
from ..plan import Plan, build_plan
from ..redact import scrub, secret_values
from ..results import TrialResult, rehomed
from ..shard import ShardSpec, plan_fingerprint, select

if TYPE_CHECKING:
    from ..report import Report

# What every shard of one plan must agree on beyond the plan fingerprint, and what the field means.
_SAME = (
    ("skill_hash", "the skills' content (skill hash)"),
    ("settings", "the run settings (sandbox, network, replay source, agent command, record, ...)"),
    ("suite", "the suite"),
    ("lanes", "--lane"),
    ("conditions", "--condition"),
    ("providers", "--provider"),
    ("case_filter", "--case"),
    ("model", "--model"),
    ("trials", "--trials"),
    ("baseline_report", "--compare-baseline"),
)


class MergeError(SkillgymError):
    """The shard folders given to `merge` are not every shard of one finished plan, exactly once."""


class Shard(Data, frozen=True, kw_only=True):
    """One shard folder as `merge` read it."""

    folder: str
    log: RunLog
    spec: ShardSpec
    workspaces: dict[str, dict[str, object]]  # trial key -> trial.start's workspace, paths made OUT's


class Merged(Data, frozen=True, kw_only=True):
    """What `merge` wrote: the merged run, its run.finish, and how many shards it joined."""

    run_id: str
    run_dir: str
    finish: RunFinish
    shards: int
    plan_fingerprint: str


def add_parser(sub: Any) -> None:
    """Register `skillgym merge`."""
    merge = sub.add_parser(
        "merge",
        help="join the run folders of `run --shard I/N` into one run folder",
        description="Check that the shard folders are every shard of one plan, each once and finished, "
        "then write OUT: one run folder equal to the unsharded run's apart from ids and timing.",
    )
    merge.set_defaults(handler=main)
    merge.add_argument(
        "out", type=Path, metavar="OUT", help="the merged run folder to create (must not exist)"
    )
    merge.add_argument("shard_dirs", type=Path, nargs="+", metavar="SHARD_DIR", help="a shard's run folder")
    merge.add_argument(
        "--suite",
        type=Path,
        default=None,
        metavar="DIR",
        help="the suite the shards ran (default: the folder their run.json names, else its relative path)",
    )
    merge.add_argument(
        "--reporter",
        action="append",
        default=[],
        metavar="NAME",
        help="add a reporter (junit is added by itself when the shards wrote junit.xml)",
    )


def main(args: argparse.Namespace, out: Console, err: Console) -> int:
    """`skillgym merge`: the merged run's exit code (0 every trial passed, 1 not), 2 for bad shards."""
    merged = merge_shards(
        args.out, args.shard_dirs, suite_dir=args.suite, reporters=args.reporter, console=out
    )
    c = merged.finish.counts
    out.print(
        f"merged {merged.shards} shard(s) of plan {short(merged.plan_fingerprint)} into {merged.run_dir}",
        markup=False,
    )
    out.print(f"{c.total} trials: {c.passed} passed, {c.failed} failed, {c.errored} errored", markup=False)
    out.print(f"report: {Path(merged.run_dir) / 'report.md'}", markup=False)
    return merged.finish.exit_code


def merge_shards(
    out: Path,
    shard_dirs: Sequence[Path],
    *,
    suite_dir: Path | None = None,
    reporters: Sequence[str] = (),
    console: Console | None = None,
    argv: Sequence[str] | None = None,
) -> Merged:
    """Check the shards, then write the merged run folder ``out`` (atomically); see the module."""
    out = out.resolve()
    if out.exists():
        raise MergeError(f"{out} already exists; name a new folder for the merged run, or remove it")
    with contextlib.ExitStack() as stack:
        logs: list[tuple[Path, RunLog]] = []
        for folder in shard_dirs:
            if not (folder / "events.jsonl").is_file():
                raise MergeError(
                    f"{folder} is not a run folder (no events.jsonl); give each shard's run folder"
                )
            stack.enter_context(claim_run_dir(folder))  # a shard still running holds its folder
            logs.append((folder.resolve(), read_run_log(folder)))
        shards = [_shard(folder, log, out) for folder, log in logs]
        _check_one_plan(shards)
        suite = _suite(shards[0], suite_dir)
        plan = _whole_plan(suite, shards[0])
        results = _results(plan, shards, out)
        names = list(dict.fromkeys([*reporters, *_reporters_present(shards)]))
        return _write(out, plan, suite, shards, results, names, console, argv or sys.argv)


def _shard(folder: Path, log: RunLog, out: Path) -> Shard:
    start = log.start
    if start.shard is None:
        raise MergeError(
            f"{folder} is a whole run, not a shard (its run.json names no --shard); merge only the run "
            "folders of `skillgym run --shard I/N`"
        )
    label = f"shard {start.shard.label} ({folder})"
    if log.finish is None or log.finish.interrupted:
        how = (
            "was interrupted" if log.finish is not None else "did not finish (interrupted, or still running)"
        )
        raise MergeError(f"{label} {how}; finish it with `skillgym run --resume {folder}`, then merge again")
    return Shard(folder=str(folder), log=log, spec=start.shard, workspaces=_workspaces(folder, out))


def _workspaces(folder: Path, out: Path) -> dict[str, dict[str, object]]:
    """Each trial's workspace plan from its latest trial.start that has one, its paths moved to ``out``.

    A resumed shard re-announces its kept trials without one; their first segment still has it.
    """
    found: dict[str, dict[str, object]] = {}
    run_dir = ""
    for line in (folder / "events.jsonl").read_bytes().splitlines():
        if b'"run.start"' in line[:40] or b'"trial.start"' in line[:40]:
            try:
                event = event_decoder.decode(line)
            except msgspec.DecodeError:
                continue  # older schemas and a cut-off tail: read_run_log already judged the log
            if isinstance(event, RunStart):
                run_dir = event.run_dir
            elif isinstance(event, TrialStart) and event.workspace:
                found[event.id.key] = _moved(event.workspace, run_dir, out)
    return found


def _moved(value: dict[str, object], run_dir: str, out: Path) -> dict[str, object]:
    """``value`` with the shard's run folder, wherever a string names it, replaced by ``out``."""
    if not run_dir:
        return value
    encoded = msgspec.json.encode(value)
    old, new = msgspec.json.encode(run_dir)[1:-1], msgspec.json.encode(str(out))[1:-1]
    result: dict[str, object] = msgspec.json.decode(encoded.replace(old, new))
    return result


def _check_one_plan(shards: Sequence[Shard]) -> None:
    first = shards[0]
    ref, ref_start = first.spec, first.log.start
    for shard in shards[1:]:
        spec, start = shard.spec, shard.log.start
        pair = f"shard {ref.label} ({first.folder}) and shard {spec.label} ({shard.folder})"
        if spec.count != ref.count:
            raise MergeError(
                f"{pair} split the plan {ref.count} and {spec.count} ways; merge shards of one --shard I/N"
            )
        if spec.plan_fingerprint != ref.plan_fingerprint:
            raise MergeError(
                f"{pair} ran different plans ({short(ref.plan_fingerprint)} and "
                f"{short(spec.plan_fingerprint)}): the cases, filters or settings differ; run every shard "
                "from one commit with the same flags"
            )
        for field, what in _SAME:
            if getattr(start, field) != getattr(ref_start, field):
                raise MergeError(
                    f"{pair} differ in {what}; run every shard from one commit with the same flags"
                )
        if start.versions.get("skillgym") != ref_start.versions.get("skillgym"):
            raise MergeError(
                f"{pair} ran different skillgym versions ({ref_start.versions.get('skillgym')} and "
                f"{start.versions.get('skillgym')}); install one version for every shard"
            )
        if spec.by != ref.by or spec.costs != ref.costs:
            raise MergeError(
                f"{pair} placed trials differently (--shard-by, or the token snapshots the costs come "
                "from, differ); run every shard from one commit with the same flags"
            )
    seen: dict[int, Shard] = {}
    for shard in shards:
        if shard.spec.index in seen:
            raise MergeError(
                f"shard {shard.spec.label} is given twice: {seen[shard.spec.index].folder} and "
                f"{shard.folder}; give each shard's folder once"
            )
        seen[shard.spec.index] = shard
    missing = [i for i in range(1, ref.count + 1) if i not in seen]
    if missing:
        labels = ", ".join(f"{i}/{ref.count}" for i in missing)
        raise MergeError(
            f"shard(s) {labels} missing: the plan was split {ref.count} ways and {len(shards)} shard "
            f"folder(s) were given; run `skillgym run --shard I/{ref.count}` for each missing one"
        )


def _suite(shard: Shard, given: Path | None) -> Suite:
    start = shard.log.start
    candidates = [given] if given is not None else [Path(start.suite_dir), Path(start.suite)]
    for path in candidates:
        if path is not None and path.is_dir():
            return load_suite(path)
    raise MergeError(
        f"the suite the shards ran ({start.suite_dir}) is not here; pass --suite with its folder in "
        "this checkout"
    )


def _whole_plan(suite: Suite, shard: Shard) -> Plan:
    start, spec = shard.log.start, shard.spec
    plan = build_plan(
        suite,
        lanes=start.lanes,
        conditions=start.conditions,
        case_ids=start.case_filter,
        providers=start.providers,
        model=start.model,
        trials=start.trials,
    )
    now = plan_fingerprint(plan, start.settings)
    if now != spec.plan_fingerprint:
        raise MergeError(
            f"the suite at {suite.root} makes plan {short(now)}, but the shards ran plan "
            f"{short(spec.plan_fingerprint)} (a case changed since); merge in the checkout the shards ran"
        )
    return plan


def _results(plan: Plan, shards: Sequence[Shard], out: Path) -> dict[str, tuple[TrialResult, Shard, bool]]:
    """Every planned trial's result, its shard, and whether the result changed on its way to ``out``."""
    results: dict[str, tuple[TrialResult, Shard, bool]] = {}
    for shard in sorted(shards, key=lambda s: s.spec.index):
        part = {i.id.key: i for i in select(plan, shard.spec).items}
        got = {r.id.key: r for r in shard.log.results}
        label = f"shard {shard.spec.label} ({shard.folder})"
        missing = [k for k in part if k not in got or got[k].id.fingerprint != part[k].id.fingerprint]
        if missing:
            raise MergeError(
                f"{label} lacks {len(missing)} of its {len(part)} trials (first: {missing[0]}); "
                f"resume it with `skillgym run --resume {shard.folder}`"
            )
        extra = [k for k in got if k not in part]
        if extra:
            raise MergeError(
                f"{label} holds {len(extra)} trials placed in another shard (first: {extra[0]}); "
                "run it again from the commit its siblings ran"
            )
        for key in part:
            moved = rehomed(got[key], shard.log.start.run_dir, str(out))
            results[key] = (moved, shard, moved != got[key])
    return results


def _reporters_present(shards: Sequence[Shard]) -> list[str]:
    """The reporters whose files the shards wrote beyond the always-on ones (junit.xml: junit)."""
    from ..launch import ALWAYS_ON
    from ..plugins import REPORTERS

    present = []
    for name, file in (("junit", "junit.xml"), ("html", "report.html")):
        wrote = any((Path(s.folder) / file).exists() for s in shards)
        if wrote and name in REPORTERS and name not in ALWAYS_ON:
            present.append(name)
    return present


def _write(
    out: Path,
    plan: Plan,
    suite: Suite,
    shards: Sequence[Shard],
    results: dict[str, tuple[TrialResult, Shard, bool]],
    reporters: Sequence[str],
    console: Console | None,
    argv: Sequence[str],
) -> Merged:
    from ..console import make_console
    from ..launch import build_reporters
    from ..runner import new_run_id

    tmp = out.parent / f".{out.name}.merging-{_secrets.token_hex(4)}"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
    except OSError as exc:
        raise MergeError(
            f"cannot create {tmp}: {exc.strerror or exc}; name an OUT in a writable folder"
        ) from exc
    try:
        for key, (result, shard, changed) in results.items():
            _carry(Path(shard.folder) / "trials" / key, tmp / "trials" / key)
            if changed and (tmp / result.paths.result).parent.is_dir():
                # A message in it named the shard's folder: its result.json says what the log says.
                write_atomic(tmp / result.paths.result, msgspec.json.encode(result))
        run_id = new_run_id()
        start = _merged_start(plan, suite, shards, run_id=run_id, out=out, argv=argv)
        write_atomic(tmp / "run.json", msgspec.json.format(msgspec.json.encode(start)).decode() + "\n")
        subscribers = build_reporters(
            reporters,
            run_dir=tmp,
            console=console or make_console(),
            reporter_output=None,
            baseline=_baseline(start),
        )
        ordered = [results[i.id.key][0] for i in plan.items]
        finish = anyio.run(_post, plan, suite, start, shards, ordered, subscribers)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Merged(
        run_id=run_id,
        run_dir=str(out),
        finish=finish,
        shards=len(shards),
        plan_fingerprint=shards[0].spec.plan_fingerprint,
    )


def _carry(source: Path, target: Path) -> None:
    """A trial's folder into the merged run: hard links where they can be made, else copies."""
    if not source.is_dir():
        return  # a trial that wrote nothing (an early setup error): its result says why
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target, symlinks=True, copy_function=_link_or_copy)


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        shutil.copy2(source, target)


def _merged_start(
    plan: Plan, suite: Suite, shards: Sequence[Shard], *, run_id: str, out: Path, argv: Sequence[str]
) -> RunStart:
    first = min(shards, key=lambda s: s.spec.index)
    notes = dict.fromkeys(n for s in sorted(shards, key=lambda s: s.spec.index) for n in s.log.start.notes)
    return msgspec.structs.replace(
        first.log.start,
        schema=EVENT_SCHEMA,
        run_id=run_id,
        at=min(s.log.start.at for s in shards),
        argv=tuple(scrub(a, secret_values(os.environ)) for a in argv),
        suite_dir=str(Path(suite.root).resolve()),
        run_dir=str(out),
        total_trials=len(plan.items),
        resumed=False,
        notes=tuple(notes),
        shard=None,
        merged=tuple(
            MergedShard(index=s.spec.index, run_id=s.log.start.run_id, trials=len(s.log.results))
            for s in sorted(shards, key=lambda s: s.spec.index)
        ),
    )


def _baseline(start: RunStart) -> Report | None:
    from ..launch import baseline_for_rebuild

    baseline, _ = baseline_for_rebuild(start.baseline_report)
    return baseline


async def _post(
    plan: Plan,
    suite: Suite,
    start: RunStart,
    shards: Sequence[Shard],
    results: Sequence[TrialResult],
    subscribers: list[Subscriber],
) -> RunFinish:
    """Post the merged run's events in plan order, as a run of one trial at a time posts them."""
    from ..errors import ExitCode
    from ..finishers import finish_parts
    from ..gates.step import recorded_gate_step, run_exit_code
    from ..runner import Brackets, counts_of
    from ..snapshots.step import SnapshotStep

    # The token section, as every run has, and the gates the shards were run with.
    gates = recorded_gate_step(plan, suite, dict(start.settings), baseline=_baseline(start))
    everyone = [*subscribers, SnapshotStep(suite, None), gates]
    workspaces = {k: w for s in shards for k, w in s.workspaces.items()}
    async with running_bus(*everyone, secrets=secret_values(os.environ)) as bus:
        await bus.publish(start)
        brackets = Brackets(plan, bus, start.run_id)
        for item, result in zip(plan.items, results, strict=True):
            brackets.before(item, workspaces.get(item.id.key, {}))
            brackets.after(result)
            await bus.room()
        counts = counts_of(results)
        part = await finish_parts(everyone, results, run_id=start.run_id, interrupted=False)
        ends = [s.log.finish.at for s in shards if s.log.finish is not None]
        end = RunFinish(
            run_id=start.run_id,
            at=time.time(),
            counts=counts,
            exit_code=ExitCode.USAGE
            if part.gate == "error"
            else run_exit_code(results, part.gates, interrupted=False, failed_step=part.gate == "fail"),
            # The wall time from the first shard's start to the last one's end.
            duration_s=round(max(ends, default=start.at) - start.at, 6),
            tokens=part.tokens,
            snapshots=part.snapshots,
            notes=part.notes,
            gates=part.gates,
        )
        return await bus.publish(end)
