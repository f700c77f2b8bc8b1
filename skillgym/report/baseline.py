"""--compare-baseline: pair this run's cases with an earlier report's, and say what changed honestly."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Final, TypeAlias

import msgspec

from ..errors import UsageError
from ..multiplicity import fisher_exact_p, holm_adjust
from ..results import NOT_THE_AGENTS
from ..score_intervals import rate_difference_interval
from .aggregate import (
    REPORT_SCHEMA,
    BaselineRow,
    BaselineSummary,
    CaseStats,
    Report,
    mean_pair,
    most_trials,
    pair_without_provider_errors,
    settle,
    verdict_pair,
)
from .flaky import flaky_cases

Key: TypeAlias = tuple[str, str, str, str]  # lane, case, condition, provider
_decoder = msgspec.json.Decoder(Report)


class _Schema(msgspec.Struct):
    """Only the version: read first, so a report from another version is judged before its fields are."""

    schema: int


_schema_decoder = msgspec.json.Decoder(_Schema)


def load_report(path: Path, *, what: str = "baseline report") -> Report:
    """Read a report.json (or the report.json inside a run directory) written by this or an earlier version.

    ``what`` names the file in errors ("baseline report", "run A").

    A schema-1 report keeps what both versions compute alike (counts, per-case statistics, tokens), and its
    cases get the rates for verdicts from the error classes of its failures; its comparisons and baseline
    counted every error as a failure, and its lane intervals mixed conditions, so they are dropped rather
    than passed off as this version's. ``schema`` stays 1.
    """
    target = path / "report.json" if path.is_dir() else path
    try:
        data = target.read_bytes()
        schema = _schema_decoder.decode(data).schema
        _check_schema(schema, target, what)
        if schema == 1:
            return msgspec.convert(_with_timeouts(_from_schema_1(msgspec.json.decode(data))), Report)
        if schema == 2:
            return msgspec.convert(_with_timeouts(msgspec.json.decode(data)), Report)
        return _decoder.decode(data)
    except FileNotFoundError:
        raise UsageError(f"{what} {target} does not exist; pass a run directory or its report.json") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {target} is a folder; pass a run directory or its report.json") from None
    except msgspec.ValidationError as exc:
        raise UsageError(f"{what} {target} is not a skillgym report ({exc}); pass a report.json") from exc
    except msgspec.DecodeError as exc:
        raise UsageError(f"{what} {target} is not valid JSON ({exc})") from exc


def _check_schema(schema: int, target: Path, what: str) -> None:
    if schema > REPORT_SCHEMA:
        raise UsageError(
            f"{what} {target} has report schema {schema}, newer than this skillgym reads "
            f"(schema {REPORT_SCHEMA} and earlier); upgrade skillgym, or compare with a report this version "
            "wrote (`skillgym report RUN_DIR` rewrites a run's report from its events)"
        )
    if schema < 1:
        raise UsageError(
            f"{what} {target} has report schema {schema}, which no skillgym writes; "
            "pass a report.json a skillgym run wrote"
        )


def _with_timeouts(doc: Any) -> Any:
    """Before schema 3 a case did not count its timeouts apart; its failures' error classes do."""
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        return doc  # not a report: converting it fails with a message that says so
    timeouts: dict[str, int] = defaultdict(int)
    for failure in doc.get("failures", []):
        if isinstance(failure, dict) and failure.get("error_class") == "timeout":
            timeouts[str(failure.get("key", "")).rsplit("/", 1)[0]] += 1
    cases = [
        {**case, "timeouts": timeouts.get("/".join(str(case.get(k)) for k in _CASE_KEY), 0)}
        if isinstance(case, dict)
        else case
        for case in doc["cases"]
    ]
    return {**doc, "cases": cases}


_CASE_KEY = ("lane", "case_id", "condition", "provider")


def _from_schema_1(doc: Any) -> Any:
    if not isinstance(doc, dict):
        return doc  # not an object: converting it fails with a message that says so
    lanes = [
        {k: v for k, v in lane.items() if k != "case_pass_interval"} if isinstance(lane, dict) else lane
        for lane in doc.get("lane_summaries", [])
    ]
    # A case's trials are keyed lane/case/condition/provider/trial-N; its errored ones are among the failures.
    not_agents: dict[str, int] = defaultdict(int)
    for failure in doc.get("failures", []):
        if isinstance(failure, dict) and failure.get("error_class") in NOT_THE_AGENTS:
            not_agents[str(failure.get("key", "")).rsplit("/", 1)[0]] += 1
    return {
        **doc,
        "lane_summaries": lanes,
        "cases": [_case_from_schema_1(case, not_agents) for case in doc.get("cases", [])],
        "condition_summaries": [],
        "condition_comparisons": [],
        "provider_comparisons": [],
        "baseline": None,
    }


def _case_from_schema_1(case: Any, not_agents: dict[str, int]) -> Any:
    if not isinstance(case, dict) or not all(isinstance(case.get(k), int) for k in ("trials", "passed")):
        return case  # not a case: converting it fails with a message that says so
    key = "/".join(str(case.get(k)) for k in _CASE_KEY)
    left_out = not_agents.get(key, 0)
    counted = case["trials"] - left_out
    return {
        **case,
        "errored_not_agents": left_out,
        "pass_rate_for_verdicts": case["passed"] / counted if counted > 0 else None,
    }


# A row is flagged improved or regressed when its Holm-adjusted p-value is below this (1 - 95%).
FLAG_ALPHA: Final = 0.05


def _status(cur: CaseStats | None, old: CaseStats | None) -> str:
    """The row's status before its test: why it is not compared, or "compared"."""
    if cur is None:
        return "missing"
    if old is None:
        return "new"
    if cur.fingerprint != old.fingerprint:
        return "fingerprint-changed"  # a different case: comparing would be silently wrong
    if verdict_pair(cur, old) is None:
        return "left-out"  # a side has no trial but errors not the agent's: nothing to compare
    return "compared"


def _fisher(cur: CaseStats, old: CaseStats, *, without_provider_errors: bool) -> float | None:
    """The row's exact p-value over trials for verdicts (less provider errors if asked); None without any."""
    n_cur = cur.verdict_trials - (cur.provider_errors if without_provider_errors else 0)
    n_old = old.verdict_trials - (old.provider_errors if without_provider_errors else 0)
    if not n_cur or not n_old:
        return None
    return fisher_exact_p(cur.passed, n_cur, old.passed, n_old)


def _flag(delta: float, p_holm: float | None) -> str:
    if delta == 0.0:
        return "unchanged"
    if p_holm is not None and p_holm < FLAG_ALPHA:
        return "improved" if delta > 0 else "regressed"
    return "inconclusive"


def _holm_by_row(p_values: dict[int, float | None]) -> dict[int, float | None]:
    tested = [i for i, p in p_values.items() if p is not None]
    # A dict, not tested.index(i): a run of thousands of rows would otherwise pay for every pair of them.
    adjusted = dict(zip(tested, holm_adjust([p for p in p_values.values() if p is not None]), strict=True))
    return {i: adjusted.get(i) for i in p_values}


def _rows(
    keys: list[tuple[str, str, str, str]], now: dict[Key, CaseStats], before: dict[Key, CaseStats]
) -> tuple[BaselineRow, ...]:
    """Every row with its status; the compared rows flagged by Holm's step-down over all of them.

    Holm controls the chance of even one false flag across the cases at 5%; each row's raw p-value stays
    beside the adjusted one. A flag that the rates without provider errors (timeouts still fail, Holm over
    that family) do not repeat is inconclusive and says how many provider errors decided it.
    """
    statuses = [_status(now.get(k), before.get(k)) for k in keys]
    compared = [i for i, status in enumerate(statuses) if status == "compared"]
    raw = {i: _fisher(now[keys[i]], before[keys[i]], without_provider_errors=False) for i in compared}
    graded = {i: _fisher(now[keys[i]], before[keys[i]], without_provider_errors=True) for i in compared}
    holm, holm_graded = _holm_by_row(raw), _holm_by_row(graded)
    rows = []
    for i, k in enumerate(keys):
        cur, old = now.get(k), before.get(k)
        status, depends = statuses[i], 0
        if status == "compared":
            assert cur is not None and old is not None
            pair = verdict_pair(cur, old)
            assert pair is not None
            status = _flag(pair[0] - pair[1], holm[i])
            errors = cur.provider_errors + old.provider_errors
            without = pair_without_provider_errors(cur, old)
            read = _flag(without[0] - without[1], holm_graded[i]) if without is not None else "inconclusive"
            if errors and status in _FLAGS and read != status:
                status, depends = "inconclusive", errors
        rows.append(_row(k, cur, old, status, depends, raw.get(i), holm.get(i), row_test(len(compared))))
    return tuple(rows)


def row_test(compared: int) -> str:
    """The test behind a row's flag, in words."""
    return f"two-sided Fisher exact test over trials; Holm's step-down over {compared} compared row(s)"


OVERALL_TEST: Final = (
    "paired per case (lane, case): Newcombe's square-and-add interval over case means and an exact sign "
    "test; a verdict needs both"
)


_FLAGS = frozenset({"improved", "regressed"})
_COMPARED = frozenset({"improved", "regressed", "unchanged", "inconclusive"})


# `skillgym compare`'s word for each status: a conclusive rise fixes a case, a row only the baseline has
# was removed; the rest read the same.
CHANGES: Final = {
    "improved": "fixed",
    "regressed": "regressed",
    "unchanged": "unchanged",
    "inconclusive": "inconclusive",
    "new": "new",
    "missing": "removed",
    "fingerprint-changed": "fingerprint-changed",
    "left-out": "left-out",
}


def _row(
    key: Key,
    cur: CaseStats | None,
    old: CaseStats | None,
    status: str,
    depends: int,
    p_value: float | None,
    p_holm: float | None,
    test: str | None,
) -> BaselineRow:
    lane, case_id, condition, provider = key
    now = cur.pass_rate_for_verdicts if cur else None
    before = old.pass_rate_for_verdicts if old else None
    compared = status in _COMPARED and cur is not None and old is not None
    return BaselineRow(
        lane=lane,
        case_id=case_id,
        condition=condition,
        provider=provider,
        baseline_pass_rate_for_verdicts=before,
        current_pass_rate_for_verdicts=now,
        baseline_errored=old.errored if old else None,
        current_errored=cur.errored if cur else None,
        baseline_errored_not_agents=old.errored_not_agents if old else None,
        current_errored_not_agents=cur.errored_not_agents if cur else None,
        delta=now - before if status in _COMPARED and now is not None and before is not None else None,
        status=status,
        baseline_pass_rate_excluding_errors=old.pass_rate_excluding_errors if old else None,
        current_pass_rate_excluding_errors=cur.pass_rate_excluding_errors if cur else None,
        depends_on_errors=depends,
        p_value=p_value,
        p_holm=p_holm,
        change=CHANGES[status],
        baseline_passed=old.passed if old else None,
        baseline_trials=old.verdict_trials if old else None,
        current_passed=cur.passed if cur else None,
        current_trials=cur.verdict_trials if cur else None,
        interval=(
            rate_difference_interval(cur.passed, cur.verdict_trials, old.passed, old.verdict_trials)
            if compared and cur is not None and old is not None
            else None
        ),
        test=test if compared else None,
    )


Pairs = list[tuple[float, float]]


def _pairs_per_case(
    rows: tuple[BaselineRow, ...], now: dict[Key, CaseStats], before: dict[Key, CaseStats]
) -> tuple[Pairs, Pairs, int, int]:
    """One pair per case (lane, case): the means over its compared rows, for verdicts and without provider
    errors; the cases left out for errors; the provider errors of the compared rows."""
    compared: dict[tuple[str, str], Pairs] = defaultdict(list)
    without: dict[tuple[str, str], Pairs] = defaultdict(list)
    left_out: set[tuple[str, str]] = set()
    provider_errors = 0
    for r in rows:
        key = (r.lane, r.case_id, r.condition, r.provider)
        cur, old = now.get(key), before.get(key)
        if r.status in _COMPARED and cur is not None and old is not None:
            if (pair := verdict_pair(cur, old)) is not None:
                compared[(r.lane, r.case_id)].append(pair)
            if (pair := pair_without_provider_errors(cur, old)) is not None:
                without[(r.lane, r.case_id)].append(pair)
            provider_errors += cur.provider_errors + old.provider_errors
        elif r.status == "left-out":
            left_out.add((r.lane, r.case_id))
    return _means(compared), _means(without), len(left_out - compared.keys()), provider_errors


def _means(by_case: dict[tuple[str, str], Pairs]) -> Pairs:
    return [mean_pair(pairs) for pairs in by_case.values()]


def compare_to_baseline(current: Report, baseline: Report) -> BaselineSummary:
    """Pair this run with an earlier report: what ``--compare-baseline`` and ``skillgym compare`` both show.

    Each (lane, case, condition, provider) row reads fixed, regressed, unchanged or inconclusive, or says
    why it was not compared (new, removed, fingerprint-changed, left-out); the overall comparison pairs
    per case, the unit of analysis. Each run's flaky cases come along.
    """

    def key(s: CaseStats) -> Key:
        return (s.lane, s.case_id, s.condition, s.provider)

    before = {key(s): s for s in baseline.cases}
    now = {key(s): s for s in current.cases}
    rows = _rows([*now, *(k for k in before if k not in now)], now, before)
    pairs, without, left_out, provider_errors = _pairs_per_case(rows, now, before)
    trials = max(most_trials(current.cases), most_trials(baseline.cases))
    overall, depends = settle("current vs baseline", pairs, without, provider_errors, trials)
    changes = dict.fromkeys(CHANGES.values(), 0)
    for r in rows:
        changes[CHANGES[r.status]] += 1
    return BaselineSummary(
        baseline_run=baseline.run_id,
        rows=rows,
        overall=overall,
        cases_left_out_for_errors=left_out,
        overall_depends_on_errors=depends,
        current_run=current.run_id,
        baseline_suite=baseline.suite,
        current_suite=current.suite,
        baseline_skill_hash=baseline.skill_hash,
        current_skill_hash=current.skill_hash,
        changes=changes,
        row_test=row_test(sum(1 for r in rows if r.status in _COMPARED)),
        overall_test=OVERALL_TEST,
        flaky_baseline=flaky_cases(baseline.cases),
        flaky_current=flaky_cases(current.cases),
    )
