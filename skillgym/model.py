"""The compiled case model: frozen msgspec Structs shared by the runner, graders and reporters."""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal, TypeAlias

import msgspec

Lane: TypeAlias = Literal["prompt", "execution", "dogfood"]
LANES: tuple[Lane, ...] = ("prompt", "execution", "dogfood")
Severity: TypeAlias = Literal["info", "warning", "error"]
ArtifactKind: TypeAlias = Literal[
    "screenshot", "recording", "notes", "manifest", "json", "script", "log", "other"
]
ValidationProfile: TypeAlias = Literal["contract-reporting", "interactive-renderer"]
WorkspaceMode: TypeAlias = Literal["isolated", "shared"]
FixtureEvent: TypeAlias = Literal["start", "input", "output", "resize", "exit"]


class Data(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, gc=False):
    """Base of every value passed between modules: frozen, keyword-only, strict on input.

    ``gc=False``: a loaded suite holds tens of thousands of these, and the cycle collector need not walk
    them; frozen values of strings, numbers, tuples and the user's plain mappings never form a cycle.
    """


class Pattern(Data, frozen=True, kw_only=True):
    """A regular expression searched in text; ``flags`` is a subset of ``"ims"`` (re.I, re.M, re.S)."""

    regex: str
    flags: str = "i"


class Budget(Data, frozen=True, kw_only=True):
    """Limits for one trial: the process deadline, the agent's turn cap and a wall-clock cap."""

    timeout_s: float
    max_turns: int | None = None
    max_wall_clock_s: float | None = None


class CaseSandbox(Data, frozen=True, kw_only=True):
    """What a case's trials may do beyond the sandbox's defaults (``c.sandbox(...)``).

    ``network`` overrides the run's and the provider's choice; ``writable`` and ``readable`` are host
    folders (absolute, ``~/...`` for the user's home, or relative to the suite).
    """

    network: Literal["host", "none"] | None = None
    writable: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()


DEFAULT_FUTILITY: Final = 1.5  # the futility rule's k, in standard errors (``skillgym.sequential.decide``)


class TrialPolicy(Data, frozen=True, kw_only=True):
    """How many trials a case gets: ``count`` of them, or with ``auto`` between ``min_trials`` and
    ``max_trials``, stopping once its verdict is settled or futile (see ``skillgym.sequential``).

    ``futility``: the futility rule's k, fixed before the run: a question stops as futile once the trials
    left up to ``max_trials``, going on at its estimate plus (or minus) k standard errors, could not decide
    it. None: curtailment only (futile once no continuation at all could decide it).
    """

    auto: bool = False
    count: int = 1  # the fixed number of trials; unused with auto
    min_trials: int = 3
    max_trials: int = 20
    futility: float | None = DEFAULT_FUTILITY

    @property
    def most(self) -> int:
        """The trials a plan holds for the case: every one a fixed policy runs, the cap of an auto one."""
        return self.max_trials if self.auto else self.count


class TokenBudget(Data, frozen=True, kw_only=True):
    """Per-case cost guardrail: how far the median total may rise above its snapshot."""

    max_regression_percent: float | None = None


class Command(Data, frozen=True, kw_only=True):
    """A process to run as an argv list (never a shell string), with its own deadline."""

    argv: tuple[str, ...]
    id: str = ""
    description: str = ""
    cwd: str | None = None
    env: dict[str, str] = {}
    timeout_s: float = 60.0


class WorkflowCheck(Data, frozen=True, kw_only=True):
    """One step the agent is expected to take, judged by patterns in its response or commands."""

    id: str
    description: str = ""
    required: bool = True
    required_patterns: tuple[Pattern, ...] = ()
    forbidden_patterns: tuple[Pattern, ...] = ()
    depends_on: tuple[str, ...] = ()
    weight: float = 1.0
    origin: str = ""


class AntiPatternRule(Data, frozen=True, kw_only=True):
    """A habit the skill should prevent; fires when any pattern matches outside a negation."""

    id: str
    description: str = ""
    severity: Severity = "warning"
    patterns: tuple[Pattern, ...]
    suggested_fix: str = ""
    origin: str = ""


class _Verifier(Data, frozen=True, kw_only=True, tag_field="kind"):
    id: str
    description: str = ""
    required: bool = True
    origin: str = ""


class FileExists(_Verifier, frozen=True, kw_only=True, tag="file-exists"):
    """A file (path relative to the workspace) exists after the trial."""

    path: str


class FileContains(_Verifier, frozen=True, kw_only=True, tag="file-contains"):
    """A workspace file exists and its text matches ``pattern``."""

    path: str
    pattern: Pattern


class FixtureLogContains(_Verifier, frozen=True, kw_only=True, tag="fixture-log"):
    """The fixture's own ground-truth log holds at least ``min_count`` matching events."""

    fixture: str
    event: FixtureEvent
    pattern: Pattern | None = None
    min_count: int = 1


class CommandCheck(_Verifier, frozen=True, kw_only=True, tag="command"):
    """A command run in the workspace after the trial exits with ``exit_code`` (and prints a match)."""

    argv: tuple[str, ...]
    exit_code: int = 0
    stdout_pattern: Pattern | None = None
    timeout_s: float = 30.0


class NoLiveSessions(_Verifier, frozen=True, kw_only=True, tag="no-live-sessions"):
    """No terminal session is left running on the trial's private tmux socket directory."""


class ArtifactExists(_Verifier, frozen=True, kw_only=True, tag="artifact-exists"):
    """At least ``min_count`` artifacts of ``artifact`` kind exist under the trial's output dir."""

    artifact: ArtifactKind
    min_count: int = 1
    path_patterns: tuple[str, ...] = ()


class CustomVerifier(_Verifier, frozen=True, kw_only=True, tag="custom"):
    """A user function ``module:function`` called with the trial context and ``config``."""

    target: str
    config: dict[str, Any] = {}


Verifier: TypeAlias = (
    FileExists
    | FileContains
    | FixtureLogContains
    | CommandCheck
    | NoLiveSessions
    | ArtifactExists
    | CustomVerifier
)


class ArtifactRequirement(Data, frozen=True, kw_only=True):
    """Evidence files the agent must leave, matched by kind and optional glob patterns."""

    artifact: ArtifactKind
    description: str = ""
    required: bool = True
    min_count: int = 1
    path_patterns: tuple[str, ...] = ()
    origin: str = ""


class ReportRequirement(Data, frozen=True, kw_only=True):
    """Something the dogfood report must contain: a section and/or patterns, without forbidden ones."""

    id: str
    description: str = ""
    required: bool = True
    section: str | None = None
    required_patterns: tuple[Pattern, ...] = ()
    forbidden_patterns: tuple[Pattern, ...] = ()
    origin: str = ""


class JudgedCheck(Data, frozen=True, kw_only=True):
    """A plain-language expectation an LLM judge grades against the trial's material.

    ``files`` are workspace files (relative paths) the judge reads besides the answer and the commands;
    ``step`` names the workflow step a prompt-lane ``s.judge()`` belongs to.
    """

    id: str
    expectation: str
    required: bool = True
    files: tuple[str, ...] = ()
    step: str | None = None
    origin: str = ""


class Rubric(Data, frozen=True, kw_only=True):
    """A graded score: the judge rates the trial's material against ``text`` from 0 to ``points``.

    The rating joins the trial's score with ``weight``; with ``pass_at`` it is also a required check
    that holds when the rating reaches ``pass_at``.
    """

    id: str
    text: str
    points: int = 4
    pass_at: int | None = None
    weight: float = 1.0
    origin: str = ""


class ProofBundle(Data, frozen=True, kw_only=True):
    """Which kinds of evidence a dogfood proof bundle must hold."""

    screenshot: bool = False
    recording: bool = False
    notes: bool = False
    manifest: bool = False


class _Case(Data, frozen=True, kw_only=True, tag_field="lane"):
    lane_name: ClassVar[Lane]

    id: str
    category: str
    expected_skill: str | None = None
    conditions: tuple[str, ...] = ()  # empty: every condition the suite defines
    workflow: tuple[WorkflowCheck, ...] = ()
    anti_patterns: tuple[AntiPatternRule, ...] = ()
    budget: Budget
    workspace: str | None = None
    env: dict[str, str] = {}
    sandbox: CaseSandbox | None = None
    trials: TrialPolicy | None = None  # c.trials(): None takes the suite's default (or the command line's)
    token_budget: TokenBudget = TokenBudget()
    tags: tuple[str, ...] = ()
    # Checks and scores an LLM judge grades (``s.judge``, ``a.judge``, ``c.rubric``): see skillgym.judge.
    judged: tuple[JudgedCheck, ...] = ()
    rubric: tuple[Rubric, ...] = ()
    # What a good result looks like, for whoever grades (``c.grader_notes``): the judge reads it as its
    # reference; the agent never sees it.
    grader_notes: str = ""
    description: str = ""
    origin: str = ""
    # Where each call was made ("c.fixture()" -> "evals/x.py:7"; "c.conditions(stale)" for each id): a
    # name checked once the whole suite has loaded (a fixture, a preset) is refused at its own line.
    origins: dict[str, str] = {}
    fingerprint: str = ""

    @property
    def lane(self) -> Lane:
        return self.lane_name


class PromptCase(_Case, frozen=True, kw_only=True, tag="prompt"):
    """Routing and planning: the agent answers in text; ``context`` is shown with the prompt."""

    lane_name: ClassVar[Lane] = "prompt"

    prompt: str
    context: str = ""
    expected_patterns: tuple[Pattern, ...] = ()
    forbidden_patterns: tuple[Pattern, ...] = ()


class ExecutionCase(_Case, frozen=True, kw_only=True, tag="execution"):
    """The agent performs ``task`` in a workspace; required verifiers judge the real effects."""

    lane_name: ClassVar[Lane] = "execution"

    task: str
    fixture: str | None = None
    setup: tuple[Command, ...] = ()
    verifiers: tuple[Verifier, ...] = ()
    artifacts: tuple[ArtifactRequirement, ...] = ()
    reference_steps: int | None = None


class DogfoodCase(_Case, frozen=True, kw_only=True, tag="dogfood"):
    """Exploratory QA: the agent leaves a proof bundle and a report, graded for evidence."""

    lane_name: ClassVar[Lane] = "dogfood"

    task: str
    fixture: str | None = None
    bundle_path: str = "bundle"
    bundle_requirements: tuple[str, ...] = ()
    validation_profile: ValidationProfile = "contract-reporting"
    proof_bundle: ProofBundle = ProofBundle()
    report_requirements: tuple[ReportRequirement, ...] = ()
    verifiers: tuple[Verifier, ...] = ()
    artifacts: tuple[ArtifactRequirement, ...] = ()
    taxonomy: tuple[str, ...] = ()  # issue labels the report should use; empty: not scored
    pass_threshold: float = 0.6


Case: TypeAlias = PromptCase | ExecutionCase | DogfoodCase


class SkillInstall(Data, frozen=True, kw_only=True):
    """A skill folder (relative to the suite root) installed where the agent discovers skills."""

    name: str
    source: str


class Condition(Data, frozen=True, kw_only=True):
    """How the skill reaches the agent: files installed natively, text injected, extra env."""

    id: str
    description: str = ""
    inject: tuple[str, ...] = ()
    inject_text: str = ""
    install: tuple[SkillInstall, ...] = ()
    env: dict[str, str] = {}
    origin: str = ""


class WorkspacePreset(Data, frozen=True, kw_only=True):
    """Declarative setup of a trial workspace: template copy, bootstrap commands, cwd and env."""

    id: str
    mode: WorkspaceMode = "isolated"
    description: str = ""
    template: str | None = None
    bootstrap: tuple[Command, ...] = ()
    cwd: str | None = None
    env: dict[str, str] = {}
    origin: str = ""


class Skill(Data, frozen=True, kw_only=True):
    """A skill under test: its folder, and the material for the self-load and stale conditions."""

    name: str
    path: str
    stub: str | None = None
    stale: str | None = None
    origin: str = ""


class Fixture(Data, frozen=True, kw_only=True):
    """A small program under test, run inside the workspace; ``path`` is relative to the suite root."""

    name: str
    path: str


GateMetric: TypeAlias = Literal["lift", "pass_rate"]
GateOperator: TypeAlias = Literal[">", ">=", "<", "<="]


class GateSpec(Data, frozen=True, kw_only=True):
    """One parsed gate: the metric, its arguments by parameter name, the comparison and the threshold."""

    expression: str  # as written, for reports
    metric: GateMetric
    arguments: dict[str, str]
    operator: GateOperator
    threshold: float
    origin: str = "--gate"  # where it was declared: the command line, or suite.py's file:line


class SuiteJudge(Data, frozen=True, kw_only=True):
    """The judge a suite's judged checks were recorded with (``skillgym.judged_by``).

    A run without ``--judge`` plays this judge's recorded verdicts; ``min_kappa`` is the agreement with
    human labels (Cohen's kappa, from ``skillgym judge check``) below which a run warns.
    """

    judge: str
    min_kappa: float | None = None
    origin: str = ""


class Suite(Data, frozen=True, kw_only=True):
    """A loaded, validated suite: everything a plan needs, in registration order."""

    root: str
    cases: tuple[Case, ...] = ()
    conditions: tuple[Condition, ...] = ()
    presets: tuple[WorkspacePreset, ...] = ()
    skills: tuple[Skill, ...] = ()
    fixtures: tuple[Fixture, ...] = ()
    anti_patterns: tuple[AntiPatternRule, ...] = ()
    secrets: tuple[str, ...] = ()  # the values the suite marked with skillgym.secret(), in order
    trials: TrialPolicy | None = None  # the suite's default trials (skillgym.trials()); None: one
    gates: tuple[GateSpec, ...] = ()  # gate(...) in suite.py: judged at the end of every run
    judge: SuiteJudge | None = None
