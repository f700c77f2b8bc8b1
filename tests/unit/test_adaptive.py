"""The adaptive run settings: a resumed run keeps the trial policy it started with, futility rule included."""

from __future__ import annotations

from skillgym.adaptive import plan_settings, resumed_policy
from skillgym.model import TrialPolicy


def test_a_resumed_run_keeps_its_futility_rule() -> None:
    policy = TrialPolicy(auto=True, max_trials=30, futility=0.5)
    assert resumed_policy(plan_settings(policy, 0.5, None), 1) == policy
    plain = TrialPolicy(auto=True, futility=None)
    assert resumed_policy(plan_settings(plain, 0.5, None), 1) == plain


def test_a_run_from_before_the_rule_resumes_with_curtailment_only() -> None:
    older = {"trials_policy": {"auto": True, "count": 1, "min_trials": 3, "max_trials": 20}}
    assert resumed_policy(older, 1) == TrialPolicy(auto=True, futility=None)
    assert resumed_policy({"trials_policy": 4}, 1) == 4
