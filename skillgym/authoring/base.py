"""The case builder every lane shares: common fields, steps, and the one compile every lane ends in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

import msgspec

from ..errors import DefinitionError
from ..model import (
    DEFAULT_FUTILITY,
    AntiPatternRule,
    Budget,
    Case,
    CaseSandbox,
    JudgedCheck,
    Lane,
    Rubric,
    Severity,
    TokenBudget,
    TrialPolicy,
    WorkflowCheck,
)
from .checks import (
    PatternLike,
    check_choice,
    check_env,
    check_id,
    check_ids,
    check_int,
    check_number,
    check_text,
    to_patterns,
)
from .graph import check_unique, check_workflow, free_step_id
from .lanes import no_such_method, register_lane
from .recorder import Recorder
from .steps import StepBuilder
from .workflow import WorkflowBuilder, raw_check

_CaseT = TypeVar("_CaseT", bound=Case)
_ChildT = TypeVar("_ChildT", bound=Recorder)

_T = TypeVar("_T")

SEVERITIES: tuple[Severity, ...] = ("info", "warning", "error")
_NO_TOKEN_BUDGET = TokenBudget()


class CaseBuilder(Recorder):
    """Fields and steps every lane records; a lane subclass adds its own and builds its Struct."""

    lane: ClassVar[Lane]
    default_budget: ClassVar[Budget]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "lane" in cls.__dict__:
            register_lane(cls.lane, cls)

    def __init__(self, case_id: str, opened_at: str) -> None:
        super().__init__(case_id=case_id, opened_at=opened_at)
        # Fields a case takes once: each holds its default until its call, and ``_set_at`` says where
        # each call was made (see ``_once``).
        self._set_at: dict[str, str] = {}
        self._category: str = ""
        self._expected_skill: str | None = None
        self._conditions: list[str] = []
        self._workspace: str | None = None
        self._env: dict[str, str] = {}
        self._sandbox: CaseSandbox | None = None
        self._trials: TrialPolicy | None = None
        self._budget: Budget = self.default_budget
        self._token_budget: TokenBudget = _NO_TOKEN_BUDGET
        self._tags: list[str] = []
        self._description: str = ""
        self._grader_notes: str = ""
        self._anti_patterns: list[AntiPatternRule] = []
        self._rubric: list[Rubric] = []
        self._workflow_parts: list[StepBuilder | WorkflowBuilder | WorkflowCheck] = []
        # Every step id recorded so far, in any part (duplicates are refused at compile, with both lines).
        self._step_ids: set[str] = set()
        self._children: list[Recorder] = []

    def _once(self, call: str, value: _T, at: str) -> _T:
        """``value`` for a field a case takes once; a second ``call`` (such as "c.prompt()") is an error."""
        first = self._set_at.get(call)
        if first is not None:
            raise DefinitionError(
                f"{call} was already called at {first}; a case takes it once: remove one of the calls",
                case_id=self._case_id,
                origin=at,
            )
        self._set_at[call] = at
        return value

    # Common fields

    def category(self, name: str) -> None:
        """The case's group in reports (for example "trigger", "session", "bug-repro")."""
        at = self._use("category")
        self._category = self._once(
            "c.category()", check_text(name, what="category", case_id=self._case_id, origin=at), at
        )

    def expect_skill(self, name: str | None) -> None:
        """The skill the agent should use; ``None`` when it should use none (a should-not-trigger case)."""
        at = self._use("expect_skill")
        if name is not None:
            name = check_id(name, what="skill name", case_id=self._case_id, origin=at)
        self._expected_skill = self._once("c.expect_skill()", name, at)

    def conditions(self, *ids: str) -> None:
        """Run the case only under these conditions (default: every condition the suite defines)."""
        at = self._use("conditions")
        if not ids:
            raise DefinitionError(
                "c.conditions() needs at least one condition id; leave it out to run under every condition",
                case_id=self._case_id,
                origin=at,
            )
        for ident in check_ids(ids, what="condition id", case_id=self._case_id, origin=at):
            if ident not in self._conditions:
                self._conditions.append(ident)
                self._set_at[f"c.conditions({ident})"] = at

    def workspace(self, preset_id: str) -> None:
        """Set up the trial's workspace with the named preset (see skillgym.workspace_preset)."""
        at = self._use("workspace")
        ident = check_id(preset_id, what="workspace preset id", case_id=self._case_id, origin=at)
        self._workspace = self._once("c.workspace()", ident, at)

    def env(self, variables: Mapping[str, str]) -> None:
        """Extra environment variables for the agent in this case (layered over the preset's)."""
        at = self._use("env")
        self._env = self._once(
            "c.env()", check_env(variables, what="c.env()", case_id=self._case_id, origin=at), at
        )

    def sandbox(
        self,
        *,
        network: str | None = None,
        writable: Sequence[str] = (),
        readable: Sequence[str] = (),
    ) -> None:
        """What this case's trials may do beyond the sandbox's defaults.

        ``network`` ("host" or "none") overrides the run's ``--network`` and the provider's default;
        ``writable`` and ``readable`` name host folders the trial may write or read besides its own
        (absolute, ``~/...`` in your home, or relative to the suite).
        """
        at = self._use("sandbox")
        if network is not None and network not in ("host", "none"):
            raise DefinitionError(
                f"c.sandbox(network=...) is 'host' or 'none', got {network!r}",
                case_id=self._case_id,
                origin=at,
            )
        folders = {}
        for what, given in (("writable", writable), ("readable", readable)):
            if isinstance(given, str):
                raise DefinitionError(
                    f"c.sandbox({what}=...) takes a list of folders, got the string {given!r}; "
                    f"write {what}=[{given!r}]",
                    case_id=self._case_id,
                    origin=at,
                )
            folders[what] = tuple(
                check_text(f, what=f"c.sandbox({what}=...) folder", case_id=self._case_id, origin=at)
                for f in given
            )
        if network is None and not folders["writable"] and not folders["readable"]:
            raise DefinitionError(
                "c.sandbox() sets nothing; pass network=, writable= or readable=",
                case_id=self._case_id,
                origin=at,
            )
        value = CaseSandbox(network=network, **folders)  # type: ignore[arg-type]
        self._sandbox = self._once("c.sandbox()", value, at)

    def budget(
        self,
        *,
        timeout_s: float | None = None,
        max_turns: int | None = None,
        max_wall_clock_s: float | None = None,
    ) -> None:
        """Limits for one trial; a value left out keeps the lane's default."""
        at = self._use("budget")
        if timeout_s is None and max_turns is None and max_wall_clock_s is None:
            raise DefinitionError(
                "c.budget() sets nothing; pass timeout_s=, max_turns= or max_wall_clock_s=",
                case_id=self._case_id,
                origin=at,
            )
        base = self.default_budget
        budget = Budget(
            timeout_s=base.timeout_s
            if timeout_s is None
            else check_number(timeout_s, what="timeout_s", case_id=self._case_id, origin=at),
            max_turns=base.max_turns
            if max_turns is None
            else check_int(max_turns, what="max_turns", case_id=self._case_id, origin=at),
            max_wall_clock_s=base.max_wall_clock_s
            if max_wall_clock_s is None
            else check_number(max_wall_clock_s, what="max_wall_clock_s", case_id=self._case_id, origin=at),
        )
        self._budget = self._once("c.budget()", budget, at)

    def trials(
        self,
        count: int | Literal["auto"],
        /,
        *,
        max_trials: int | None = None,
        min_trials: int | None = None,
        futility: float | None = DEFAULT_FUTILITY,
    ) -> None:
        """This case's trials per condition: a number, or ``"auto"`` (adaptive: see ``skillgym.trials``).

        It overrides the suite's default; ``--trials`` on the command line overrides it.
        """
        at = self._use("trials")
        policy = make_trial_policy(
            count, max_trials, min_trials, futility, call="c.trials()", case_id=self._case_id, origin=at
        )
        self._trials = self._once("c.trials()", policy, at)

    def token_budget(self, *, max_regression_percent: float) -> None:
        """How far the median token total may rise above the case's snapshot before it is a regression."""
        at = self._use("token_budget")
        percent = check_number(
            max_regression_percent,
            what="max_regression_percent",
            case_id=self._case_id,
            origin=at,
            inclusive=True,
        )
        self._token_budget = self._once("c.token_budget()", TokenBudget(max_regression_percent=percent), at)

    def tags(self, *tags: str) -> None:
        """Free-form labels for selecting and grouping cases."""
        at = self._use("tags")
        for tag in tags:
            text = check_text(tag, what="tag", case_id=self._case_id, origin=at)
            if text not in self._tags:
                self._tags.append(text)

    def describe(self, text: str) -> None:
        """A note for people reading reports; it never reaches the agent or the fingerprint."""
        at = self._use("describe")
        self._description = self._once(
            "c.describe()", check_text(text, what="description", case_id=self._case_id, origin=at), at
        )

    def grader_notes(self, text: str) -> None:
        """What a good result looks like, in words: the judge's reference; never shown to the agent.

        The run's ``--judge`` reads the notes beside each judged check and rubric of the case, as the
        reference a good result is measured against (it still grades each expectation on its own).
        Unlike ``c.describe()``, the notes are part of the case's fingerprint.
        """
        at = self._use("grader_notes")
        self._grader_notes = self._once(
            "c.grader_notes()", check_text(text, what="grader notes", case_id=self._case_id, origin=at), at
        )

    def anti_pattern(
        self,
        rule_id: str,
        /,
        *patterns: PatternLike,
        severity: Severity = "warning",
        description: str = "",
        suggested_fix: str = "",
    ) -> None:
        """A habit the skill should prevent in this case; ``severity="error"`` fails a trial it fires in."""
        at = self._use("anti_pattern")
        self._anti_patterns.append(
            make_anti_pattern(
                rule_id, patterns, severity, description, suggested_fix, case_id=self._case_id, origin=at
            )
        )

    def rubric(
        self,
        text: str,
        *,
        points: int = 4,
        pass_at: int | None = None,
        weight: float = 1.0,
        id: str | None = None,
    ) -> None:
        """A graded score: the run's ``--judge`` rates the trial against ``text`` from 0 to ``points``.

        The scale: 0 misses the rubric entirely, ``points`` meets all of it, each point between is an
        equal step (the judge is told the same). The rating joins the trial's score with ``weight``
        (the lane's own score weighs 1); with ``pass_at`` it is also a required check that holds when
        the rating reaches ``pass_at``. Call it again for another rubric (ids ``rubric``, ``rubric-2``).
        """
        at = self._use("rubric")
        body = check_text(text, what="c.rubric() text", case_id=self._case_id, origin=at)
        top = check_int(points, what="c.rubric() points", case_id=self._case_id, origin=at)
        if pass_at is not None:
            bar = check_int(pass_at, what="c.rubric() pass_at", case_id=self._case_id, origin=at, minimum=0)
            if bar > top:
                raise DefinitionError(
                    f"c.rubric() pass_at={bar} is above points={top}, so no rating could pass; "
                    f"lower pass_at or raise points",
                    case_id=self._case_id,
                    origin=at,
                )
            pass_at = bar
        share = check_number(
            weight, what="c.rubric() weight", case_id=self._case_id, origin=at, inclusive=True
        )
        taken = {r.id for r in self._rubric}
        ident = (
            free_step_id("rubric", taken)
            if id is None
            else check_id(id, what="rubric id", case_id=self._case_id, origin=at)
        )
        self._rubric.append(Rubric(id=ident, text=body, points=top, pass_at=pass_at, weight=share, origin=at))

    # Workflow steps

    def step(
        self,
        step_id: str,
        /,
        description: str = "",
        required: bool = True,
        weight: float = 1.0,
        depends_on: Sequence[str] = (),
    ) -> StepBuilder:
        """Open ``with c.step(id) as s:`` to record one step the agent is expected to take."""
        at = self._use("step")
        ident = check_id(step_id, what="step id", case_id=self._case_id, origin=at)
        if isinstance(depends_on, str):
            depends_on = (depends_on,)
        step = StepBuilder(
            case_id=self._case_id,
            opened_at=at,
            step_id=ident,
            description=check_text(
                description, what="description", case_id=self._case_id, origin=at, allow_empty=True
            ),
            required=bool(required),
            weight=check_number(
                weight, what=f"weight of step {ident!r}", case_id=self._case_id, origin=at, inclusive=True
            ),
            depends_on=check_ids(depends_on, what="step id", case_id=self._case_id, origin=at),
        )
        self._workflow_parts.append(step)
        self._step_ids.add(ident)
        return self._open_child(step)

    def raw_workflow_check(self, check: WorkflowCheck) -> None:
        """Append a WorkflowCheck Struct as given (its origin is filled in when empty)."""
        at = self._use("raw_workflow_check")
        checked = raw_check(check, case_id=self._case_id, origin=at)
        self._workflow_parts.append(checked)
        self._step_ids.add(checked.id)

    # Compile

    def _missing(self) -> list[str]:
        """Required calls not made, each as "what (call ...)"; lanes extend it."""
        return [] if "c.category()" in self._set_at else ['a category (call c.category("..."))']

    def _assertion_judged(self) -> tuple[JudgedCheck, ...]:
        """Judged checks recorded outside steps (the effects lanes' ``a.judge()``)."""
        return ()

    def _build(self) -> Case:
        """The lane's Struct with its lane-specific fields; common fields are filled in by ``_compile``."""
        raise NotImplementedError

    def _compile(self) -> Case:
        """Validate what was recorded and build the case Struct (without its fingerprint)."""
        missing = self._missing()
        if missing:
            raise DefinitionError(
                f"incomplete {self.lane} case: missing {', '.join(missing)}; "
                "add the call(s) inside the block",
                case_id=self._case_id,
                origin=self._opened_at,
            )
        workflow: list[WorkflowCheck] = []
        judged: list[JudgedCheck] = []
        for part in self._workflow_parts:
            workflow.extend(part._compile() if not isinstance(part, WorkflowCheck) else (part,))
            if isinstance(part, StepBuilder):
                judged.extend(part._judged_checks())
        check_workflow(workflow, case_id=self._case_id)
        judged.extend(self._assertion_judged())
        if judged or self._rubric:
            check_unique(
                [(j.id, j.origin) for j in judged] + [(r.id, r.origin) for r in self._rubric],
                what="judged check",
                case_id=self._case_id,
            )
        if self._anti_patterns:
            check_unique(
                [(r.id, r.origin) for r in self._anti_patterns],
                what="anti-pattern rule",
                case_id=self._case_id,
            )
        return self._with_common(self._build(), tuple(workflow), tuple(judged))

    def _with_common(
        self, case: _CaseT, workflow: tuple[WorkflowCheck, ...], judged: tuple[JudgedCheck, ...] = ()
    ) -> _CaseT:
        return msgspec.structs.replace(
            case,
            judged=judged,
            rubric=tuple(self._rubric),
            expected_skill=self._expected_skill,
            conditions=tuple(self._conditions),
            workflow=workflow,
            anti_patterns=tuple(self._anti_patterns),
            workspace=self._workspace,
            env=self._env,
            sandbox=self._sandbox,
            trials=self._trials,
            token_budget=self._token_budget,
            tags=tuple(self._tags),
            description=self._description,
            grader_notes=self._grader_notes,
            origin=self._opened_at,
            origins=dict(self._set_at),
        )

    def _open_child(self, child: _ChildT) -> _ChildT:
        self._children.append(child)
        return child

    def _close(self, *, discard: bool = False) -> None:
        super()._close(discard=discard)
        for child in self._children:
            if not child._closed:  # a block the user never entered or left
                child._close()

    # Lane misuse

    if not TYPE_CHECKING:  # invisible to type checkers, so a typo stays a static error

        def __getattr__(self, name: str) -> Any:
            raise no_such_method(self, self.lane, name)


def make_anti_pattern(
    rule_id: str,
    patterns: Sequence[PatternLike],
    severity: str,
    description: str,
    suggested_fix: str,
    *,
    case_id: str | None,
    origin: str,
) -> AntiPatternRule:
    """An AntiPatternRule from user arguments (shared by the case method and the suite function)."""
    ident = check_id(rule_id, what="anti-pattern id", case_id=case_id, origin=origin)
    return AntiPatternRule(
        id=ident,
        description=check_text(
            description, what="description", case_id=case_id, origin=origin, allow_empty=True
        ),
        severity=check_choice(severity, SEVERITIES, what="severity", case_id=case_id, origin=origin),
        patterns=to_patterns(
            patterns,
            call=f"anti_pattern({ident!r}, ...)",
            where=f"in anti-pattern {ident!r}",
            case_id=case_id,
            origin=origin,
        ),
        suggested_fix=check_text(
            suggested_fix, what="suggested_fix", case_id=case_id, origin=origin, allow_empty=True
        ),
        origin=origin,
    )


def make_trial_policy(
    count: object,
    max_trials: object,
    min_trials: object,
    futility: object = DEFAULT_FUTILITY,
    *,
    call: str,
    case_id: str | None,
    origin: str,
) -> TrialPolicy:
    """A TrialPolicy from user arguments (shared by ``skillgym.trials()`` and ``c.trials()``)."""
    default = TrialPolicy()
    if count != "auto":
        number = check_int(count, what=f"{call} count", case_id=case_id, origin=origin)
        if max_trials is not None or min_trials is not None or futility != DEFAULT_FUTILITY:
            raise DefinitionError(
                f"{call} takes max_trials=, min_trials= and futility= only with 'auto'; drop them, "
                "or pass 'auto'",
                case_id=case_id,
                origin=origin,
            )
        return TrialPolicy(count=number)
    most = (
        default.max_trials
        if max_trials is None
        else check_int(max_trials, what=f"{call} max_trials", case_id=case_id, origin=origin)
    )
    least = (
        min(default.min_trials, most)
        if min_trials is None
        else check_int(min_trials, what=f"{call} min_trials", case_id=case_id, origin=origin)
    )
    if least > most:
        raise DefinitionError(
            f"{call} has min_trials={least} above max_trials={most}; lower min_trials or raise max_trials",
            case_id=case_id,
            origin=origin,
        )
    k = (
        None
        if futility is None
        else check_number(futility, what=f"{call} futility", case_id=case_id, origin=origin, inclusive=True)
    )
    return TrialPolicy(auto=True, min_trials=least, max_trials=most, futility=k)
