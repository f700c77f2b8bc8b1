"""The trial identity: which trial a work item, a provider request, a result or an event is about."""

from __future__ import annotations

from typing import TypeAlias

from .model import Data, Lane

# (lane, case, condition, provider): the trials of one case under one condition by one provider.
Group: TypeAlias = tuple[Lane, str, str, str]


def item_key(lane: str, case_id: str, condition: str, provider: str, trial: int) -> str:
    """``lane/case/condition/provider/trial-N``: the same path the trial's files live under."""
    return f"{lane}/{case_id}/{condition}/{provider}/trial-{trial}"


class TrialId(Data, frozen=True, kw_only=True):
    """A case, under a condition, by a provider, for the Nth time, as its fingerprint says the case was.

    ``key`` names the trial wherever a string does: its folder below ``trials/``, the event log, ``--resume``.
    The model is not part of it: a result records the model the provider reported, which may differ from
    the one the run asked for.
    """

    key: str  # item_key of the fields below; checked, so a hand-edited log cannot make them disagree
    lane: Lane
    case_id: str
    condition: str
    provider: str
    trial: int
    fingerprint: str  # of the case as it ran: --resume keeps a finished trial only while it still matches

    def __post_init__(self) -> None:
        expected = item_key(self.lane, self.case_id, self.condition, self.provider, self.trial)
        if self.key != expected:
            raise ValueError(f"trial key {self.key!r} does not match its fields, which make {expected!r}")

    @property
    def group(self) -> Group:
        """(lane, case, condition, provider): the trials a case.start and case.finish bracket."""
        return (self.lane, self.case_id, self.condition, self.provider)


def trial_id(
    *, lane: Lane, case_id: str, condition: str, provider: str, trial: int, fingerprint: str
) -> TrialId:
    """The identity of a trial, its key made from its fields."""
    return TrialId(
        key=item_key(lane, case_id, condition, provider, trial),
        lane=lane,
        case_id=case_id,
        condition=condition,
        provider=provider,
        trial=trial,
        fingerprint=fingerprint,
    )
