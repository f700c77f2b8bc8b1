"""`import_evals`: what lands in the suite, and the refusals that leave it untouched."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillgym.errors import UsageError
from skillgym.evalsformat import EvalsFormatError, import_evals
from skillgym.loader import load_suite
from skillgym.model import ExecutionCase, PromptCase
from skillgym.scaffold import init_suite

from .skill import make_skill


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_an_eval_set_into_a_new_folder_drafts_a_suite_that_loads(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    suite = tmp_path / "suite"
    done = import_evals(skill / "evals/evals.json", suite)
    assert done.drafted_suite and done.copied_skill_from == skill
    assert done.cases == ("csv-summary-eval-1", "csv-summary-eval-2", "csv-summary-eval-7")
    assert done.case_file == "agent_skills/csv-summary-evals.py"
    assert (
        suite / "templates/csv-summary-eval-2/evals/files/sales.csv"
    ).read_text() == "region,sales\nnorth,10\nsouth,32\n"
    assert (suite / "templates/csv-summary-eval-2/evals/files/weather.csv").is_file()
    assert not (suite / "templates/csv-summary-eval-7").exists()
    assert (suite / "skills/csv-summary/SKILL.md").is_file()
    cases = {c.id: c for c in load_suite(suite).cases}
    first = cases["csv-summary-eval-1"]
    assert isinstance(first, ExecutionCase)
    assert first.task == "Summarise evals/files/weather.csv for me and save the summary in report.md."
    assert first.grader_notes == "A report.md naming July as the hottest month, with the mean temperature."
    assert first.description == ""  # expected_output is the judge's reference, not a note for people
    assert [j.expectation for j in first.judged] == [
        "report.md names the hottest month",
        "The skill used its script rather than pandas",
    ]
    assert first.expected_skill == "csv-summary" and first.workspace == "csv-summary-eval-1"
    second = cases["csv-summary-eval-2"]
    assert isinstance(second, ExecutionCase)
    assert (
        second.task
        == 'which region sold most? the data is in evals/files/sales.csv\nAnswer in two lines, "quoted".'
    )
    assert "eval-name=sales-by-region" in second.tags and "evals-key=assertions" in second.tags
    last = cases["csv-summary-eval-7"]
    assert [j.expectation for j in last.judged] == [
        "It says the file has no data in any column rather than inventing figures."
    ]
    assert last.workspace is None


def test_the_case_ids_and_fingerprints_are_stable_across_imports(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    import_evals(skill / "evals/evals.json", tmp_path / "a")
    import_evals(skill / "evals/evals.json", tmp_path / "b")
    a = [(c.id, c.fingerprint) for c in load_suite(tmp_path / "a").cases]
    b = [(c.id, c.fingerprint) for c in load_suite(tmp_path / "b").cases]
    assert a == b


def test_a_trigger_set_into_the_same_suite(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    suite = tmp_path / "suite"
    import_evals(skill / "evals/evals.json", suite)
    done = import_evals(skill / "evals/trigger-evals.json", suite)
    assert not done.drafted_suite and done.kind == "triggers"
    cases = {c.id: c for c in load_suite(suite).cases if isinstance(c, PromptCase)}
    assert [(c.category, c.expected_skill) for c in cases.values()] == [
        ("trigger", "csv-summary"),
        ("trigger", "csv-summary"),
        ("should-not-trigger", None),
    ]
    assert (
        cases["csv-summary-trigger-3"].prompt
        == "Convert data/customers.csv to JSON lines, one object per row."
    )


def test_into_a_suite_made_by_init(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    suite = tmp_path / "evals"
    init_suite(skill, suite)
    before = (suite / "suite.py").read_text()
    done = import_evals(skill / "evals/evals.json", suite)
    assert not done.drafted_suite and (suite / "suite.py").read_text() == before
    ids = [c.id for c in load_suite(suite).cases]
    assert "csv-summary-task" in ids and "csv-summary-eval-1" in ids


def test_nothing_is_overwritten_without_force(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    suite = tmp_path / "suite"
    import_evals(skill / "evals/evals.json", suite)
    (suite / "agent_skills/csv-summary-evals.py").write_text(
        "# my edits\n" + (suite / "agent_skills/csv-summary-evals.py").read_text()
    )
    before = _tree(suite)
    with pytest.raises(
        UsageError, match=r"not overwriting .*agent_skills/csv-summary-evals.py.*pass --force"
    ):
        import_evals(skill / "evals/evals.json", suite)
    assert _tree(suite) == before
    import_evals(skill / "evals/evals.json", suite, force=True)
    assert not (suite / "agent_skills/csv-summary-evals.py").read_text().startswith("# my edits")


def test_force_replaces_an_evals_files_as_a_whole(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    suite = tmp_path / "suite"
    import_evals(skill / "evals/evals.json", suite)
    (suite / "templates/csv-summary-eval-1/stale.txt").write_text("old")
    import_evals(skill / "evals/evals.json", suite, force=True)
    assert not (suite / "templates/csv-summary-eval-1/stale.txt").exists()


def _refused(tmp_path: Path, evals: dict[str, object], match: str, **kwargs: object) -> None:
    skill = make_skill(tmp_path)
    (skill / "evals/evals.json").write_text(json.dumps(evals))
    with pytest.raises((EvalsFormatError, UsageError), match=match):
        import_evals(skill / "evals/evals.json", tmp_path / "suite", **kwargs)  # type: ignore[arg-type]
    assert not (tmp_path / "suite").exists()


def test_a_missing_file_is_named_with_its_json_path(tmp_path: Path) -> None:
    evals = {
        "skill_name": "csv-summary",
        "evals": [{"id": 1, "prompt": "p", "expected_output": "o", "files": ["evals/files/nope.csv"]}],
    }
    _refused(tmp_path, evals, r"evals.json: \$.evals\[0\].files\[0\]: 'evals/files/nope.csv' does not exist")


def test_a_skill_name_other_than_the_frontmatters_is_refused(tmp_path: Path) -> None:
    evals = {"skill_name": "csv-report", "evals": [{"id": 1, "prompt": "p", "expected_output": "o"}]}
    _refused(tmp_path, evals, r"\$.skill_name: 'csv-report' is not the name in .*SKILL.md \('csv-summary'\)")


def test_a_malformed_file_writes_nothing(tmp_path: Path) -> None:
    _refused(
        tmp_path,
        {"skill_name": "csv-summary", "evals": [{"id": 1}]},
        r"\$.evals\[0\]: missing the required key 'prompt'",
    )


def test_a_trigger_set_needs_its_skill_folder(tmp_path: Path) -> None:
    path = tmp_path / "triggers.json"
    path.write_text('[{"query": "q", "should_trigger": true}]')
    with pytest.raises(UsageError, match=r"does not name its skill.*pass --skill SKILL_DIR"):
        import_evals(path, tmp_path / "suite")
    skill = make_skill(tmp_path)
    done = import_evals(path, tmp_path / "suite", skill_dir=skill)
    assert (
        done.cases == ("csv-summary-trigger-1",) and done.case_file == "agent_skills/csv-summary-triggers.py"
    )


def test_a_suite_without_the_skill_is_refused(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "suite.py").write_text('from skillgym import skill\nskill("other", "skills/other")\n')
    (suite / "skills/other").mkdir(parents=True)
    before = _tree(suite)
    with pytest.raises(UsageError, match=r"declares no skill named 'csv-summary' \(it declares: other\)"):
        import_evals(skill / "evals/evals.json", suite)
    assert _tree(suite) == before


def test_a_taken_case_id_is_refused(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    suite = tmp_path / "suite"
    import_evals(skill / "evals/trigger-evals.json", suite)
    (suite / "mine.py").write_text(
        "from skillgym import prompt_case\n"
        'with prompt_case("csv-summary-eval-1") as c:\n'
        '    c.category("x")\n    c.prompt("p")\n    c.expect_skill(None)\n'
    )
    with pytest.raises(
        UsageError, match=r"case id 'csv-summary-eval-1' is already taken by the case at .*mine.py:2"
    ):
        import_evals(skill / "evals/evals.json", suite)
    assert not (suite / "agent_skills/csv-summary-evals.py").exists()


def test_a_folder_in_files_is_copied_whole(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    evals = {
        "skill_name": "csv-summary",
        "evals": [{"id": 1, "prompt": "p", "expected_output": "o", "files": ["evals/files"]}],
    }
    (skill / "evals/evals.json").write_text(json.dumps(evals))
    import_evals(skill / "evals/evals.json", tmp_path / "suite")
    copied = tmp_path / "suite/templates/csv-summary-eval-1/evals/files"
    assert sorted(p.name for p in copied.iterdir()) == ["sales.csv", "weather.csv"]


texts = st.text(min_size=1, max_size=200).filter(lambda t: not t.isspace())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompt=texts, expected=texts, expectations=st.lists(texts, max_size=3))
def test_any_text_comes_back_exactly_from_the_generated_case_file(
    tmp_path: Path, prompt: str, expected: str, expectations: list[str]
) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    skill = make_skill(root)
    item = {"id": 1, "prompt": prompt, "expected_output": expected, "expectations": expectations}
    (skill / "evals/evals.json").write_text(json.dumps({"skill_name": "csv-summary", "evals": [item]}))
    import_evals(skill / "evals/evals.json", root / "suite")
    (case,) = load_suite(root / "suite").cases
    assert isinstance(case, ExecutionCase)
    assert (case.task, case.grader_notes) == (prompt, expected)
    assert [j.expectation for j in case.judged] == (expectations or [expected])


def test_cases_that_do_not_load_are_removed_again(tmp_path: Path) -> None:
    skill = make_skill(tmp_path)
    suite = tmp_path / "suite"
    import_evals(skill / "evals/trigger-evals.json", suite)
    # A preset of the suite's own takes the id the import gives eval 1's files: the suite no longer loads.
    (suite / "mine.py").write_text(
        'from skillgym import workspace_preset\nworkspace_preset("csv-summary-eval-1")\n'
    )
    before = _tree(suite)
    with pytest.raises(UsageError, match="did not load, so the files this import created were removed again"):
        import_evals(skill / "evals/evals.json", suite)
    assert _tree(suite) == before
    assert not (suite / "templates").exists()
