"""Calibration: how often a judge agrees with human labels (``skillgym judge check LABELLED.jsonl``).

A labelled file has one JSON object per line: ``expectation``, ``material`` (the text the judge reads),
``label`` (``"pass"`` or ``"fail"``, the human's verdict), and optionally ``task`` and ``id``. The judge
answers each as it would a judged check; the figures are accuracy (an undecided answer counts as a
disagreement), Cohen's kappa over the decided answers, the confusion counts and every item it got wrong.

Figures are stored in ``<suite>/judge/calibration.json`` by judge and prompt version; a suite that names
a ``min_kappa`` in ``judged_by(...)`` makes a run warn when its judge's stored kappa is lower, or missing.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Final, Literal, TypeAlias

import blake3
import msgspec

from ..errors import UsageError
from ..files import write_atomic
from ..model import Data, Suite
from .judges import JudgeSpec, Question
from .material import cut
from .questions import JUDGE_PROMPT_VERSION, check_prompt
from .session import JudgeSession

Label: TypeAlias = Literal["pass", "fail"]
CALIBRATION_FILE: Final = ("judge", "calibration.json")
MATERIAL_LIMIT: Final = 40_000  # a labelled item's material is cut like a trial's, within this total
_DEFAULT_TASK: Final = "(the task is not given; grade the expectation against the material)"


class LabelledItem(Data, frozen=True, kw_only=True):
    """One line of a labelled file."""

    id: str
    expectation: str
    material: str
    label: Label
    task: str = ""
    grader_notes: str = ""  # the reference notes the judge is shown, as a case's c.grader_notes()


class Miss(Data, frozen=True, kw_only=True):
    """An item the judge got wrong (or could not decide)."""

    id: str
    expectation: str
    label: Label
    judged: Literal["pass", "fail", "undecided"]
    reason: str = ""


class Confusion(Data, frozen=True, kw_only=True):
    """Counts of (human label, judge verdict); undecided answers are counted apart."""

    pass_pass: int = 0  # human pass, judge pass
    pass_fail: int = 0
    fail_pass: int = 0
    fail_fail: int = 0
    pass_undecided: int = 0
    fail_undecided: int = 0


class Calibration(Data, frozen=True, kw_only=True):
    """A judge's agreement with one labelled file."""

    judge: str
    prompt_version: str
    labelled: str  # the file, as given
    labelled_digest: str  # BLAKE3 of its bytes: figures for an edited file are not mixed up with these
    items: int
    accuracy: float
    kappa: float | None  # None when it is undefined (every decided answer and label the same)
    confusion: Confusion
    misses: tuple[Miss, ...] = ()
    judge_calls: int = 0  # questions that reached the judge (the rest came from the cache or cassettes)
    at: float = 0.0


class CalibrationFile(Data, frozen=True, kw_only=True):
    """``<suite>/judge/calibration.json``: the latest figures per judge, prompt version and labelled file."""

    schema: int = 1
    entries: tuple[Calibration, ...] = ()


def read_labelled(path: Path) -> tuple[tuple[LabelledItem, ...], str]:
    """The items of a labelled file and the digest of its bytes; a ``UsageError`` naming line and fix."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read the labelled file {path}: {exc.strerror or exc}") from exc
    items: list[LabelledItem] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where}: not a JSON object ({exc.msg}); write one object per line") from exc
        if not isinstance(data, dict):
            raise UsageError(f"{where}: expected a JSON object, got {type(data).__name__}")
        unknown = sorted(set(data) - {"id", "expectation", "material", "label", "task", "grader_notes"})
        if unknown:
            raise UsageError(
                f"{where}: unknown field(s) {', '.join(unknown)}; a line holds expectation, material, label "
                "and optionally task, grader_notes and id"
            )
        for field in ("expectation", "material"):
            if not isinstance(data.get(field), str) or not data[field].strip():
                raise UsageError(f"{where}: $.{field} must be a non-empty string")
        given = data.get("label")
        if given is True or given is False:
            given = "pass" if given else "fail"
        if given not in ("pass", "fail"):
            raise UsageError(f'{where}: $.label must be "pass" or "fail" (the human verdict), got {given!r}')
        label: Label = "pass" if given == "pass" else "fail"
        ident = str(data.get("id") or f"line-{number}")
        if ident in seen:
            raise UsageError(
                f"{where}: id {ident!r} is used again (first on line {seen[ident]}); ids are unique"
            )
        seen[ident] = number
        task, notes = data.get("task", ""), data.get("grader_notes", "")
        for field, value in (("task", task), ("grader_notes", notes)):
            if not isinstance(value, str):
                raise UsageError(f"{where}: $.{field} must be a string")
        items.append(
            LabelledItem(
                id=ident,
                expectation=data["expectation"],
                material=data["material"],
                label=label,
                task=task,
                grader_notes=notes,
            )
        )
    if not items:
        raise UsageError(f"{path} holds no labelled item; write one JSON object per line")
    return tuple(items), blake3.blake3(raw).hexdigest()


async def calibrate(session: JudgeSession, path: Path) -> Calibration:
    """Ask ``session``'s judge about every item of the labelled file at ``path`` and score its agreement."""
    items, digest = read_labelled(path)
    before = session.judge.calls
    pairs: list[tuple[Label, Literal["pass", "fail", "undecided"], str]] = []
    for item in items:
        material = cut(item.material, MATERIAL_LIMIT, what="the material", cuts=[])
        task = item.task or _DEFAULT_TASK
        question = Question(
            kind="check",
            prompt=check_prompt(
                task=task, expectation=item.expectation, material=material, notes=item.grader_notes
            ),
            task=task,
            expectation=item.expectation,
            material=material,
            notes=item.grader_notes,
        )
        asked = await session.ask(question)
        verdict = asked.verdict
        judged: Literal["pass", "fail", "undecided"] = (
            "undecided" if not verdict.decided else "pass" if verdict.passed else "fail"
        )
        pairs.append((item.label, judged, verdict.reason or verdict.problem))
    return score(
        items,
        pairs,
        judge=session.spec.label,
        labelled=str(path),
        digest=digest,
        calls=session.judge.calls - before,
    )


def score(
    items: tuple[LabelledItem, ...],
    pairs: list[tuple[Label, Literal["pass", "fail", "undecided"], str]],
    *,
    judge: str,
    labelled: str,
    digest: str,
    calls: int = 0,
) -> Calibration:
    """Accuracy, Cohen's kappa, confusion counts and misses of (label, verdict, reason) ``pairs``."""
    counts = {
        f"{label}_{judged}": 0 for label in ("pass", "fail") for judged in ("pass", "fail", "undecided")
    }
    misses: list[Miss] = []
    for item, (label, judged, reason) in zip(items, pairs, strict=True):
        counts[f"{label}_{judged}"] += 1
        if judged != label:
            misses.append(
                Miss(id=item.id, expectation=item.expectation, label=label, judged=judged, reason=reason)
            )
    agree = counts["pass_pass"] + counts["fail_fail"]
    return Calibration(
        judge=judge,
        prompt_version=JUDGE_PROMPT_VERSION,
        labelled=labelled,
        labelled_digest=digest,
        items=len(items),
        accuracy=round(agree / len(items), 4),
        kappa=cohens_kappa(
            counts["pass_pass"], counts["pass_fail"], counts["fail_pass"], counts["fail_fail"]
        ),
        confusion=Confusion(**counts),
        misses=tuple(misses),
        judge_calls=calls,
        at=round(time.time(), 3),
    )


def cohens_kappa(pass_pass: int, pass_fail: int, fail_pass: int, fail_fail: int) -> float | None:
    """Cohen's kappa of two raters over two labels (rows: human pass/fail; columns: judge pass/fail).

    None when chance agreement is 1 (both raters gave one label only): kappa is undefined there.
    """
    n = pass_pass + pass_fail + fail_pass + fail_fail
    if n == 0:
        return None
    observed = (pass_pass + fail_fail) / n
    human_pass, judge_pass = (pass_pass + pass_fail) / n, (pass_pass + fail_pass) / n
    chance = human_pass * judge_pass + (1 - human_pass) * (1 - judge_pass)
    if chance >= 1:
        return None
    return round((observed - chance) / (1 - chance), 4)


def calibration_path(suite_root: str | Path) -> Path:
    return Path(suite_root).joinpath(*CALIBRATION_FILE)


def stored(suite_root: str | Path) -> CalibrationFile:
    """The suite's stored calibrations (none when the file is missing or unreadable)."""
    try:
        return msgspec.json.decode(calibration_path(suite_root).read_bytes(), type=CalibrationFile)
    except (OSError, msgspec.DecodeError):
        return CalibrationFile()


def store(suite_root: str | Path, result: Calibration, *, relative_to: Path) -> Path:
    """Keep ``result`` in the suite's calibration file, replacing the entry for the same judge, prompt
    version and labelled file; the file's path."""
    shown = os.path.relpath(Path(result.labelled).resolve(), relative_to.resolve())
    entry = msgspec.structs.replace(result, labelled=Path(shown).as_posix())
    kept = [
        e
        for e in stored(suite_root).entries
        if (e.judge, e.prompt_version, e.labelled) != (entry.judge, entry.prompt_version, entry.labelled)
    ]
    path = calibration_path(suite_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    encoded = msgspec.json.format(msgspec.json.encode(CalibrationFile(entries=(*kept, entry))), indent=2)
    write_atomic(path, encoded + b"\n")
    return path


def is_judge_note(note: str) -> bool:
    """Whether a run-start note is the judge's (who grades, or one ``calibration_notes`` wrote): the report
    keeps those with its judge section."""
    if note.startswith("judged checks are graded by "):
        return True
    return note.startswith(("judge ", "warning: judge ")) and any(
        marker in note for marker in (" calibration", "min_kappa")
    )


def calibration_notes(suite: Suite, spec: JudgeSpec) -> list[str]:
    """What a run says at start about its judge's stored calibration against the suite's ``min_kappa``."""
    entries = [
        e
        for e in stored(suite.root).entries
        if e.judge == spec.label and e.prompt_version == JUDGE_PROMPT_VERSION
    ]
    latest = max(entries, key=lambda e: e.at) if entries else None
    floor = suite.judge.min_kappa if suite.judge is not None else None
    if latest is None:
        if floor is None:
            return []
        return [
            f"warning: judge {spec.label} has no stored calibration for prompt {JUDGE_PROMPT_VERSION}; the "
            f"suite asks for kappa >= {floor:g}: measure it with `skillgym judge check LABELLED.jsonl "
            f"--judge {spec.label}`"
        ]
    kappa = "undefined" if latest.kappa is None else f"{latest.kappa:.2f}"
    figures = (
        f"kappa {kappa}, accuracy {latest.accuracy:.0%} on {latest.items} labelled items ({latest.labelled})"
    )
    if floor is not None and (latest.kappa is None or latest.kappa < floor):
        return [
            f"warning: judge {spec.label} agrees with human labels below the suite's min_kappa {floor:g}: "
            f"{figures}; its verdicts are not to be trusted as they are"
        ]
    return [f"judge {spec.label} calibration: {figures}"]
