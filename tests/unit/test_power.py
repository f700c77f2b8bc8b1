"""Power planning agrees with an independent simulation of the report's own verdicts."""

from __future__ import annotations

import random

from skillgym.model import TrialPolicy
from skillgym.power import (
    adaptive_cap_needed,
    adaptive_case,
    cases_needed,
    smallest_lift,
    suite_power,
    trials_needed,
)
from skillgym.scheduler import Question, settle


def test_planned_trials_reach_the_power_in_an_independent_simulation() -> None:
    design = trials_needed(12, 0.3, 0.8)
    assert design is not None
    # Another seed and more runs: the planned design holds its power, one trial fewer falls short of it.
    assert suite_power(12, design.trials, 0.3, simulations=1500, seed=99) >= 0.8 - 0.04
    if design.trials > 1:
        assert suite_power(12, design.trials - 1, 0.3, simulations=1500, seed=99) < 0.8 + 0.04


def test_planned_cases_and_the_smallest_lift_agree_with_simulation() -> None:
    design = cases_needed(4, 0.3, 0.8)
    assert design is not None and design.cases >= 6  # the sign test needs six agreeing cases at 5%
    assert suite_power(design.cases, 4, 0.3, simulations=1500, seed=5) >= 0.8 - 0.04
    lift = smallest_lift(20, 5, 0.8)
    assert lift is not None
    assert suite_power(20, 5, lift, simulations=1500, seed=5) >= 0.8 - 0.04
    assert suite_power(20, 5, lift - 0.05, simulations=1500, seed=5) < 0.8


def test_five_cases_never_reach_a_verdict() -> None:
    assert suite_power(5, 50, 0.5) == 0.0
    assert trials_needed(5, 0.5, 0.8) is None


def _scheduled_power(lift: float, policy: TrialPolicy, runs: int, seed: int) -> tuple[float, float]:
    """Power and mean pairs of one case's lift as the scheduler settles it: two cells, trial i with i."""
    question = Question(cells=(("prompt", "a", "t", "p"), ("prompt", "a", "c", "p")), name="t vs c")
    rng = random.Random(seed)
    hits = used = 0
    for _ in range(runs):
        outcomes: dict[tuple[str, str, str, str], dict[int, float | None]] = {c: {} for c in question.cells}
        trial = 0
        while True:
            trial += 1
            outcomes[question.cells[0]][trial] = float(rng.random() < 0.5 + lift)
            outcomes[question.cells[1]][trial] = float(rng.random() < 0.5)
            got = settle(question, outcomes, policy, 0.5)
            if got.settled:
                break
        hits += got.status == "improved"
        used += trial
    return hits / runs, used / runs


def test_adaptive_power_counts_the_futility_rule_and_agrees_with_the_schedule() -> None:
    planned = adaptive_case(0.4, max_trials=30)
    plain = adaptive_case(0.4, max_trials=30, futility=None)
    # The rule costs power (cases with a lift that start unluckily stop futile) and saves trials.
    assert planned.futile > 0.0 and planned.power < plain.power
    assert planned.mean_trials_per_side < plain.mean_trials_per_side
    # Another seed, more runs, through the scheduler's own settle() and the default policy.
    power, used = _scheduled_power(0.4, TrialPolicy(auto=True, max_trials=30), 600, seed=41)
    assert abs(power - planned.power) <= 0.06
    assert abs(used - planned.mean_trials_per_side) <= 1.5


def test_the_planned_cap_reaches_the_power_in_an_independent_simulation() -> None:
    cap = adaptive_cap_needed(0.5, 0.8)
    assert cap is not None and cap.power >= 0.8 and cap.futility == 1.5
    power, _ = _scheduled_power(0.5, TrialPolicy(auto=True, max_trials=cap.max_trials), 600, seed=43)
    assert power >= 0.8 - 0.05
    if cap.max_trials > 5:
        short, _ = _scheduled_power(0.5, TrialPolicy(auto=True, max_trials=cap.max_trials - 5), 600, seed=43)
        assert short < 0.8 + 0.05
