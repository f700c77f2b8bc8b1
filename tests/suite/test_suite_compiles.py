"""The shipped example suite loads, has the promised shape, and has a fresh cassette for every trial."""

from __future__ import annotations

import json
from collections import Counter

from skillgym.model import DogfoodCase, ExecutionCase, FixtureLogContains, NoLiveSessions, Suite
from tests.conftest import REPO, run_cli

from .conftest import CASSETTES

CONDITIONS = ("none", "self-load", "preloaded", "stale")
TAXONOMY = (
    "rendering corruption",
    "resize/layout",
    "focus/input",
    "scrollback",
    "alt-screen",
    "copy/paste",
    "performance/startup",
    "crash/recovery",
)
FIXTURE_APPS = {
    "hello-prompt",
    "resize-demo",
    "alt-screen-demo",
    "color-grid",
    "unicode-grid",
    "scrollback-demo",
    "crash-demo",
}


def test_forty_cases_in_three_lanes_each_under_all_four_conditions(suite: Suite) -> None:
    assert Counter(c.lane for c in suite.cases) == {"prompt": 24, "execution": 10, "dogfood": 6}
    assert [c.id for c in suite.conditions] == list(CONDITIONS)
    assert all(c.conditions == CONDITIONS for c in suite.cases)


def test_categories_cover_what_each_lane_promises(suite: Suite) -> None:
    by_lane = {
        lane: Counter(c.category for c in suite.cases if c.lane == lane)
        for lane in ("prompt", "execution", "dogfood")
    }
    assert by_lane["prompt"] == {"trigger": 8, "trigger-qa": 6, "should-not-trigger": 6, "anti-pattern": 4}
    assert by_lane["execution"] == {"session": 2, "tui": 3, "artifact": 3, "recovery": 2}
    assert by_lane["dogfood"] == {"qa": 1, "release-readiness": 1, "bug-repro": 3, "reporting": 1}
    routes = {c.id: c.expected_skill for c in suite.cases if c.lane == "prompt"}
    assert {routes[c.id] for c in suite.cases if c.category == "should-not-trigger"} == {None}
    assert {routes[c.id] for c in suite.cases if c.category == "trigger-qa"} == {"tui-qa"}


def test_effects_cases_judge_real_effects_and_leave_no_session(suite: Suite) -> None:
    for case in suite.cases:
        if not isinstance(case, (ExecutionCase, DogfoodCase)):
            continue
        assert case.fixture in FIXTURE_APPS, case.id
        kinds = {type(v) for v in case.verifiers if v.required}
        assert NoLiveSessions in kinds, f"{case.id} does not check for leftover sessions"
        assert any(isinstance(v, FixtureLogContains) for v in case.verifiers) or isinstance(
            case, ExecutionCase
        ), f"{case.id}: a dogfood case should check the fixture's own log"
    for case in suite.cases:
        if isinstance(case, DogfoodCase):
            assert case.taxonomy == TAXONOMY, case.id


def test_presets_are_shared_and_every_fixture_app_exists(suite: Suite) -> None:
    used = Counter(c.workspace for c in suite.cases if c.workspace)
    assert len(used) >= 2 and all(n >= 3 for n in used.values()), used
    assert {p.id for p in suite.presets} == set(used)
    assert {f.name for f in suite.fixtures} >= FIXTURE_APPS


def test_every_case_and_condition_has_a_cassette_recorded_for_the_current_case(suite: Suite) -> None:
    stale: list[str] = []
    for case in suite.cases:
        for condition in case.conditions:
            path = CASSETTES / case.lane / case.id / f"{condition}.jsonl"
            assert path.is_file(), f"missing cassette {path.relative_to(REPO)}"
            header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
            assert (header["lane"], header["case"], header["condition"]) == (case.lane, case.id, condition)
            assert header["format"] == "claude-stream-json" and header["provider"] == "claude"
            if header["fingerprint"] != case.fingerprint:
                stale.append(f"{case.lane}/{case.id}/{condition}")
    assert not stale, f"cassettes older than their case (run evals/cassettes/_generate.py): {stale}"


def test_no_cassette_is_left_over_from_a_case_that_is_gone(suite: Suite) -> None:
    wanted = {(c.lane, c.id, cond) for c in suite.cases for cond in c.conditions}
    found = {(p.parts[-3], p.parts[-2], p.stem) for p in CASSETTES.glob("*/*/*.jsonl")}
    assert found == wanted


def test_list_shows_all_forty_cases() -> None:
    proc = run_cli("list", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "40 case(s)"
