"""`export skill-creator`: how checks become expectations, the statistics, and the refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from skillgym.errors import UsageError
from skillgym.evalsformat import skill_creator as fmt
from skillgym.evalsformat.exporter import _evals, export_skill_creator
from skillgym.model import Budget, ExecutionCase, FileExists, JudgedCheck
from skillgym.results import CheckOutcome, Grade
from skillgym.scaffold import init_suite
from tests.conftest import run_cli, run_dirs
from tests.results import result_for

from .skill import EVALS, TRIGGERS, make_skill

CASE = ExecutionCase(
    id="e",
    category="c",
    budget=Budget(timeout_s=1),
    task="t",
    judged=(
        JudgedCheck(id="judge-1", expectation="names July"),
        JudgedCheck(id="judge-2", expectation="cites data"),
    ),
    verifiers=(FileExists(id="file-exists-1", path="report.md", description="report.md is written"),),
)
KEY = "execution/e/self-load/stub/trial-1"


def test_judged_outcomes_come_first_with_the_judges_evidence() -> None:
    checks = (
        CheckOutcome(
            id="file-exists-1", kind="verifier", required=True, passed=True, message="report.md exists"
        ),
        CheckOutcome(
            id="judge-1",
            kind="judge",
            required=True,
            passed=True,
            message="the report says so",
            expectation="names July",
            evidence="'July was the hottest month'",
        ),
        CheckOutcome(id="judge-2", kind="judge", required=True, passed=False, expectation="cites data"),
        CheckOutcome(id="extra", kind="workflow", required=False, passed=False, message="no match"),
    )
    result = result_for(KEY, grade=Grade(passed=False, score=0.5, checks=checks))
    rows = fmt.expectations(result, CASE)
    assert rows == [
        {
            "text": "names July",
            "passed": True,
            "evidence": "'July was the hottest month' (the report says so)",
        },
        {"text": "cites data", "passed": False, "evidence": ""},
        {"text": "report.md is written", "passed": True, "evidence": "report.md exists"},
        {"text": "step 'extra' holds", "passed": False, "evidence": "no match"},
    ]
    assert fmt.summary(rows) == {"passed": 2, "failed": 2, "total": 4, "pass_rate": 0.5}


def test_an_ungraded_judged_check_is_never_shown_as_met() -> None:
    unjudged = fmt.expectations(result_for(KEY, grade=Grade(passed=True, score=1.0)), CASE)
    assert [(r["passed"], r["evidence"]) for r in unjudged] == [(False, fmt.NOT_JUDGED)] * 2
    errored = result_for(KEY, "errored", error_class="timeout", error_message="ran past 600 s")
    rows = fmt.expectations(errored, CASE)
    assert rows[0] == {
        "text": "names July",
        "passed": False,
        "evidence": "not graded: the trial errored (timeout: ran past 600 s)",
    }
    assert fmt.grading(errored, CASE, None, 0)["execution_metrics"]["errors_encountered"] == 1


def test_statistics_as_skill_creator_computes_them() -> None:
    # aggregate_benchmark.calculate_stats: mean, sample standard deviation, min, max, rounded to 4 places
    assert fmt.stats([0.5, 1.0, 0.75]) == {"mean": 0.75, "stddev": 0.25, "min": 0.5, "max": 1.0}
    assert fmt.stats([42.0]) == {"mean": 42.0, "stddev": 0.0, "min": 42.0, "max": 42.0}
    assert fmt.stats([]) is None
    runs = [
        {"configuration": "with_skill", "result": {"pass_rate": 1.0, "time_seconds": 10.0, "tokens": 300}},
        {"configuration": "with_skill", "result": {"pass_rate": 0.5, "time_seconds": 12.0, "tokens": None}},
        {
            "configuration": "without_skill",
            "result": {"pass_rate": 0.25, "time_seconds": 13.5, "tokens": None},
        },
    ]
    summary = fmt.run_summary(runs, ["with_skill", "without_skill"])
    assert summary["with_skill"]["tokens"] == {"mean": 300.0, "stddev": 0.0, "min": 300.0, "max": 300.0}
    assert summary["without_skill"]["tokens"] is None  # no provider reported any: unknown, not zero
    assert summary["delta"] == {"pass_rate": "+0.50", "time_seconds": "-2.5", "tokens": None}


@pytest.fixture(scope="module")
def native_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stub run of the suite `skillgym init` drafts: cases that were never imported."""
    root = tmp_path_factory.mktemp("native")
    init_suite(make_skill(root), root / "suite")
    ran = run_cli("run", "--suite", "suite", "--provider", "stub", "--output", "runs", cwd=root)
    assert ran.returncode == 0, ran.stderr
    (run_dir,) = run_dirs(root / "runs")
    return run_dir


def test_cases_that_were_not_imported_are_numbered_and_graded_by_their_checks(
    native_run: Path, tmp_path: Path
) -> None:
    done = export_skill_creator(native_run, tmp_path / "out")
    assert (done.evals, done.runs, done.trigger_queries) == (3, 6, 0)
    metadata = [json.loads((tmp_path / f"out/eval-{n}/eval_metadata.json").read_text()) for n in (1, 2, 3)]
    # Numbered in the suite's order (its files sorted: execution/ before prompt/), not the run's.
    assert [m["eval_name"] for m in metadata] == [
        "csv-summary-task",
        "csv-summary-trigger",
        "csv-summary-unrelated",
    ]
    grading = json.loads((tmp_path / "out/eval-1/with_skill/run-1/grading.json").read_text())
    assert [(e["text"], e["passed"]) for e in grading["expectations"]] == [
        ("verifier 'file-exists-1' holds", True),
        ("verifier 'file-contains-1' holds", True),
    ]
    assert grading["summary"] == {"passed": 2, "failed": 0, "total": 2, "pass_rate": 1.0}
    assert not (
        tmp_path / "out/evals.json"
    ).exists()  # nothing was imported, so there is nothing to give back
    assert any("left out condition 'preloaded'" in n for n in done.notes)
    metadata = json.loads((tmp_path / "out/benchmark.json").read_text())["metadata"]
    # No judge graded this run: skill-creator's grading model is unknown, never guessed.
    assert (metadata["analyzer_model"], metadata["skillgym"]) == (None, {"judges": []})


def test_the_configuration_flags(native_run: Path, tmp_path: Path) -> None:
    done = export_skill_creator(native_run, tmp_path / "out", with_skill="preloaded", without_skill="stale")
    bench = json.loads((tmp_path / "out/benchmark.json").read_text())
    assert {r["configuration"] for r in bench["runs"]} == {"with_skill", "without_skill"}
    assert any("left out condition 'self-load'" in n for n in done.notes)
    with pytest.raises(UsageError, match="--with-skill and --without-skill are both 'none'"):
        export_skill_creator(native_run, tmp_path / "o2", with_skill="none")
    with pytest.raises(
        UsageError, match=r"no trials under 'x' or 'y' \(its conditions: none, preloaded, self-load, stale\)"
    ):
        export_skill_creator(native_run, tmp_path / "o3", with_skill="x", without_skill="y")
    with pytest.raises(UsageError, match=r"no trials of provider 'claude' \(it has: stub\)"):
        export_skill_creator(native_run, tmp_path / "o4", provider="claude")
    assert not (tmp_path / "o2").exists() and not (tmp_path / "o3").exists()


def test_an_existing_export_is_replaced_only_with_force(native_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    with pytest.raises(
        UsageError, match=r"not overwriting .*out: it is not empty; choose another folder or pass --force"
    ):
        export_skill_creator(native_run, out)
    assert [p.name for p in out.iterdir()] == ["mine.txt"]
    export_skill_creator(native_run, out, force=True)
    assert not (out / "mine.txt").exists() and (out / "benchmark.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder left beside it


def test_a_moved_suite_is_found_with_the_suite_flag(native_run: Path, tmp_path: Path) -> None:
    moved = tmp_path / "run"
    shutil.copytree(native_run, moved)
    suite = native_run.parent.parent / "suite"
    hidden = tmp_path / "suite-elsewhere"
    shutil.move(suite, hidden)
    try:
        with pytest.raises(UsageError, match=r"cannot be loaded.*pass --suite DIR"):
            export_skill_creator(moved, tmp_path / "out")
        assert export_skill_creator(moved, tmp_path / "out", suite=hidden).evals == 3
    finally:
        shutil.move(hidden, suite)


@pytest.mark.parametrize(
    ("tag", "eval_id"),
    [("eval-id=3", 3), ('eval-id="01"', "01"), ('eval-id="hot"', "hot"), ("eval-id=hot", "hot")],
)
def test_an_imported_eval_gets_its_own_id_back_with_its_type(tag: str, eval_id: int | str) -> None:
    case = msgspec.structs.replace(CASE, tags=("agent-skills-eval", tag))
    (item,) = _evals([result_for(KEY)], {("execution", "e"): case})
    assert item.eval_id == eval_id


def _finished_in_reverse(run_dir: Path) -> None:
    """Rewrite the run's log as if its trials had finished in the reverse order (they may, in parallel)."""
    path = run_dir / "events.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    at = [n for n, line in enumerate(lines) if json.loads(line)["type"] == "trial.finish"]
    for n, line in zip(at, [lines[n] for n in reversed(at)], strict=True):
        lines[n] = line
    path.write_text("".join(lines))


def test_evals_and_trigger_queries_come_back_in_the_file_s_order_however_the_trials_finished(
    tmp_path: Path,
) -> None:
    make_skill(tmp_path)
    for name in ("evals", "trigger-evals"):
        done = run_cli("import", "evals", f"csv-summary/evals/{name}.json", "--suite", "suite", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    ran = run_cli(
        "run", "--suite", "suite", "--provider", "stub", "--output", "runs", "--judge", "stub",
        "--condition", "none", "--condition", "self-load", cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode in (0, 1), ran.stderr
    (run_dir,) = run_dirs(tmp_path / "runs")
    _finished_in_reverse(run_dir)
    export_skill_creator(run_dir, tmp_path / "out")
    out = tmp_path / "out"
    assert json.loads((out / "evals.json").read_text()) == EVALS
    assert json.loads((out / "trigger-evals.json").read_text()) == TRIGGERS
    bench = json.loads((out / "benchmark.json").read_text())
    assert bench["metadata"]["evals_run"] == [1, 2, 7]
    assert [r["eval_id"] for r in bench["runs"] if r["configuration"] == "with_skill"] == [1, 2, 7]
