"""The judge of a run: ``--judge`` and its flags, the session a run grades with, and its notes at start."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import UsageError
from ..model import Suite
from ..sandboxes.base import SandboxBackend
from .calibration import calibration_notes
from .flags import DEFAULT_JUDGE_TIMEOUT_S, NO_CACHE
from .grading import needs_judge
from .judges import REPLAY, JudgeSpec, open_judge, parse_spec
from .session import JudgeSession
from .store import VerdictStore, default_cache_dir, verdicts_dir


def run_spec(suite: Suite, given: str | None) -> JudgeSpec | None:
    """The run's judge: ``--judge`` as given, else a replay of the suite's declared judge, else None."""
    declared = parse_spec(suite.judge.judge, flag="judged_by()") if suite.judge is not None else None
    if given is None:
        return JudgeSpec(provider=REPLAY, recorded=declared) if declared is not None else None
    spec = parse_spec(given)
    if spec.provider == REPLAY and spec.recorded is None and declared is not None:
        return JudgeSpec(provider=REPLAY, recorded=declared)
    return spec


async def open_session(
    suite: Suite,
    *,
    planned: Iterable[str] = (),
    judge: str | None,
    record: bool = False,
    cache: str | None = None,
    timeout_s: float = DEFAULT_JUDGE_TIMEOUT_S,
    sandbox: SandboxBackend | None = None,
    pairwise: bool = False,
    workdir: str,
) -> tuple[JudgeSession | None, tuple[str, ...]]:
    """The run's judge session (None when none of the ``planned`` case ids needs one, no ``judge`` is named
    and no ``pairwise`` comparison is asked for) and its notes for run start. The judge's CLI runs in a
    folder per question below ``workdir`` (the run's ``judge/``).

    A plan with judged checks and no judge to grade them is refused here, before anything runs.
    """
    wanted = set(planned)
    judged = [c.id for c in suite.cases if c.id in wanted and needs_judge(c)]
    spec = run_spec(suite, judge)
    if not judged and not pairwise and judge is None:
        return None, ()
    if spec is None and not judged:
        raise UsageError(
            "no judge: pass --judge PROVIDER:MODEL (for example claude:claude-sonnet-4-5, or stub to try "
            "the plumbing), or name the suite's judge with skillgym.judged_by(...) to replay its verdicts"
        )
    if spec is None:
        shown = ", ".join(judged[:5]) + (f" and {len(judged) - 5} more" if len(judged) > 5 else "")
        raise UsageError(
            f"{len(judged)} planned case(s) have judged checks ({shown}) and the run has no judge: pass "
            "--judge PROVIDER:MODEL (for example claude:claude-sonnet-4-5, or stub to try the plumbing), or "
            "name the suite's judge with skillgym.judged_by(...) to replay its recorded verdicts"
        )
    if record and spec.provider == REPLAY:
        raise UsageError(
            f"--judge-record saves a real judge's answers; --judge {judge or 'replay'} gives none"
        )
    opened = await open_judge(spec, suite_root=suite.root, sandbox=sandbox, timeout_s=timeout_s)
    store = VerdictStore(
        cassettes=verdicts_dir(suite.root),
        cache=None if cache == NO_CACHE else Path(cache) if cache else default_cache_dir(),
        record=record,
    )
    notes = [
        f"judged checks are graded by {spec.label}"
        + (" (recorded verdicts only)" if spec.provider == REPLAY else "")
    ]
    notes += calibration_notes(suite, spec)
    return JudgeSession(opened, store, workdir=workdir), tuple(notes)
