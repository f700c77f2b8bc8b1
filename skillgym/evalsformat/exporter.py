"""``skillgym export skill-creator``: a run directory as the workspace skill-creator's tools read.

Layout (aggregate_benchmark.py's "workspace layout"; generate_review.py finds each run by its outputs/)::

    OUT_DIR/eval-<id>/eval_metadata.json            eval_id, eval_name, prompt, assertions
    OUT_DIR/eval-<id>/<configuration>/run-<n>/      grading.json, timing.json, transcript.md, outputs/,
                                                    and eval_metadata.json again (where the viewer looks)
    OUT_DIR/benchmark.json                          metadata, runs, run_summary, notes
    OUT_DIR/evals.json                              the imported evals, given back in their own format
    OUT_DIR/trigger-evals.json, trigger-results.json  the imported trigger queries and how they fared

``with_skill`` is one skillgym condition and ``without_skill`` another (self-load and none unless told).
The whole tree is built beside OUT_DIR and moved into place at the end: a failed export leaves nothing
half-written, and an existing OUT_DIR is only replaced with ``force``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from ..errors import SkillgymError, UsageError
from ..eventlog import read_run_log
from ..judge.grading import read_judge_file
from ..loader import load_suite
from ..model import Case, Data, Suite
from ..results import TrialResult
from ..scaffold.frontmatter import FrontmatterError, read_skill
from ..trace import Trace
from . import skill_creator as fmt
from .source import (
    ASSERTIONS_TAG,
    EVAL_ID_TAG,
    EVAL_NAME_TAG,
    EVAL_TAG,
    GRADED_BY_EXPECTED_OUTPUT_TAG,
    TRIGGER_TAG,
)

DEFAULT_WITH_SKILL: Final = "self-load"
DEFAULT_WITHOUT_SKILL: Final = "none"
TRIGGER_THRESHOLD: Final = 0.5  # skill-creator's run_eval.py default: a query passes at half its runs
_MAX_OUTPUT_BYTES: Final = 5 * 1024 * 1024  # a workspace file larger than this is left out of outputs/
_trace_decoder = msgspec.json.Decoder(Trace)


class Exported(Data, frozen=True, kw_only=True):
    """What an export wrote: where, how many evals and runs, and what it noticed on the way."""

    out_dir: Path
    evals: int
    runs: int
    trigger_queries: int
    notes: tuple[str, ...] = ()


class _Eval(Data, frozen=True, kw_only=True):
    """One exported eval: a case, the id and name skill-creator shows, and its runs' results."""

    case_id: str
    case: Case | None
    eval_id: int | str
    eval_name: str
    results: tuple[TrialResult, ...]


def export_skill_creator(
    run_dir: Path,
    out_dir: Path,
    *,
    with_skill: str = DEFAULT_WITH_SKILL,
    without_skill: str = DEFAULT_WITHOUT_SKILL,
    provider: str | None = None,
    suite: Path | None = None,
    force: bool = False,
) -> Exported:
    """Write ``run_dir``'s trials into ``out_dir`` in skill-creator's layout; raises ``SkillgymError``."""
    if with_skill == without_skill:
        raise UsageError(
            f"--with-skill and --without-skill are both {with_skill!r}; name two different conditions"
        )
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"{out_dir} is a file; give a folder for the export")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not force:
        raise UsageError(f"not overwriting {out_dir}: it is not empty; choose another folder or pass --force")
    log = read_run_log(run_dir)
    loaded = _suite(suite or Path(log.start.suite_dir), given=suite is not None)
    results = _select_provider(list(log.results), provider)
    notes: list[str] = []
    if log.finish is None:
        notes.append(
            "the run did not finish (interrupted or still running): only its finished trials are here"
        )
    configs = {with_skill: fmt.WITH_SKILL, without_skill: fmt.WITHOUT_SKILL}
    present = sorted({r.id.condition for r in results})
    if not any(c in present for c in configs):
        raise UsageError(
            f"the run has no trials under {with_skill!r} or {without_skill!r} (its conditions: "
            f"{', '.join(present) or 'none'}); choose them with --with-skill and --without-skill"
        )
    for condition, config in configs.items():
        if condition not in present:
            notes.append(f"no trials under {condition!r}: {config} is empty")
    left_out = [r for r in results if r.id.condition not in configs]
    for condition in sorted({r.id.condition for r in left_out}):
        count = sum(1 for r in left_out if r.id.condition == condition)
        notes.append(
            f"left out condition {condition!r} ({count} trials): only {with_skill} and {without_skill} map"
        )
    chosen = [r for r in results if r.id.condition in configs]
    cases: dict[tuple[str, str], Case] = {(c.lane, c.id): c for c in loaded.cases}
    notes.extend(_changed(chosen, cases))
    triggers = [r for r in chosen if _is_trigger(cases.get((r.id.lane, r.id.case_id)))]
    baseline_triggers = sum(1 for r in triggers if r.id.condition != with_skill)
    if baseline_triggers:
        notes.append(
            f"trigger queries count {with_skill} trials only, as skill-creator's run_eval.py runs them: "
            f"{baseline_triggers} {without_skill} trials of them left out"
        )
    evals = _evals([r for r in chosen if r not in triggers], cases)
    staging = _staging(out_dir)
    try:
        runs = _write_evals(staging, evals, configs, run_dir)
        benchmark = {
            "metadata": _metadata(
                log.start.at, log.start.trials, loaded, evals, chosen, log.start.model, run_dir
            ),
            "runs": runs,
            "run_summary": fmt.run_summary(runs, [fmt.WITH_SKILL, fmt.WITHOUT_SKILL]),
            "notes": notes,
        }
        _write_json(staging / "benchmark.json", benchmark)
        _write_evals_json(staging, evals, loaded)
        queries = _write_triggers(
            staging, [r for r in triggers if r.id.condition == with_skill], cases, loaded
        )
        _swap(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Exported(
        out_dir=out_dir, evals=len(evals), runs=len(runs), trigger_queries=queries, notes=tuple(notes)
    )


def _suite(root: Path, *, given: bool) -> Suite:
    try:
        return load_suite(root)
    except SkillgymError as exc:
        how = "fix it" if given else "pass --suite DIR (the suite the run used, moved or copied)"
        raise UsageError(
            f"the run's suite {root} cannot be loaded, and the export reads each case's prompt and "
            f"expectations from it: {how}\n{exc}"
        ) from exc


def _select_provider(results: list[TrialResult], provider: str | None) -> list[TrialResult]:
    names = sorted({r.id.provider for r in results})
    if provider is not None:
        if provider not in names:
            raise UsageError(
                f"the run has no trials of provider {provider!r} (it has: {', '.join(names) or 'none'})"
            )
        return [r for r in results if r.id.provider == provider]
    if len(names) > 1:
        raise UsageError(
            f"the run has trials of several providers ({', '.join(names)}); skill-creator's files hold one: "
            "choose it with --provider"
        )
    return results


def _changed(results: Sequence[TrialResult], cases: dict[tuple[str, str], Case]) -> list[str]:
    notes: list[str] = []
    for key in dict.fromkeys((r.id.lane, r.id.case_id, r.id.fingerprint) for r in results):
        lane, case_id, print_ = key
        case = cases.get((lane, case_id))
        if case is None:
            notes.append(
                f"case {case_id!r} is no longer in the suite: exported without its prompt and expectations"
            )
        elif case.fingerprint != print_:
            notes.append(
                f"case {case_id!r} changed since the run: its prompt and expectations here are today's"
            )
    return list(dict.fromkeys(notes))


def _is_trigger(case: Case | None) -> bool:
    return case is not None and case.lane == "prompt" and TRIGGER_TAG in case.tags


def tag_value(case: Case | None, prefix: str) -> str | None:
    """The value of the ``prefix``-tag of ``case`` (``eval-id=3`` -> "3"), or None."""
    for tag in case.tags if case is not None else ():
        if tag.startswith(prefix):
            return tag[len(prefix) :]
    return None


def _imported_id(case: Case | None) -> int | str | None:
    if case is None or EVAL_TAG not in case.tags:
        return None
    value = tag_value(case, EVAL_ID_TAG)
    if value is None:
        return None
    try:
        found = json.loads(value)  # 3, or "three" in quotes: the id's own type
    except json.JSONDecodeError:
        return value  # edited by hand without quotes: still the eval's id, as text
    return found if isinstance(found, int | str) and not isinstance(found, bool) else value


def case_keys(results: Sequence[TrialResult], cases: dict[tuple[str, str], Case]) -> list[tuple[str, str]]:
    """The (lane, case id) of ``results`` in the suite's order (an imported file's order), not the order
    the trials finished in; a case the suite no longer has comes after, in the run's order."""
    keys = list(dict.fromkeys((r.id.lane, r.id.case_id) for r in results))
    place = {key: n for n, key in enumerate(cases)}
    return sorted(keys, key=lambda k: place.get(k, len(place)))  # a stable sort keeps the run's order


def _evals(results: Sequence[TrialResult], cases: dict[tuple[str, str], Case]) -> list[_Eval]:
    """One eval per case, in the suite's order: imported evals keep their id, others count on after them."""
    keys = case_keys(results, cases)
    ids = {k: _imported_id(cases.get(k)) for k in keys}
    taken = [i for i in ids.values() if isinstance(i, int)]
    following = max(taken, default=0) + 1
    out: list[_Eval] = []
    for key in keys:
        case = cases.get(key)
        eval_id = ids[key]
        if eval_id is None:
            eval_id, following = following, following + 1
        out.append(
            _Eval(
                case_id=key[1],
                case=case,
                eval_id=eval_id,
                eval_name=tag_value(case, EVAL_NAME_TAG) or key[1],
                results=tuple(r for r in results if (r.id.lane, r.id.case_id) == key),
            )
        )
    return out


def _prompt(case: Case | None) -> str:
    if case is None:
        return ""
    return case.prompt if case.lane == "prompt" else case.task  # type: ignore[union-attr]


def _write_evals(
    staging: Path, evals: Sequence[_Eval], configs: dict[str, str], run_dir: Path
) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = []
    for item in evals:
        folder = staging / f"eval-{item.eval_id}"
        folder.mkdir()
        metadata = {
            "eval_id": item.eval_id,
            "eval_name": item.eval_name,
            "prompt": _prompt(item.case),
            "assertions": [j.expectation for j in item.case.judged] if item.case is not None else [],
        }
        _write_json(folder / "eval_metadata.json", metadata)
        # with_skill first, as skill-creator orders them: its delta is the first configuration less the second
        for condition, config in configs.items():
            for result in sorted(
                (r for r in item.results if r.id.condition == condition), key=lambda r: r.id.trial
            ):
                run_folder = folder / config / f"run-{result.id.trial}"
                _write_run(run_folder, result, item.case, run_dir)
                # The viewer looks for it beside outputs/ (or one level up), the aggregation in eval-<id>/.
                _write_json(run_folder / "eval_metadata.json", metadata)
                runs.append(
                    fmt.benchmark_run(
                        result,
                        item.case,
                        eval_id=item.eval_id,
                        eval_name=item.eval_name,
                        configuration=config,
                    )
                )
    return sorted(runs, key=lambda r: 0 if r["configuration"] == fmt.WITH_SKILL else 1)


def _write_run(folder: Path, result: TrialResult, case: Case | None, run_dir: Path) -> None:
    outputs = folder / "outputs"
    outputs.mkdir(parents=True)
    trace = _trace(run_dir, result)
    transcript = run_dir / result.paths.transcript if result.paths.transcript else None
    transcript_chars = 0
    if transcript is not None and transcript.is_file():
        text = transcript.read_text(encoding="utf-8", errors="replace")
        transcript_chars = len(text)
        (folder / "transcript.md").write_text(text, encoding="utf-8")
    if trace is not None and trace.final_text:
        (outputs / "final_answer.md").write_text(trace.final_text, encoding="utf-8")
    if result.paths.workspace:
        _copy_outputs(run_dir / result.paths.workspace, outputs)
    _write_json(folder / "grading.json", fmt.grading(result, case, trace, transcript_chars))
    _write_json(folder / "timing.json", fmt.timing(result))


def _trace(run_dir: Path, result: TrialResult) -> Trace | None:
    if not result.paths.trace:
        return None
    try:
        return _trace_decoder.decode((run_dir / result.paths.trace).read_bytes())
    except (OSError, msgspec.MsgspecError):
        return None  # a missing or damaged trace: the metrics it would give stay empty


def _copy_outputs(workspace: Path, outputs: Path) -> None:
    """The kept workspace's files, without hidden folders (installed skills, agent homes, .git)."""
    for path in sorted(workspace.rglob("*")):
        rel = path.relative_to(workspace)
        if any(part.startswith(".") for part in rel.parts) or not path.is_file() or path.is_symlink():
            continue
        if path.stat().st_size > _MAX_OUTPUT_BYTES:
            continue
        target = outputs / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def _metadata(
    started: float,
    trials: int,
    suite: Suite,
    evals: Sequence[_Eval],
    results: Sequence[TrialResult],
    model: str | None,
    run_dir: Path,
) -> dict[str, Any]:
    judges = _judges(run_dir, results)
    skills = list(
        dict.fromkeys(e.case.expected_skill for e in evals if e.case is not None and e.case.expected_skill)
    )
    declared = {s.name: s for s in suite.skills}
    names = skills or list(declared)
    models = sorted({r.model for r in results if r.model})
    path = declared[names[0]].path if len(names) == 1 and names[0] in declared else None
    return {
        "skill_name": ", ".join(names),
        "skill_path": str((Path(suite.root) / path).resolve()) if path else None,
        "executor_model": ", ".join(models) or model,
        # skill-creator's grader and analyzer are one model there; here the judge graded the expectations
        "analyzer_model": ", ".join(dict.fromkeys(m for _label, m in judges)) or None,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "evals_run": [e.eval_id for e in evals],
        "runs_per_configuration": trials,
        "skillgym": {"judges": list(dict.fromkeys(label for label, _m in judges))},
    }


def _judges(run_dir: Path, results: Sequence[TrialResult]) -> list[tuple[str, str]]:
    """(judge, model) of every answer that graded the exported trials, in order; empty without a judge.

    The model is the one the judge's answer names, else the model its ``--judge`` gave (``claude:MODEL``).
    """
    found: list[tuple[str, str]] = []
    for result in results:
        if result.paths.judge is None:
            continue
        try:
            file = read_judge_file(run_dir / result.paths.judge)
        except (OSError, msgspec.MsgspecError):
            continue  # a missing or damaged judge.json: its trial's verdicts are still in the results
        for record in file.records:
            if record.source is None:
                continue  # nobody answered (the judge failed): no model graded this one
            found.append((record.judge, record.model or record.judge.partition(":")[2] or record.judge))
    return list(dict.fromkeys(found))


def _write_evals_json(staging: Path, evals: Sequence[_Eval], suite: Suite) -> None:
    """The imported evals in evals.json's own format: what the import read, given back."""
    imported = [e for e in evals if e.case is not None and EVAL_TAG in e.case.tags]
    by_skill: dict[str, list[dict[str, Any]]] = {}
    presets = {p.id: p for p in suite.presets}
    for item in imported:
        case = item.case
        assert case is not None
        entry: dict[str, Any] = {"id": item.eval_id}
        if tag_value(case, EVAL_NAME_TAG) is not None:
            entry["eval_name"] = item.eval_name
        entry["prompt"] = _prompt(case)
        entry["expected_output"] = case.grader_notes
        preset = presets.get(case.workspace) if case.workspace else None
        entry["files"] = _template_files(Path(suite.root), preset.template if preset else None)
        key = "assertions" if ASSERTIONS_TAG in case.tags else "expectations"
        graded_by_output = GRADED_BY_EXPECTED_OUTPUT_TAG in case.tags
        entry[key] = [] if graded_by_output else [j.expectation for j in case.judged]
        by_skill.setdefault(case.expected_skill or "", []).append(entry)
    for skill, entries in by_skill.items():
        name = "evals.json" if len(by_skill) == 1 else f"evals-{skill}.json"
        _write_json(staging / name, {"skill_name": skill, "evals": entries})


def _template_files(root: Path, template: str | None) -> list[str]:
    if template is None:
        return []
    folder = root / template
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def _write_triggers(
    staging: Path, results: Sequence[TrialResult], cases: dict[tuple[str, str], Case], suite: Suite
) -> int:
    """trigger-evals.json (the set) and trigger-results.json (run_eval.py's output), with-skill trials."""
    keys = case_keys(results, cases)
    if not keys:
        return 0
    items: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    skills: list[str] = []
    for key in keys:
        case = cases[key]
        should = case.expected_skill is not None
        skill = case.expected_skill or next((s.name for s in suite.skills), "")
        skills.append(skill)
        mine = [r for r in results if (r.id.lane, r.id.case_id) == key]
        triggered = sum(1 for r in mine if r.grade is not None and skill in r.grade.selected_skills)
        rate = triggered / len(mine)
        items.append({"query": case.prompt, "should_trigger": should})  # type: ignore[union-attr]
        rows.append(
            {
                "query": case.prompt,  # type: ignore[union-attr]
                "should_trigger": should,
                "trigger_rate": rate,
                "triggers": triggered,
                "runs": len(mine),
                "pass": rate >= TRIGGER_THRESHOLD if should else rate < TRIGGER_THRESHOLD,
            }
        )
    name = next((s for s in skills if s), "")
    description = ""
    declared = {s.name: s for s in suite.skills}
    if name in declared:
        try:
            description = read_skill(Path(suite.root) / declared[name].path).description
        except FrontmatterError:
            description = ""
    passed = sum(1 for r in rows if r["pass"])
    _write_json(staging / "trigger-evals.json", items)
    _write_json(
        staging / "trigger-results.json",
        {
            "skill_name": name,
            "description": description,
            "results": rows,
            "summary": {"total": len(rows), "passed": passed, "failed": len(rows) - passed},
        },
    )
    return len(rows)


def _write_json(path: Path, doc: object) -> None:
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _staging(out_dir: Path) -> Path:
    parent = out_dir.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=parent, prefix=f".{out_dir.name}.", suffix=".tmp"))
    staging.chmod(0o755)  # mkdtemp's 0700 would stay with the export once it is moved into place
    return staging


def _swap(staging: Path, out_dir: Path) -> None:
    """Put the finished tree at ``out_dir``; an old one is moved aside first and removed after."""
    old: Path | None = None
    if out_dir.exists():
        old = Path(tempfile.mkdtemp(dir=staging.parent, prefix=f".{out_dir.name}.", suffix=".old"))
        os.replace(out_dir, old / "tree")
    try:
        os.replace(staging, out_dir)
    except BaseException:
        if old is not None:
            os.replace(old / "tree", out_dir)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
