"""The prompt lane builder: does the agent route to the right skill and plan the right workflow."""

from __future__ import annotations

from typing import ClassVar

from ..model import Budget, Lane, Pattern, PromptCase
from .base import CaseBuilder
from .checks import PatternLike, check_text, refuse_contradiction, to_patterns


class PromptBuilder(CaseBuilder):
    """Records a prompt case: the request, what the answer must and must not mention, and its steps."""

    lane: ClassVar[Lane] = "prompt"
    default_budget: ClassVar[Budget] = Budget(timeout_s=30.0)

    def __init__(self, case_id: str, opened_at: str) -> None:
        super().__init__(case_id, opened_at)
        self._prompt: str = ""
        self._context: str = ""
        self._expected: list[tuple[Pattern, str]] = []
        self._forbidden: list[tuple[Pattern, str]] = []

    def prompt(self, text: str) -> None:
        """The user's request, as the agent sees it."""
        at = self._use("prompt")
        self._prompt = self._once(
            "c.prompt()", check_text(text, what="prompt", case_id=self._case_id, origin=at), at
        )

    def context(self, text: str) -> None:
        """Extra context shown to the agent after the request."""
        at = self._use("context")
        self._context = self._once(
            "c.context()", check_text(text, what="context", case_id=self._case_id, origin=at), at
        )

    def must_mention(self, *patterns: PatternLike) -> None:
        """The answer must match every pattern (a str is a case-insensitive regex)."""
        at = self._use("must_mention")
        found = to_patterns(
            patterns, call="c.must_mention()", where="in c.must_mention()", case_id=self._case_id, origin=at
        )
        refuse_contradiction(found, self._forbidden, subject="the case", case_id=self._case_id, origin=at)
        self._expected.extend([(p, at) for p in found])

    def must_not_mention(self, *patterns: PatternLike) -> None:
        """The answer must match no pattern outside a negation."""
        at = self._use("must_not_mention")
        found = to_patterns(
            patterns,
            call="c.must_not_mention()",
            where="in c.must_not_mention()",
            case_id=self._case_id,
            origin=at,
        )
        refuse_contradiction(found, self._expected, subject="the case", case_id=self._case_id, origin=at)
        self._forbidden.extend([(p, at) for p in found])

    def _missing(self) -> list[str]:
        missing = super()._missing()
        if "c.prompt()" not in self._set_at:
            missing.append('a prompt (call c.prompt("..."))')
        if "c.expect_skill()" not in self._set_at:
            missing.append(
                'the expected skill (call c.expect_skill("name"), or c.expect_skill(None) when no skill '
                "should be used)"
            )
        return missing

    def _build(self) -> PromptCase:
        return PromptCase(
            id=self._case_id,
            category=self._category,
            budget=self._budget,
            prompt=self._prompt,
            context=self._context,
            expected_patterns=tuple([p for p, _ in self._expected]),
            forbidden_patterns=tuple([p for p, _ in self._forbidden]),
        )
