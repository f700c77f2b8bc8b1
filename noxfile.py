"""Task runner: lint, typecheck, tests, benchmarks, and one session per lane and lane-condition pair."""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]  # a bare `nox` spends no tokens
nox.options.reuse_existing_virtualenvs = True

LANES = ("prompt", "execution", "dogfood")
CONDITIONS = ("none", "self-load", "preloaded", "stale")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the library."""
    session.install("-e", ".[dev]")
    session.run("mypy")


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite without the integration tests; extra arguments go to pytest."""
    session.install("-e", ".[test]")
    session.run("pytest", "-m", "not integration", *session.posargs)


@nox.session
def integration(session: nox.Session) -> None:
    """Tests against real programs: pinned Claude Code, Codex and Gemini CLIs (installed from npm), tmux."""
    session.install("-e", ".[test]")
    session.run("pytest", "-m", "integration", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """The API reference (mkdocs-material + mkdocstrings) into site/; any warning fails the build."""
    session.install("-e", ".[docs]")
    session.run("mkdocs", "build", "--strict", *session.posargs, env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session
def bench(session: nox.Session) -> None:
    """Performance benchmarks, side by side with inspect_ai: print figures, assert nothing about time."""
    session.install("-e", ".")
    session.install("inspect_ai==0.3.285")  # the peer, here only: never a skillgym dependency
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session
def snapshots(session: nox.Session) -> None:
    """Accept (-- --update) or check (-- --check) token snapshots from the latest run; no agent is called.

    With no run yet, the suite runs first with the default provider (offline replay).
    """
    session.install("-e", ".")
    session.run("skillgym", "snapshots", "--run-if-missing", *session.posargs)


def _run(session: nox.Session, *selection: str) -> None:
    session.install("-e", ".")
    # Exit 1 means the run finished and some trials failed: that is a measurement, not a broken session.
    # Bad input (2) and interruptions (130) still fail the session.
    session.run("skillgym", "run", *selection, *session.posargs, success_codes=[0, 1])


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

    run_pair.__doc__ = f"The {lane} lane under the {condition} condition."
    nox.session(name=f"{lane}-{condition}")(run_pair)


for _lane in LANES:
    _lane_session(_lane)
    for _condition in CONDITIONS:
        _pair_session(_lane, _condition)
