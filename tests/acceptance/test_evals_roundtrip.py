"""Acceptance: evals.json and a trigger set -> `import evals` -> `list` -> stub run -> `export skill-creator`.

The export gives back every field the format defines: the eval set and the trigger set themselves, and
per eval and configuration the grading, timing and benchmark files skill-creator's tools read, checked
against a schema written from its documented format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from skillgym.loader import load_suite
from tests.conftest import run_cli, run_dirs
from tests.evalsformat import skill_creator_schema as schema
from tests.evalsformat.skill import EVALS, TRIGGERS, make_skill

# Token usage the stub reports per condition: the export must carry it as the trials' tokens.
TOKENS = {"self-load": 300, "none": 100}
# What the stub agent answers per condition: with the skill, an answer that meets every expectation (for
# the word-matching stub judge); without it, one that meets none.
ANSWERS = {
    "self-load": "report.md names July as the hottest month; the skill ran its script, not pandas; the south "
    "region sold most; the file has no data in any column, so no inventing figures.",
    "none": "I could not finish this.",
}
NOT_JUDGED = "not graded: the run had no judge"


def _stub_with_usage(suite: Path, case_id: str) -> None:
    for condition, total in TOKENS.items():
        lines = [
            {"type": "message", "role": "assistant", "text": f"I worked on {case_id}."},
            {"type": "usage", "input": total - 20, "output": 20, "total": total},
            {"type": "result", "text": ANSWERS[condition]},
        ]
        path = suite / "stubs" / case_id / f"{condition}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _load(path: Path, kind: type[Any]) -> Any:
    return msgspec.json.decode(path.read_bytes(), type=kind)


def test_import_run_export_gives_every_field_back(tmp_path: Path) -> None:
    make_skill(tmp_path)
    done = run_cli("import", "evals", "csv-summary/evals/evals.json", "--suite", "suite", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (
        "imported 3 evals of the skill 'csv-summary' from csv-summary/evals/evals.json into suite/"
        in done.stdout
    )
    done = run_cli(
        "import", "evals", "csv-summary/evals/trigger-evals.json", "--suite", "suite", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    suite = tmp_path / "suite"
    for eval_id in (1, 2, 7):
        _stub_with_usage(suite, f"csv-summary-eval-{eval_id}")

    listed = run_cli("list", "--suite", "suite", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "6 case(s)" in listed.stdout

    # expected_output is the cases' grader notes (the judge's reference), not their description.
    cases = {c.id: c for c in load_suite(suite).cases}
    for item in EVALS["evals"]:
        case = cases[f"csv-summary-eval-{item['id']}"]
        assert (case.grader_notes, case.description) == (item["expected_output"], "")

    judge = ["--judge", "stub"]
    ran = run_cli(
        "run", "--suite", "suite", "--provider", "stub", "--trials", "2", "--output", "runs",
        "--condition", "none", "--condition", "self-load", "--condition", "stale", *judge,
        cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode in (0, 1), ran.stderr
    (run_dir,) = run_dirs(tmp_path / "runs")

    exported = run_cli("export", "skill-creator", str(run_dir), "out", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert (
        "exported 3 eval(s), 12 run(s) (self-load as with_skill, none as without_skill) to out/"
        in exported.stdout
    )
    assert "left out condition 'stale' (12 trials)" in exported.stderr
    assert "trigger queries count self-load trials only" in exported.stderr
    out = tmp_path / "out"

    # The eval set and the trigger set come back as they were imported.
    assert json.loads((out / "evals.json").read_text()) == EVALS
    assert json.loads((out / "trigger-evals.json").read_text()) == TRIGGERS

    # skill-creator's workspace layout, each file with the documented fields.
    evals = {e["id"]: e for e in EVALS["evals"]}
    for eval_id, item in evals.items():
        folder = out / f"eval-{eval_id}"
        metadata = _load(folder / "eval_metadata.json", schema.EvalMetadata)
        assert metadata.eval_id == eval_id and metadata.prompt == item["prompt"]
        assert metadata.eval_name == item.get("eval_name", f"csv-summary-eval-{eval_id}")
        texts = item.get("expectations", item.get("assertions")) or [item["expected_output"]]
        assert metadata.assertions == texts
        for config, condition in (("with_skill", "self-load"), ("without_skill", "none")):
            for run in (1, 2):
                run_dir_out = folder / config / f"run-{run}"
                # skill-creator's viewer finds a run by its outputs/ and reads eval_metadata.json beside it.
                assert (run_dir_out / "outputs/final_answer.md").read_text() == ANSWERS[condition]
                assert _load(run_dir_out / "eval_metadata.json", schema.EvalMetadata) == metadata
                grading = _load(run_dir_out / "grading.json", schema.Grading)
                assert [e.text for e in grading.expectations] == texts
                met = judge != [] and config == "with_skill"
                assert [e.passed for e in grading.expectations] == [met] * len(texts)
                if judge:  # the judge's quote from the answer is the evidence
                    assert all(e.evidence for e in grading.expectations)
                    assert all("hottest month" in e.evidence for e in grading.expectations if e.passed)
                else:  # no judge ran, so no expectation is shown as met, and the evidence says why
                    assert all(e.evidence.startswith(NOT_JUDGED) for e in grading.expectations)
                n = len(texts) if met else 0
                assert grading.summary == schema.GradingSummary(
                    passed=n, failed=len(texts) - n, total=len(texts), pass_rate=1.0 if met else 0.0
                )
                timing = _load(run_dir_out / "timing.json", schema.Timing)
                assert timing.total_tokens == TOKENS[condition]
                assert timing.duration_ms >= 0 and timing.total_duration_seconds >= 0

    benchmark = _load(out / "benchmark.json", schema.Benchmark)
    assert benchmark.metadata.skill_name == "csv-summary"
    assert benchmark.metadata.evals_run == [1, 2, 7]
    assert benchmark.metadata.runs_per_configuration == 2
    # The stub judge graded the expectations: it is the model skill-creator's grading came from.
    assert benchmark.metadata.analyzer_model == "stub"
    raw = json.loads((out / "benchmark.json").read_text())
    assert raw["metadata"]["skillgym"] == {"judges": ["stub"]}
    assert [(r.eval_id, r.configuration, r.run_number) for r in benchmark.runs] == [
        (eval_id, config, run)
        for config in ("with_skill", "without_skill")
        for eval_id in (1, 2, 7)
        for run in (1, 2)
    ]
    assert {r.eval_name for r in benchmark.runs if r.eval_id == 2} == {"sales-by-region"}
    summary = benchmark.run_summary
    assert summary.with_skill.tokens == schema.Stat(mean=300, stddev=0, min=300, max=300)
    assert summary.without_skill.tokens == schema.Stat(mean=100, stddev=0, min=100, max=100)
    assert summary.delta.tokens == "+200"
    assert summary.delta.pass_rate == ("+1.00" if judge else "+0.00")
    assert any("left out condition 'stale'" in note for note in benchmark.notes)

    triggers = _load(out / "trigger-results.json", schema.TriggerResults)
    assert triggers.skill_name == "csv-summary"
    assert triggers.description.startswith("Summarise a CSV file into a short markdown report")
    assert [(r.query, r.should_trigger) for r in triggers.results] == [
        (t["query"], t["should_trigger"]) for t in TRIGGERS
    ]
    assert all(r.runs == 2 for r in triggers.results)
    # The stub names the skill for the two should-trigger queries, and no skill for the third.
    assert [(r.triggers, r.trigger_rate, r.pass_) for r in triggers.results] == [
        (2, 1.0, True),
        (2, 1.0, True),
        (0, 0.0, True),
    ]
    assert triggers.summary.total == 3


def test_a_malformed_eval_file_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    doc = json.loads((skill / "evals/evals.json").read_text())
    doc["evals"][2]["expectations"] = ["fine", 3]
    (skill / "evals/evals.json").write_text(json.dumps(doc))
    done = run_cli("import", "evals", "csv-summary/evals/evals.json", "--suite", "suite", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "skillgym: error: csv-summary/evals/evals.json: $.evals[2].expectations[1]: expected a string, "
        "found the number 3; write each expectation as a string"
    )
    assert not (tmp_path / "suite").exists()


def test_export_refuses_a_folder_in_use_and_an_unknown_condition(tmp_path: Path) -> None:
    make_skill(tmp_path)
    assert (
        run_cli("import", "evals", "csv-summary/evals/evals.json", "--suite", "s", cwd=tmp_path).returncode
        == 0
    )
    ran = run_cli(
        "run", "--suite", "s", "--provider", "stub", "--output", "runs", "--lane", "execution",
        "--judge", "stub", cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode in (0, 1), ran.stderr
    (run_dir,) = run_dirs(tmp_path / "runs")
    (tmp_path / "out").mkdir()
    (tmp_path / "out/notes.md").write_text("mine")
    done = run_cli("export", "skill-creator", str(run_dir), "out", cwd=tmp_path)
    assert done.returncode == 2 and "not overwriting out: it is not empty" in done.stderr
    assert (tmp_path / "out/notes.md").read_text() == "mine"
    done = run_cli("export", "skill-creator", str(run_dir), "o2", "--with-skill", "self_load", cwd=tmp_path)
    assert done.returncode == 0, done.stderr  # none still maps: with_skill is empty, and the notes say so
    assert "no trials under 'self_load': with_skill is empty" in done.stderr
    done = run_cli(
        "export",
        "skill-creator",
        str(run_dir),
        "o3",
        "--with-skill",
        "a",
        "--without-skill",
        "b",
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "the run has no trials under 'a' or 'b'" in done.stderr
