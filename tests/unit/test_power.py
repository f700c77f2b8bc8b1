"""Power planning agrees with an independent simulation of the report's own verdicts."""

from __future__ import annotations

from skillgym.power import cases_needed, smallest_lift, suite_power, trials_needed


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
