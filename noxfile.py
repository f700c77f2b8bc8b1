"""Task runner: lint, typecheck, tests, benchmarks, and one session per lane and lane-condition pair."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]  # a bare `nox` spends no tokens
nox.options.reuse_existing_virtualenvs = True

LANES = ("prompt", "execution", "dogfood")
CONDITIONS = ("none", "self-load", "preloaded", "stale")  # the example suite's: see _pair_session


def _install(session: nox.Session, *args: str) -> None:
    """``pip install ARGS`` into the session's virtualenv, unless it already holds them for this
    pyproject.toml: the package is installed editable, so only a change of its dependencies needs pip
    again (which costs several seconds a session even when there is nothing to do)."""
    stamp = Path(session.virtualenv.location) / ".skillgym-installed"
    wanted = hashlib.sha256(Path("pyproject.toml").read_bytes() + repr(args).encode()).hexdigest()
    done = stamp.read_text().split() if stamp.is_file() else []
    if wanted in done:
        return
    session.install(*args)
    stamp.write_text("\n".join([*done, wanted]) + "\n")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    _install(session, "ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the library."""
    _install(session, "-e", ".[dev]")
    session.run("mypy")


def _test_extras() -> str:
    """The test extra, plus any named in $SKILLGYM_TEST_EXTRAS (CI sets ``ray``: the Ray executor's tests
    then run on a real cluster instead of skipping)."""
    more = [e.strip() for e in os.environ.get("SKILLGYM_TEST_EXTRAS", "").split(",") if e.strip()]
    return ".[" + ",".join(["test", *more]) + "]"


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite without the integration tests; extra arguments go to pytest."""
    _install(session, "-e", _test_extras())
    session.run("pytest", "-m", "not integration", *session.posargs)


@nox.session
def integration(session: nox.Session) -> None:
    """Tests against real programs: pinned Claude Code, Codex and Gemini CLIs (installed from npm), tmux."""
    _install(session, "-e", ".[test]")
    session.run("pytest", "-m", "integration", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """The API reference (mkdocs-material + mkdocstrings) into site/; any warning fails the build."""
    _install(session, "-e", ".[docs]")
    session.run("mkdocs", "build", "--strict", *session.posargs, env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session
def bench(session: nox.Session) -> None:
    """Performance benchmarks, side by side with inspect_ai: print figures, assert nothing about time."""
    _install(session, "-e", ".", "inspect_ai==0.3.285")  # the peer, here only: never a skillgym dependency
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session
def snapshots(session: nox.Session) -> None:
    """Accept (-- --update) or check (-- --check) token snapshots from the latest run; no agent is called.

    With no run yet, the suite runs first with the default provider (offline replay).
    """
    _install(session, "-e", ".")
    session.run("skillgym", "snapshots", "--run-if-missing", *session.posargs)


def _run(session: nox.Session, *selection: str) -> None:
    _install(session, "-e", ".")
    # The session's success follows the run's exit code. 0 passes; 2 (bad input), 3 (inconclusive: errors
    # that are not the agent's left too little data) and 130 (interrupted) fail. 1 fails when the run judges
    # gates (one failed); without gates it means some trials failed, a finished measurement, and passes.
    codes = [0] if _judges_gates(session, selection) else [0, 1]
    session.run("skillgym", "run", *selection, *session.posargs, success_codes=codes)


def _judges_gates(session: nox.Session, selection: tuple[str, ...]) -> bool:
    """Whether the run has gates (the suite's gate(...), --gate, --fail-on-regression), as its own dry run
    says; a dry run that fails (bad input, or --resume, which takes no --dry-run) counts as gated: strict."""
    try:
        plan = session.run(
            "skillgym",
            "run",
            *selection,
            *session.posargs,
            "--dry-run",
            "--json",
            silent=True,
            stderr=subprocess.DEVNULL,
            log=False,
        )
        return bool(json.loads(plan or "{}").get("gates", True))
    except (nox.command.CommandFailed, ValueError):
        return True


@nox.session
def evals(session: nox.Session) -> None:
    """Every lane across every condition, in one run."""
    _run(session)


def _lane_session(lane: str) -> None:
    def run_lane(session: nox.Session) -> None:
        _run(session, "--lane", lane)

    run_lane.__doc__ = f"The {lane} lane across every condition, in one run."
    nox.session(name=lane)(run_lane)


def _pair_session(lane: str, condition: str) -> None:
    def run_pair(session: nox.Session) -> None:
        _run(session, "--lane", lane, "--condition", condition)

    # The pairs are the example suite's conditions; for another suite's, name them after the lane session:
    # `nox -s execution -- --suite DIR --condition NAME`.
    run_pair.__doc__ = f"The {lane} lane under the example suite's {condition} condition."
    nox.session(name=f"{lane}-{condition}")(run_pair)


for _lane in LANES:
    _lane_session(_lane)
    for _condition in CONDITIONS:
        _pair_session(_lane, _condition)
