"""Suite-level definitions: skills, conditions, workspace presets, suite-wide anti-pattern rules, secrets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from ..errors import DefinitionError
from ..gates.expression import GateSyntaxError, parse_gate
from ..model import (
    DEFAULT_FUTILITY,
    AntiPatternRule,
    Command,
    Condition,
    GateSpec,
    Severity,
    Skill,
    SkillInstall,
    SuiteJudge,
    TrialPolicy,
    WorkspaceMode,
    WorkspacePreset,
)
from ..redact import MIN_SECRET_LENGTH
from ..registry import current_registry
from .base import make_anti_pattern, make_trial_policy
from .checks import (
    PatternLike,
    check_argv,
    check_choice,
    check_env,
    check_id,
    check_relative_path,
    check_text,
)
from .recorder import caller_origin

WORKSPACE_MODES: tuple[WorkspaceMode, ...] = ("isolated", "shared")


def skill(name: str, path: str, *, stub: str | None = None, stale: str | None = None) -> Skill:
    """Declare a skill under test: its folder, and optional bootstrap-stub and stale-guidance files.

    Paths are relative to the suite root. ``stub`` feeds the self-load condition, ``stale`` the stale one.
    """
    at = caller_origin()
    declared = Skill(
        name=check_id(name, what="skill name", case_id=None, origin=at),
        path=check_relative_path(path, what="skill path", case_id=None, origin=at),
        stub=None if stub is None else check_relative_path(stub, what="stub path", case_id=None, origin=at),
        stale=None
        if stale is None
        else check_relative_path(stale, what="stale path", case_id=None, origin=at),
        origin=at,
    )
    current_registry().add_skill(declared)
    return declared


def condition(
    condition_id: str,
    /,
    *,
    description: str = "",
    inject: Sequence[str] = (),
    inject_text: str = "",
    install: Iterable[SkillInstall | tuple[str, str]] = (),
    env: Mapping[str, str] | None = None,
) -> Condition:
    """Declare how the skill reaches the agent: files injected, inline text, skills installed, extra env.

    A condition adds to the default conditions (``none``, ``self-load``, ``preloaded``, ``stale``); one
    with a default's id replaces that default in its place. After ``replace_default_conditions()`` the
    declared conditions are the suite's only ones.

    ``inject`` lists files (relative to the suite root) whose text is injected; ``install`` items are
    ``(name, source)`` pairs or SkillInstall structs: a folder is copied to ``<skills dir>/<name>/``, a
    lone file becomes ``<skills dir>/<name>/SKILL.md`` (over a folder installed before it).
    """
    at = caller_origin()
    ident = check_id(condition_id, what="condition id", case_id=None, origin=at)
    if isinstance(inject, str):
        inject = (inject,)
    declared = Condition(
        id=ident,
        description=check_text(description, what="description", case_id=None, origin=at, allow_empty=True),
        inject=tuple(check_relative_path(p, what="inject path", case_id=None, origin=at) for p in inject),
        inject_text=check_text(inject_text, what="inject_text", case_id=None, origin=at, allow_empty=True),
        install=tuple(_install(item, at) for item in install),
        env=check_env(env, what=f"env of condition {ident!r}", case_id=None, origin=at),
        origin=at,
    )
    current_registry().add_condition(declared)
    return declared


def replace_default_conditions() -> None:
    """Run only the conditions this suite declares: drop the defaults instead of adding to them.

    Without it, each ``condition(...)`` adds a condition to the defaults (or replaces the default of
    the same id). A suite that calls it and declares no condition fails to load.
    """
    current_registry().replace_default_conditions(caller_origin())


def _install(item: object, at: str) -> SkillInstall:
    if isinstance(item, SkillInstall):
        check_id(item.name, what="installed skill name", case_id=None, origin=at)
        check_relative_path(item.source, what="installed skill source", case_id=None, origin=at)
        return item
    if isinstance(item, tuple) and len(item) == 2:
        name, source = item
        return SkillInstall(
            name=check_id(name, what="installed skill name", case_id=None, origin=at),
            source=check_relative_path(source, what="installed skill source", case_id=None, origin=at),
        )
    raise DefinitionError(
        f"install item {item!r} must be a (name, source) pair such as ('tmux-tui', 'skills/tmux-tui') "
        "or a SkillInstall",
        origin=at,
    )


def workspace_preset(
    preset_id: str,
    /,
    *,
    mode: WorkspaceMode = "isolated",
    description: str = "",
    template: str | None = None,
    bootstrap: Iterable[Sequence[str] | Command] = (),
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> WorkspacePreset:
    """Declare how a trial's workspace is set up: a template folder copied in, then bootstrap commands.

    Bootstrap items are argv lists (or Command structs), run without a shell, in order.
    """
    at = caller_origin()
    ident = check_id(preset_id, what="workspace preset id", case_id=None, origin=at)
    if isinstance(bootstrap, (str, bytes)):
        check_argv(bootstrap, what="bootstrap", case_id=None, origin=at)
    commands: list[Command] = []
    for n, item in enumerate(bootstrap, start=1):
        if isinstance(item, Command):
            check_argv(item.argv, what=f"bootstrap command {n}", case_id=None, origin=at)
            check_env(
                item.env,
                what=f"env of bootstrap command {n} of workspace preset {ident!r}",
                case_id=None,
                origin=at,
            )
            commands.append(item)
        else:
            argv = check_argv(item, what=f"bootstrap command {n}", case_id=None, origin=at)
            commands.append(Command(argv=argv, id=f"bootstrap-{n}"))
    declared = WorkspacePreset(
        id=ident,
        mode=check_choice(mode, WORKSPACE_MODES, what="workspace mode", case_id=None, origin=at),
        description=check_text(description, what="description", case_id=None, origin=at, allow_empty=True),
        template=None
        if template is None
        else check_relative_path(template, what="template", case_id=None, origin=at),
        bootstrap=tuple(commands),
        cwd=None if cwd is None else check_relative_path(cwd, what="cwd", case_id=None, origin=at),
        env=check_env(env, what=f"env of workspace preset {ident!r}", case_id=None, origin=at),
        origin=at,
    )
    current_registry().add_preset(declared)
    return declared


def anti_pattern(
    rule_id: str,
    /,
    *patterns: PatternLike,
    severity: Severity = "warning",
    description: str = "",
    suggested_fix: str = "",
) -> AntiPatternRule:
    """Declare a suite-wide habit the skill should prevent; ``severity="error"`` fails a trial it fires in."""
    at = caller_origin()
    rule = make_anti_pattern(rule_id, patterns, severity, description, suggested_fix, case_id=None, origin=at)
    current_registry().add_anti_pattern(rule)
    return rule


def trials(
    count: int | Literal["auto"],
    /,
    *,
    max_trials: int | None = None,
    min_trials: int | None = None,
    futility: float | None = DEFAULT_FUTILITY,
) -> TrialPolicy:
    """The suite's default trials per case and condition: a number, or ``"auto"`` (adaptive trials).

    ``"auto"`` runs at least ``min_trials`` (default 3) and at most ``max_trials`` (default 20) trials,
    stopping a case under a condition once its verdict is settled, or once it is futile (README: Adaptive
    trials). ``futility`` is the futility rule's k, fixed before the run: a question stops, inconclusive,
    once the trials left up to ``max_trials`` could not decide it even going on at its estimate plus (or
    minus) k standard errors; larger k stops later (more power, more trials), None stops only when no
    continuation at all could decide it. A case's own ``c.trials(...)`` overrides this default, and
    ``--trials`` on the command line overrides both.
    """
    at = caller_origin()
    policy = make_trial_policy(
        count, max_trials, min_trials, futility, call="skillgym.trials()", case_id=None, origin=at
    )
    current_registry().set_trials(policy, at)
    return policy


def secret(value: str) -> str:
    """Mark ``value`` secret and return it unchanged, to use anywhere a string goes (an env value, a task).

    skillgym then scrubs it from every file of the run folder, every event and report, and the console,
    whatever name it is given (``c.env({"HOST_AUTH": skillgym.secret(os.environ["MY_API_KEY"])})``), and
    takes case fingerprints without it, so a rotated credential leaves them as they were. Values of
    secret-looking keys (``*_TOKEN``, ``*_KEY``, ``*_SECRET``, ``*_PASSWORD``) are secrets without it.
    """
    at = caller_origin()
    if not isinstance(value, str):
        raise DefinitionError(
            f"skillgym.secret() takes a string, got {type(value).__name__}; convert it with str()", origin=at
        )
    if len(value) < MIN_SECRET_LENGTH:
        # Not shown: it is a secret. Too short to scrub from free text without mangling it.
        raise DefinitionError(
            f"skillgym.secret() was given a value of {len(value)} characters; skillgym scrubs values of "
            f"{MIN_SECRET_LENGTH} or more (a shorter one appears innocently everywhere): pass the whole "
            "credential, or leave it unmarked",
            origin=at,
        )
    if "\x00" in value:
        raise DefinitionError(
            "skillgym.secret() was given a value with a null byte, which no process environment can hold: "
            "remove it",
            origin=at,
        )
    current_registry().add_secret(value)
    return value


def gate(expression: str, /) -> GateSpec:
    """Declare a CI gate every run of the suite is judged by, as on the command line's ``--gate``.

    ``gate("lift(self-load, none) > 0")`` or ``gate("pass_rate(execution, self-load) >= 0.8")``: it passes
    only when the whole interval is on the right side (see the README's Gates section). A gate on a lane or
    condition a run does not include is reported as skipped. A malformed expression stops the load with
    its file:line and the position of the mistake.
    """
    at = caller_origin()
    if not isinstance(expression, str):
        raise DefinitionError(
            f"gate() takes the expression as a string, got {type(expression).__name__}", origin=at
        )
    try:
        declared = parse_gate(expression, origin=at)
    except GateSyntaxError as exc:
        raise DefinitionError(str(exc), origin=at) from exc
    current_registry().add_gate(declared)
    return declared


def judged_by(judge: str, *, min_kappa: float | None = None) -> SuiteJudge:
    """Name the judge the suite's judged checks are graded with (``PROVIDER:MODEL``, as ``--judge`` takes).

    A run without ``--judge`` plays this judge's recorded verdicts (``judge/verdicts/`` in the suite,
    written by ``--judge-record``), so the suite's judged checks run offline. ``min_kappa`` (Cohen's kappa
    from -1 to 1) is the agreement with human labels the judge must have shown in ``skillgym judge
    check``; a run warns when its stored calibration is lower, or missing.
    """
    at = caller_origin()
    spec = check_text(judge, what="judged_by() judge", case_id=None, origin=at).strip()
    provider, _, model = spec.partition(":")
    if not provider or not model or ":" in model:
        raise DefinitionError(
            f"judged_by({judge!r}) names a judge as PROVIDER:MODEL (for example 'claude:claude-sonnet-4-5'), "
            "so its recorded verdicts can be found",
            origin=at,
        )
    if min_kappa is not None and (
        isinstance(min_kappa, bool) or not isinstance(min_kappa, (int, float)) or not -1 <= min_kappa <= 1
    ):
        raise DefinitionError(
            f"judged_by(min_kappa=...) is Cohen's kappa, a number from -1 to 1, got {min_kappa!r}", origin=at
        )
    declared = SuiteJudge(
        judge=spec, min_kappa=float(min_kappa) if min_kappa is not None else None, origin=at
    )
    current_registry().set_judge(declared)
    return declared
