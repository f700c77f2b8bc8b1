"""report.html's run-design sections in a real browser: gates, budget, dollars, did it fire, adaptive, judge.

A real agent process (the command provider) runs a small suite with adaptive trials, an A/A arm, gates, a
judged check graded by the stub judge, a blind pairwise comparison, and self-load cases that load the
skill always, sometimes or never; a second run ends on its budget. Every figure the page shows is checked
against report.json, and the page must raise no console error and ask for nothing off the disk.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import Watch, same, save_screenshot
from tests.conftest import run_cli, run_dirs, write_suite

SUITE = {
    "suite.py": """
        from skillgym import gate, judged_by, skill

        skill("greet", "skills/greet")
        judged_by("stub:word-match", min_kappa=0.5)
        gate("pass_rate(execution, preloaded) >= 0.5")
    """,
    "skills/greet/SKILL.md": "---\nname: greet\ndescription: greet\n---\nRun scripts/greet.py.\n",
    "skills/greet/scripts/greet.py": "print('hello from the skill')\n",
    "cases.py": """
        from skillgym import execution_case

        MOODS = {"eager-1": "eagerly", "eager-2": "eagerly", "sometimes": "sometimes", "shy": "quietly"}
        for name, mood in MOODS.items():
            with execution_case(name) as c:
                c.category("task")
                c.expect_skill("greet")
                c.task(f"Greet {mood} into greeting.txt")
                with c.assertions() as a:
                    a.file_contains("greeting.txt", "hello from the skill")
                    a.judge("the greeting is hello from the skill", files=["greeting.txt"])
    """,
}

# Loads the skill (and says so in its trace) when asked eagerly, in about half the "sometimes" trials (by
# a hash of the trial's key: the same on every rerun), never when asked quietly; given the skill's text
# (preloaded) it follows it. Dollars: from the CLI, from the price table, or unknown (a model with no price).
AGENT = """
import hashlib, json, os, pathlib, sys
prompt = sys.stdin.read()
key = os.environ["SKILLGYM_TRIAL_ID"]
u = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 2**32
skill = pathlib.Path(".claude/skills/greet")
mood = next(m for m in ("eagerly", "sometimes", "quietly") if m in prompt)
def emit(**event):
    print(json.dumps(event))
preloaded = "scripts/greet.py" in prompt
loads = mood == "eagerly" or (mood == "sometimes" and u < 0.6)
if preloaded or (loads and (skill / "SKILL.md").is_file()):
    if not preloaded:
        emit(type="skill", skill="greet", source="read-skill-md", confidence="high", detail="cat SKILL.md")
    command = f"python3 {skill}/scripts/greet.py > greeting.txt"
    emit(type="tool_call", name="Bash", command=command, exit_code=0)
    pathlib.Path("greeting.txt").write_text("hello from the skill\\n")
    text = f"Greeted {mood}: greeting.txt says hello from the skill."
else:
    emit(type="tool_call", name="Bash", command="echo hi > greeting.txt", exit_code=0)
    pathlib.Path("greeting.txt").write_text("hi\\n")
    text = "Wrote hi."
tokens = 1000 + int(u * 2000)
emit(type="usage", input=tokens, output=200, total=tokens + 200)
if mood == "quietly":
    emit(type="result", text=text, model="house-model")
elif mood == "sometimes":
    emit(type="result", text=text, model="claude-sonnet-4-5")
else:
    emit(type="result", text=text, model="claude-sonnet-4-5", cost_usd=round(0.01 + u / 100, 4))
"""


def _run(where: Path, output: str, *args: str) -> Path:
    agent = where / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    done = run_cli(
        "run", "--suite", "evals", "--provider", "command", "--agent-command", f"{sys.executable} {agent}",
        "--output", output, *args, cwd=where, timeout=300,
    )  # fmt: skip
    assert done.returncode in (1, 3), done.stdout + done.stderr
    (found,) = run_dirs(where / output)
    return found


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The design run (adaptive, A/A, gates, judge, pairwise) and a run its budget ended."""
    where = tmp_path_factory.mktemp("sections-run")
    write_suite(where / "evals", SUITE)
    design = _run(
        where, "runs",
        "--condition", "none", "--condition", "self-load", "--condition", "preloaded", "--aa", "none",
        "--trials", "auto", "--min-trials", "2", "--max-trials", "8",
        "--judge", "stub:word-match", "--compare-conditions", "judge",
        "--gate", "lift(self-load, none) > 0", "--concurrency", "2",
    )  # fmt: skip
    budget = _run(
        where, "budget-runs",
        "--case", "eager-1", "--case", "eager-2", "--condition", "none",
        "--trials", "3", "--concurrency", "1", "--budget-usd", "0.045", "--judge", "stub:word-match",
    )  # fmt: skip
    return design, budget


def _report(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "report.json").read_text())
    return data


def test_gates_dollars_activation_adaptive_and_judge_show_report_json_figures(
    page: tuple[Any, Watch],
    runs: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    p, _ = page
    run_dir, _ = runs
    report = _report(run_dir)
    p.goto((run_dir / "report.html").as_uri())

    gates = p.locator("#gate-table tr.gate")
    assert gates.count() == len(report["gates"]) == 2
    for index, gate in enumerate(report["gates"]):
        row = gates.nth(index)
        assert row.get_attribute("data-expression") == gate["expression"]
        assert row.get_attribute("data-status") == gate["status"]
        (part,) = gate["parts"]
        assert same(row.get_attribute("data-value"), part["value"])
        assert same(row.get_attribute("data-low"), part["interval"] and part["interval"]["low"])
        assert gate["status"] in row.inner_text()
    assert p.locator("#gates").is_visible()  # near the top: in the summary, above its charts
    assert p.locator("#gates").bounding_box()["y"] < p.locator("#chart-pass-rates").bounding_box()["y"]

    cost = report["cost"]
    totals = p.locator("#cost-totals")
    assert same(totals.get_attribute("data-usd"), cost["totals"]["usd"])
    assert int(totals.get_attribute("data-unpriced") or -1) == cost["totals"]["unpriced"] > 0
    assert "house-model" in totals.inner_text()
    rows = p.locator("#cost-table tbody tr")
    assert rows.count() == len(cost["conditions"])
    for index, c in enumerate(cost["conditions"]):
        assert same(rows.nth(index).get_attribute("data-usd"), c["totals"]["usd"])

    (a,) = report["activation"]
    assert 0 < a["activated"] < a["trials"]  # the skill fired sometimes
    mark = p.locator("#chart-activation g.mark")
    assert same(mark.get_attribute("data-rate"), a["activation_rate"])
    assert same(mark.get_attribute("data-low"), a["activation_interval"]["low"])
    assert mark.locator("circle.point").is_visible()
    row = p.locator("#activation-table tbody tr")
    assert same(row.get_attribute("data-pass-loaded"), a["pass_rate_when_activated"])
    assert same(row.get_attribute("data-pass-not-loaded"), a["pass_rate_when_not_activated"])
    for kind, field in (("gap", "activation_gap"), ("help", "help_when_loaded")):
        shown = p.locator(f"#activation-split tr[data-kind={kind}]")
        assert same(shown.get_attribute("data-diff"), a[field]["mean_diff"])
        assert same(shown.get_attribute("data-low"), a[field]["interval"]["low"])
    assert "observational" in p.locator("#activation-caveat").inner_text()

    adaptive = report["adaptive"]
    assert p.locator("#adaptive-totals").get_attribute("data-trials-run") == str(adaptive["trials_run"])
    assert "confidence sequences" in p.locator("#adaptive").inner_text()
    cells = p.locator("#adaptive-cells tbody tr")
    assert cells.count() == len(adaptive["cells"]) > 0
    for index, stop in enumerate(adaptive["cells"]):
        assert cells.nth(index).get_attribute("data-trials") == str(stop["trials"])
        assert stop["reason"] in cells.nth(index).inner_text()
    (aa,) = report["aa"]
    shown = p.locator("#aa-table tbody tr")
    assert same(shown.get_attribute("data-rate"), aa["false_positive_rate"])
    assert same(shown.get_attribute("data-high"), aa["interval"]["high"])

    judge = report["judge"]
    assert p.locator("#judge-checks").get_attribute("data-checks") == str(judge["checks"])
    assert "kept apart from the agent's" in p.locator("#judge-usage").inner_text()
    notes = p.locator("#judge-notes li").all_inner_texts()
    assert notes == judge["notes"] and any("no stored calibration" in n for n in notes)
    pairwise = judge["pairwise"]
    conditions = p.locator("#pairwise-conditions tbody tr")
    assert conditions.count() == len(pairwise["conditions"])
    for index, c in enumerate(pairwise["conditions"]):
        assert same(conditions.nth(index).get_attribute("data-diff"), c["mean_diff"])
        assert same(conditions.nth(index).get_attribute("data-position-bias"), c["position_bias"])
    assert any(c["case_wins"] for c in pairwise["conditions"])  # the skill's answers win somewhere
    p.locator("#judge details summary").click()
    cases = p.locator("#pairwise-cases tbody tr")
    assert cases.count() == len(pairwise["cases"])
    assert cases.first.is_visible()
    assert cases.first.get_attribute("data-wins") == str(pairwise["cases"][0]["wins"])

    p.evaluate("() => window.scrollTo(0, 0)")  # the sticky header at the top of the full-page shot
    save_screenshot(p, tmp_path, "report-sections.png", full_page=True)


def test_a_judged_trial_shows_its_verdict_evidence_cost_and_judge_json(
    page: tuple[Any, Watch],
    runs: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    p, _ = page
    run_dir, _ = runs
    p.goto((run_dir / "report.html").as_uri())
    row = p.locator("#case-table tbody tr[data-case='eager-1'][data-condition='self-load']")
    row.locator("a.trial").first.click()
    p.wait_for_selector("#trial")
    key = p.locator("#trial").get_attribute("data-key")
    result = json.loads((run_dir / "trials" / str(key) / "result.json").read_text())
    (judged,) = [c for c in result["grade"]["checks"] if c["kind"] == "judge"]
    shown = p.locator(f".judged[data-check='{judged['id']}']")
    assert shown.get_attribute("data-passed") == str(judged["passed"]).lower()
    assert judged["expectation"] in shown.locator(".expectation").inner_text()
    assert shown.locator("blockquote.evidence").inner_text() == judged["evidence"] != ""
    assert judged["message"] in shown.locator(".reason").inner_text()
    cost = p.locator("#trial-cost")
    assert same(cost.get_attribute("data-usd"), result["cost"]["usd"])
    assert cost.get_attribute("data-source") == result["cost"]["source"] == "cli"
    save_screenshot(p, tmp_path, "trial-judged.png", full_page=True)
    p.locator("#judge-json").click()  # judge.json opens from disk
    p.wait_for_url("**/judge.json")
    assert json.loads(p.locator("body").inner_text())  # the file the link names, with its verdicts


def test_a_budget_stop_says_why_what_was_spent_and_which_cells_are_short(
    page: tuple[Any, Watch],
    runs: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    p, _ = page
    _, run_dir = runs
    report = _report(run_dir)
    budget = report["budget"]
    assert budget is not None and budget["short"], "the budget did not end the run"
    p.goto((run_dir / "report.html").as_uri())
    box = p.locator("#budget")
    assert box.is_visible()
    assert same(box.get_attribute("data-spent-usd"), budget["spent_usd"])
    assert box.get_attribute("data-spent-tokens") == str(budget["spent_tokens"])
    assert budget["reason"] in " ".join(box.inner_text().split())
    box.locator("summary").click()
    short = p.locator("#budget-short tbody tr")
    assert short.count() == len(budget["short"])
    for index, cell in enumerate(budget["short"]):
        assert short.nth(index).get_attribute("data-finished") == str(cell["finished"])
    # Each trial costs one to two cents: at most four of the six fit. The suite's gate names a condition
    # this run did not have: skipped, and said so.
    (gate,) = report["gates"]
    assert gate["status"] == "skipped"
    assert p.locator("#gate-table tr.gate").get_attribute("data-status") == "skipped"
    save_screenshot(p, tmp_path, "report-budget.png")


def test_the_new_sections_read_without_javascript(browser: Any, runs: tuple[Path, Path]) -> None:
    context = browser.new_context(java_script_enabled=False)
    p = context.new_page()
    run_dir, _ = runs
    p.goto((run_dir / "report.html").as_uri())
    for selector in ("#gate-table", "#chart-activation", "#activation-table", "#adaptive-cells", "#aa-table"):
        assert p.locator(selector).is_visible(), selector
    assert p.locator("#cost-table tbody tr:visible").count() == len(_report(run_dir)["cost"]["conditions"])
    context.close()
