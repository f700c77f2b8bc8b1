"""A trial's page: tool calls in order, findings pointing at the call that fired them, the bundle shown."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from skillgym.report.trialpage import FOLD_LINES, TRIAL_PAGE, cast_frames, trial_page
from skillgym.results import Finding, Grade, TrialPaths
from skillgym.trace import Message, SkillEvidence, TokenUsage, ToolCall, Trace
from tests.results import result_for

KEY = "execution/demo/self-load/stub/trial-1"
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>'


def _trial(run_dir: Path, *, trace: Trace | None, bundle: bool = False) -> str:
    folder = run_dir / KEY
    folder.mkdir(parents=True)
    (folder / "prompt.txt").write_text("Do the <task>", encoding="utf-8")
    paths = TrialPaths(dir=KEY, result=f"{KEY}/result.json", trace=f"{KEY}/trace.json")
    if trace is not None:
        (folder / "trace.json").write_bytes(msgspec.json.encode(trace))
    if bundle:
        shots = folder / "workspace" / "bundle" / "screenshots"
        shots.mkdir(parents=True)
        (shots / "after.svg").write_text(SVG, encoding="utf-8")
        (folder / "workspace" / "bundle" / "report.md").write_text("# Findings\n", encoding="utf-8")
        cast = [
            {"version": 2, "width": 20, "height": 3},
            [0.1, "o", "READY>"],
            [0.5, "o", "\r\nECHO: hi\r\n"],
        ]
        (folder / "workspace" / "bundle" / "session.cast").write_text(
            "\n".join(json.dumps(line) for line in cast), encoding="utf-8"
        )
        paths = msgspec.structs.replace(paths, bundle=f"{KEY}/workspace/bundle")
    grade = Grade(
        passed=False,
        score=0.4,
        findings=(
            Finding(
                rule_id="blind-sleep",
                severity="error",
                message="sleeps (command 2)",
                matched_text="sleep 5",
                line=3,
            ),
        ),
    )
    result = result_for(
        KEY, "failed", grade=grade, paths=paths, usage=TokenUsage(input=10, output=5, total=15)
    )
    page = trial_page(run_dir, result)
    assert page == f"{KEY}/{TRIAL_PAGE}"
    return (run_dir / page).read_text(encoding="utf-8")


def test_tool_calls_in_order_with_exit_codes_and_long_output_folded(tmp_path: Path) -> None:
    long_output = "\n".join(f"line {n}" for n in range(FOLD_LINES + 5))
    trace = Trace(
        final_text="done",
        messages=(Message(role="assistant", text="starting"),),
        tool_calls=(
            ToolCall(name="Bash", command="tmux new -d -s demo\ntmux ls", exit_code=0, output="ok"),
            ToolCall(name="Bash", command="sleep 5", exit_code=1, output=long_output, is_error=True),
            ToolCall(name="Read", input='{"path": "x"}', output="text"),
        ),
        skills=(SkillEvidence(skill="tmux-tui", source="skill-tool", confidence="high"),),
    )
    html = _trial(tmp_path, trace=trace)
    first, second, third = (html.index(f'id="call-{n}"') for n in (1, 2, 3))
    assert first < second < third
    assert 'data-exit="0"' in html and 'data-exit="1"' in html
    assert "$ sleep 5" in html
    assert f"output ({FOLD_LINES + 5} lines)" in html  # folded behind a summary
    # The finding's line 3 is in the second command (the first spans lines 1 and 2): tool call 2.
    assert '<a href="#call-2">tool call 2</a>' in html
    assert "Do the &lt;task&gt;" in html
    assert "tmux-tui" in html and "skill-tool" in html
    assert str((tmp_path / KEY).resolve()) in html


def test_messages_and_tool_calls_interleave_in_the_order_they_happened(tmp_path: Path) -> None:
    trace = Trace(
        final_text="done",
        messages=(
            Message(role="assistant", text="Loading the skill."),
            Message(role="assistant", text="Starting the session."),
            Message(role="assistant", text="All <done>."),
        ),
        tool_calls=(
            ToolCall(name="Skill", input='{"skill": "tmux-tui"}', after_messages=1),
            ToolCall(name="Bash", command="tmux new -d -s demo", exit_code=0, after_messages=2),
            ToolCall(name="Bash", command="sleep 5", exit_code=0, after_messages=2),
        ),
    )
    html = _trial(tmp_path, trace=trace)
    where = {
        "loading": html.index("Loading the skill."),
        "call-1": html.index('id="call-1"'),
        "starting": html.index("Starting the session."),
        "call-2": html.index('id="call-2"'),
        "call-3": html.index('id="call-3"'),
        "done": html.index("All &lt;done&gt;."),
    }
    assert sorted(where, key=where.__getitem__) == list(where)
    # The finding's line 3 is past the two commands' lines 1 and 2, so in the last one, `sleep 5`: tool call
    # 3 (the Skill call ran no command), linked by its number wherever it stands among the messages.
    assert '<a href="#call-3">tool call 3</a>' in html
    assert 'id="order-unknown"' not in html


def test_a_trace_without_the_order_says_so_and_shows_calls_after_the_messages(tmp_path: Path) -> None:
    trace = Trace(
        messages=(Message(role="assistant", text="first"), Message(role="assistant", text="second")),
        tool_calls=(ToolCall(name="Bash", command="ls", exit_code=0),),
    )
    html = _trial(tmp_path, trace=trace)
    assert 'id="order-unknown"' in html
    assert html.index("second") < html.index('id="call-1"')


def test_the_bundle_shows_screenshots_and_recordings(tmp_path: Path) -> None:
    html = _trial(tmp_path, trace=Trace(final_text="ok"), bundle=True)
    assert '<img src="workspace/bundle/screenshots/after.svg"' in html
    assert (tmp_path / KEY / "workspace/bundle/screenshots/after.svg").is_file()
    assert 'class="frames"' in html and "ECHO: hi" in html
    assert "# Findings" in html


def test_a_missing_trace_is_said_not_fatal(tmp_path: Path) -> None:
    html = _trial(tmp_path, trace=None)
    assert "cannot be read" in html


def test_no_page_without_a_trial_folder(tmp_path: Path) -> None:
    assert trial_page(tmp_path, result_for(KEY)) is None


def test_cast_frames_follow_carriage_returns_and_drop_escapes(tmp_path: Path) -> None:
    cast = tmp_path / "s.cast"
    lines = [
        {"version": 2, "width": 20, "height": 2},
        [0.0, "o", "\x1b[1;32mloading\x1b[0m"],
        [0.2, "o", "\rdone   "],
        [0.3, "i", "ignored input"],
        [0.4, "o", "\nnext\nlast"],
    ]
    cast.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    frames = cast_frames(cast)
    assert [f["text"] for f in frames] == ["loading", "done   ", "next\nlast"]
    assert [f["time"] for f in frames] == [0.0, 0.2, 0.4]
    cast.write_text("not json", encoding="utf-8")
    assert cast_frames(cast) == []


def test_judged_checks_show_expectation_verdict_evidence_and_reason_with_cost_and_judge_usage(
    tmp_path: Path,
) -> None:
    from skillgym.cost.prices import Cost
    from skillgym.results import CheckOutcome

    folder = tmp_path / KEY
    folder.mkdir(parents=True)
    (folder / "judge.json").write_text("{}", encoding="utf-8")
    checks = (
        CheckOutcome(
            id="judge-1",
            kind="judge",
            required=True,
            passed=True,
            message="every word of the expectation occurs in the material",
            expectation="report.md names <July> as the hottest month",
            evidence="July was the hottest month.",
        ),
        CheckOutcome(
            id="judge-2",
            kind="judge",
            required=False,
            passed=False,
            message="missing: rainfall",
            expectation="x",
        ),
        CheckOutcome(id="file-exists-1", kind="verifier", required=True, passed=True),
    )
    result = result_for(
        KEY,
        "passed",
        grade=Grade(passed=True, score=1.0, checks=checks),
        paths=TrialPaths(dir=KEY, result=f"{KEY}/result.json", judge=f"{KEY}/judge.json"),
        cost=Cost(usd=0.0123, source="cli"),
        judge_usage=TokenUsage(input=300, output=20, total=320),
    )
    html = (tmp_path / str(trial_page(tmp_path, result))).read_text(encoding="utf-8")
    assert html.count('class="judged"') == 2  # the verifier is not a judged check
    assert "report.md names &lt;July&gt; as the hottest month" in html  # escaped
    assert '<blockquote class="evidence">July was the hottest month.</blockquote>' in html
    assert "every word of the expectation occurs in the material" in html
    assert 'data-check="judge-2" data-passed="false" data-required="false"' in html
    assert "The judge quoted no evidence." in html
    assert '<a id="judge-json" href="judge.json">judge.json</a>' in html
    assert 'id="trial-cost" data-usd="0.0123" data-source="cli"' in html and "$0.0123" in html
    assert "reported by the agent CLI" in html
    assert 'id="judge-usage-table"' in html and 'data-value="320"' in html


def test_a_trial_of_unknown_cost_says_so_never_zero(tmp_path: Path) -> None:
    html = _trial(tmp_path, trace=Trace(final_text="done"))
    assert 'id="trial-cost" class="muted" data-usd=""' in html and "Cost unknown" in html
    assert "$0.0000" not in html and 'id="judged"' not in html
