"""--compare-baseline: pair this run's cases with an earlier report's, and say what changed honestly."""

from __future__ import annotations

import math
from pathlib import Path

import msgspec

from ..errors import UsageError
from ..stats import compare_paired, wilson_interval
from .aggregate import BaselineRow, BaselineSummary, CaseStats, Report

_decoder = msgspec.json.Decoder(Report)


def load_report(path: Path) -> Report:
    """Read a report.json (or the report.json inside a run directory)."""
    target = path / "report.json" if path.is_dir() else path
    try:
        return _decoder.decode(target.read_bytes())
    except FileNotFoundError:
        raise UsageError(
            f"baseline report {target} does not exist; pass a run directory or its report.json"
        ) from None
    except msgspec.ValidationError as exc:
        raise UsageError(
            f"baseline report {target} is not a skillgym report ({exc}); pass a report.json"
        ) from exc
    except msgspec.DecodeError as exc:
        raise UsageError(f"baseline report {target} is not valid JSON ({exc})") from exc


def newcombe_interval(a: CaseStats, b: CaseStats) -> tuple[float, float] | None:
    """Newcombe's hybrid-score interval for a difference of two pass rates (a minus b)."""
    ia, ib = wilson_interval(a.passed, a.trials), wilson_interval(b.passed, b.trials)
    if ia is None or ib is None:
        return None
    pa, pb = a.pass_rate, b.pass_rate
    d = pa - pb
    low = d - math.sqrt((pa - ia.low) ** 2 + (ib.high - pb) ** 2)
    high = d + math.sqrt((ia.high - pa) ** 2 + (pb - ib.low) ** 2)
    return low, high


def compare_to_baseline(current: Report, baseline: Report) -> BaselineSummary:
    """Per case (lane, case, condition, provider): improved, regressed, unchanged or inconclusive."""

    def key(s: CaseStats) -> tuple[str, str, str, str]:
        return (s.lane, s.case_id, s.condition, s.provider)

    before = {key(s): s for s in baseline.cases}
    now = {key(s): s for s in current.cases}
    rows: list[BaselineRow] = []
    pairs: list[tuple[float, float]] = []
    for k in [*now, *(k for k in before if k not in now)]:
        cur, old = now.get(k), before.get(k)
        lane, case_id, condition, provider = k
        status: str
        if cur is None:
            status = "missing"
        elif old is None:
            status = "new"
        elif cur.fingerprint != old.fingerprint:
            status = "fingerprint-changed"  # a different case: comparing would be silently wrong
        else:
            pairs.append((cur.pass_rate, old.pass_rate))
            interval = newcombe_interval(cur, old)
            if interval is not None and interval[0] > 0:
                status = "improved"
            elif interval is not None and interval[1] < 0:
                status = "regressed"
            elif cur.pass_rate == old.pass_rate:
                status = "unchanged"
            else:
                status = "inconclusive"
        rows.append(
            BaselineRow(
                lane=lane,
                case_id=case_id,
                condition=condition,
                provider=provider,
                baseline_pass_rate=old.pass_rate if old else None,
                current_pass_rate=cur.pass_rate if cur else None,
                delta=(cur.pass_rate - old.pass_rate) if cur and old else None,
                status=status,
            )
        )
    return BaselineSummary(
        baseline_run=baseline.run_id, rows=tuple(rows), overall=compare_paired("current vs baseline", pairs)
    )
