"""Tests for skillgym.grading.verifiers against real files, a real fixture, real processes and real tmux."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from skillgym.grading import GradeContext
from skillgym.grading.verifiers import VerifierError, run_verifier, run_verifiers
from skillgym.model import (
    ArtifactExists,
    CommandCheck,
    CustomVerifier,
    FileContains,
    FileExists,
    FixtureLogContains,
    NoLiveSessions,
    Pattern,
)

from .conftest import tmux

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "evals" / "fixtures" / "hello-prompt.py"
MakeCtx = Callable[..., GradeContext]


def run_fixture(log_dir: Path, stdin: str) -> None:
    """Run the real hello-prompt fixture so it writes its ground-truth log."""
    env = {**os.environ, "SKILLGYM_FIXTURE_LOG_DIR": str(log_dir)}
    subprocess.run(
        [sys.executable, str(FIXTURE)],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )


# -- files -----------------------------------------------------------------------------------------


async def test_file_exists(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    (Path(ctx.workspace) / "snapshot.txt").write_text("x", encoding="utf-8")
    ok = await run_verifier(FileExists(id="f", path="snapshot.txt"), ctx)
    missing = await run_verifier(FileExists(id="g", path="nope.txt"), ctx)
    assert (ok.passed, ok.kind, ok.message) == (True, "verifier", "snapshot.txt exists")
    assert (missing.passed, missing.message) == (False, "nope.txt does not exist in the workspace")


async def test_file_contains(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    (Path(ctx.workspace) / "snapshot.txt").write_text("READY> \nECHO: hello world\n", encoding="utf-8")
    ok = await run_verifier(
        FileContains(id="c", path="snapshot.txt", pattern=Pattern(regex=r"ECHO:\s*hello world")), ctx
    )
    bad = await run_verifier(
        FileContains(id="d", path="snapshot.txt", pattern=Pattern(regex=r"ECHO:\s*bye")), ctx
    )
    assert ok.passed
    assert ok.message == r"snapshot.txt contains /ECHO:\s*hello world/ (line 2)"
    assert not bad.passed
    assert bad.message == r"snapshot.txt does not contain /ECHO:\s*bye/"


async def test_paths_escaping_the_workspace_fail(make_ctx: MakeCtx, tmp_path: Path) -> None:
    ctx = make_ctx()
    (tmp_path / "outside.txt").write_text("ECHO: hello world", encoding="utf-8")
    os.symlink(tmp_path / "outside.txt", Path(ctx.workspace) / "link.txt")
    climb = await run_verifier(FileExists(id="a", path="../outside.txt"), ctx)
    link = await run_verifier(FileContains(id="b", path="link.txt", pattern=Pattern(regex="ECHO")), ctx)
    assert not climb.passed
    assert "escapes the workspace through '..'" in climb.message
    assert not link.passed
    assert "escapes the workspace through a symlink" in link.message


async def test_a_symlink_loop_the_agent_left_is_a_failed_check(make_ctx: MakeCtx) -> None:
    # The agent's leftovers are its doing: a failed check, never a grader-error.
    ctx = make_ctx()
    workspace = Path(ctx.workspace)
    os.symlink("b.txt", workspace / "a.txt")
    os.symlink("a.txt", workspace / "b.txt")
    (workspace / "notes.md").write_text("done", encoding="utf-8")
    outcomes = await run_verifiers(
        (
            FileExists(id="exists", path="a.txt"),
            FileContains(id="contains", path="a.txt", pattern=Pattern(regex="x")),
            FileExists(id="through", path="a.txt/inner.txt"),
            ArtifactExists(id="artifact", artifact="notes"),
        ),
        ctx,
    )
    # The same verdicts on every Python (before 3.13, resolving a loop raises RuntimeError): the loop is
    # a missing file, and the artifact search skips it and finds the notes.
    assert [o.passed for o in outcomes] == [False, False, False, True]
    for outcome in outcomes[:3]:
        assert "a.txt" in outcome.message, outcome.message


async def test_a_directory_is_not_a_file(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    (Path(ctx.workspace) / "dir").mkdir()
    outcome = await run_verifier(FileExists(id="a", path="dir"), ctx)
    assert (outcome.passed, outcome.message) == (False, "dir is not a regular file")


# -- fixture log -----------------------------------------------------------------------------------


async def test_fixture_log_from_the_real_fixture(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    run_fixture(Path(ctx.fixture_log_dir), "hello world\nexit\n")
    received = FixtureLogContains(
        id="in", fixture="hello-prompt", event="input", pattern=Pattern(regex="hello world")
    )
    echoed = FixtureLogContains(
        id="out", fixture="hello-prompt", event="output", pattern=Pattern(regex=r"ECHO: hello")
    )
    twice = FixtureLogContains(id="two", fixture="hello-prompt", event="input", min_count=3)
    wrong = FixtureLogContains(
        id="no", fixture="hello-prompt", event="input", pattern=Pattern(regex="goodbye")
    )
    outcomes = await run_verifiers((received, echoed, twice, wrong), ctx)
    assert [o.passed for o in outcomes] == [True, True, False, False]
    assert outcomes[0].message == "the hello-prompt log has 1 'input' event(s) matching /hello world/"
    assert outcomes[2].message.startswith("the hello-prompt log has 2 'input' event(s), need 3")
    assert "its 'input' events: 'hello world', 'exit'" in outcomes[3].message


async def test_fixture_that_never_ran(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    outcome = await run_verifier(FixtureLogContains(id="x", fixture="hello-prompt", event="start"), ctx)
    assert not outcome.passed
    assert outcome.message == f"the fixture never ran (no log at {ctx.fixture_log_dir}/hello-prompt.jsonl)"


async def test_fixture_log_skips_a_torn_line(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    log = Path(ctx.fixture_log_dir) / "app.jsonl"
    log.write_text('{"t": 1, "event": "input", "text": "hi"}\n{"t": 2, "event": "inp', encoding="utf-8")
    outcome = await run_verifier(FixtureLogContains(id="x", fixture="app", event="input"), ctx)
    assert outcome.passed
    assert "1 unreadable line(s) skipped" in outcome.message


async def test_fixture_name_cannot_climb(make_ctx: MakeCtx) -> None:
    outcome = await run_verifier(FixtureLogContains(id="x", fixture="../app", event="input"), make_ctx())
    assert not outcome.passed
    assert "not a plain name" in outcome.message


# -- commands --------------------------------------------------------------------------------------


async def test_command_exit_code_and_stdout(make_ctx: MakeCtx) -> None:
    ctx = make_ctx(env={**make_ctx().env, "GREETING": "hi there"})
    (Path(ctx.workspace) / "marker").write_text("", encoding="utf-8")
    script = "import os, sys; print(os.environ['GREETING'], os.path.exists('marker')); sys.exit(3)"
    ok = CommandCheck(
        id="ok",
        argv=(sys.executable, "-c", script),
        exit_code=3,
        stdout_pattern=Pattern(regex="hi there True"),
    )
    code = CommandCheck(id="code", argv=(sys.executable, "-c", script))
    text = CommandCheck(
        id="text", argv=(sys.executable, "-c", script), exit_code=3, stdout_pattern=Pattern(regex="bye")
    )
    outcomes = await run_verifiers((ok, code, text), ctx)
    assert [o.passed for o in outcomes] == [True, False, False]
    assert "exited 3, expected 0" in outcomes[1].message
    assert "printed nothing matching /bye/" in outcomes[2].message


async def test_command_timeout_and_missing_program(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    slow = CommandCheck(id="slow", argv=(sys.executable, "-c", "import time; time.sleep(30)"), timeout_s=0.5)
    missing = CommandCheck(id="missing", argv=("no-such-program-skillgym",))
    outcomes = await run_verifiers((slow, missing), ctx)
    assert not outcomes[0].passed
    assert "did not finish within 0.5 s" in outcomes[0].message
    assert not outcomes[1].passed
    assert "program was not found" in outcomes[1].message


# -- tmux ------------------------------------------------------------------------------------------


async def test_no_sockets_means_no_live_sessions(make_ctx: MakeCtx) -> None:
    outcome = await run_verifier(NoLiveSessions(id="clean"), make_ctx())
    assert outcome.passed
    assert "no tmux server socket" in outcome.message


@pytest.mark.integration
async def test_live_tmux_session_fails(make_ctx: MakeCtx, tmux_tmpdir: Path) -> None:
    started = tmux(tmux_tmpdir, "new-session", "-d", "-s", "leftover", "sleep 300")
    assert started.returncode == 0, started.stderr
    outcome = await run_verifier(NoLiveSessions(id="clean"), make_ctx(tmux_tmpdir=str(tmux_tmpdir)))
    assert not outcome.passed
    assert "'leftover'" in outcome.message
    assert "grading-test" in outcome.message


@pytest.mark.integration
async def test_killed_tmux_server_passes(make_ctx: MakeCtx, tmux_tmpdir: Path) -> None:
    assert tmux(tmux_tmpdir, "new-session", "-d", "-s", "done", "sleep 300").returncode == 0
    assert tmux(tmux_tmpdir, "kill-session", "-t", "done").returncode == 0
    deadline = time.monotonic() + 10
    while tmux(tmux_tmpdir, "has-session").returncode == 0 and time.monotonic() < deadline:
        time.sleep(0.05)  # the server exits on its own once its last session is gone
    outcome = await run_verifier(NoLiveSessions(id="clean"), make_ctx(tmux_tmpdir=str(tmux_tmpdir)))
    assert outcome.passed, outcome.message


@pytest.mark.integration
async def test_stale_socket_passes(make_ctx: MakeCtx, tmux_tmpdir: Path) -> None:
    folder = tmux_tmpdir / f"tmux-{os.getuid()}"
    folder.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(folder / "default"))
    stale.close()  # a socket file with nobody listening: a server that died without cleaning up
    outcome = await run_verifier(NoLiveSessions(id="clean"), make_ctx(tmux_tmpdir=str(tmux_tmpdir)))
    assert outcome.passed, outcome.message
    assert "1 socket(s)" in outcome.message


# -- artifacts -------------------------------------------------------------------------------------


async def test_artifact_exists(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    workspace = Path(ctx.workspace)
    (workspace / "shots").mkdir()
    (workspace / "shots" / "a.svg").write_text("<svg/>", encoding="utf-8")
    (Path(ctx.fixture_log_dir) / "x.jsonl").write_text("{}", encoding="utf-8")
    ok = ArtifactExists(id="shot", artifact="screenshot", path_patterns=("shots/*.svg",))
    two = ArtifactExists(id="two", artifact="screenshot", min_count=2)
    logs = ArtifactExists(id="logs", artifact="log")
    outcomes = await run_verifiers((ok, two, logs), ctx)
    assert [o.passed for o in outcomes] == [True, False, False]
    assert (
        outcomes[1].message == "found 1 screenshot (png, svg, jpg, jpeg, html) file(s), need 2: shots/a.svg"
    )


async def test_artifacts_from_before_the_agent_do_not_count(make_ctx: MakeCtx) -> None:
    ctx = make_ctx(agent_started_at=time.time())
    template = Path(ctx.workspace) / "NOTES.md"
    template.write_text("template", encoding="utf-8")
    os.utime(template, (time.time() - 600, time.time() - 600))
    outcome = await run_verifier(ArtifactExists(id="notes", artifact="notes"), ctx)
    assert not outcome.passed


# -- custom ----------------------------------------------------------------------------------------


@pytest.fixture
def custom_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"grading_custom_{uuid.uuid4().hex[:8]}"
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / f"{name}.py").write_text(
        textwrap.dedent(
            """
            from pathlib import Path
            from skillgym.results import CheckOutcome

            def sync_bool(ctx, config):
                return Path(ctx.workspace, config["file"]).exists()

            async def async_tuple(ctx, config):
                return (False, "the screen was not clean")

            def outcome(ctx, config):
                return CheckOutcome(id="x", kind="verifier", required=False, passed=True, message="fine")

            def wrong_type(ctx, config):
                return 42

            def boom(ctx, config):
                raise RuntimeError("kaput")

            def mutate(ctx, config):
                config["x"] = 1
                return True

            def leave(ctx, config):
                raise SystemExit(3)

            def typed(ctx, config):
                paths = (ctx.workspace, ctx.trial_dir, ctx.suite_root, ctx.fixture_log_dir, ctx.tmux_tmpdir)
                kinds = sorted({type(p).__name__ for p in paths})
                return (ctx.workspace / "there.txt").exists(), f"{kinds} {sorted(ctx.env)} {ctx.provider_ok}"

            def stuck(ctx, config):
                import time
                time.sleep(10)
                return True
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    return name


async def test_a_custom_verifier_gets_paths_as_path_objects(make_ctx: MakeCtx, custom_module: str) -> None:
    ctx = make_ctx()
    (Path(ctx.workspace) / "there.txt").write_text("x", encoding="utf-8")
    outcome = await run_verifier(CustomVerifier(id="t", target=f"{custom_module}:typed"), ctx)
    assert outcome.passed, outcome.message
    assert outcome.message.startswith("['PosixPath'] ")


async def test_custom_verifiers(make_ctx: MakeCtx, custom_module: str) -> None:
    ctx = make_ctx()
    (Path(ctx.workspace) / "there.txt").write_text("", encoding="utf-8")

    def custom(check_id: str, function: str, **config: object) -> CustomVerifier:
        return CustomVerifier(id=check_id, target=f"{custom_module}:{function}", config=dict(config))

    verifiers = (
        custom("a", "sync_bool", file="there.txt"),
        custom("b", "sync_bool", file="gone.txt"),
        custom("c", "async_tuple"),
        custom("d", "outcome"),
    )
    outcomes = await run_verifiers(verifiers, ctx)
    assert [(o.id, o.passed, o.required) for o in outcomes] == [
        ("a", True, True),
        ("b", False, True),
        ("c", False, True),
        ("d", True, True),  # the verifier's own id and required flag win
    ]
    assert outcomes[2].message == "the screen was not clean"


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (
            "wrong_type",
            "verifier 'v': custom verifier {module}:wrong_type returned int '42'; return a bool, "
            "a (bool, message) tuple or a CheckOutcome",
        ),
        ("boom", "verifier 'v' crashed: RuntimeError: kaput"),
        (
            "absent",
            "verifier 'v': module '{module}' has no function 'absent' (custom verifier '{module}:absent')",
        ),
        ("leave", "verifier 'v': custom verifier '{module}:leave' called sys.exit(3)"),
    ],
)
async def test_a_verifier_that_gives_no_verdict_is_an_error_naming_it_not_a_failed_check(
    make_ctx: MakeCtx, custom_module: str, function: str, message: str
) -> None:
    # A broken check is the suite's bug: charging it to the agent would skew every pass rate.
    with pytest.raises(VerifierError) as caught:
        await run_verifier(CustomVerifier(id="v", target=f"{custom_module}:{function}"), make_ctx())
    assert str(caught.value) == message.format(module=custom_module)


async def test_a_blocked_synchronous_verifier_is_abandoned_when_its_trial_is_cancelled(
    make_ctx: MakeCtx, custom_module: str
) -> None:
    started = time.monotonic()
    with anyio.move_on_after(0.3):
        await run_verifier(CustomVerifier(id="v", target=f"{custom_module}:stuck"), make_ctx())
    assert time.monotonic() - started < 5  # not the 30 s it sleeps
    stuck = [t for t in threading.enumerate() if t.name == "skillgym custom verifier"]
    assert stuck and all(t.daemon for t in stuck)  # and it cannot keep the process from exiting


async def test_custom_verifier_cannot_change_the_case(make_ctx: MakeCtx, custom_module: str) -> None:
    verifier = CustomVerifier(id="m", target=f"{custom_module}:mutate", config={"y": 2})
    assert (await run_verifier(verifier, make_ctx())).passed
    assert verifier.config == {"y": 2}


async def test_custom_import_failure_is_a_clear_error(make_ctx: MakeCtx) -> None:
    with pytest.raises(VerifierError) as caught:
        await run_verifier(CustomVerifier(id="x", target="no_such_module_sg:check"), make_ctx())
    assert str(caught.value).startswith("verifier 'x': cannot import module 'no_such_module_sg' of custom")
    assert "ModuleNotFoundError" in str(caught.value)


async def test_a_pattern_that_does_not_compile_is_an_error_naming_the_verifier(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    (Path(ctx.workspace) / "a.txt").write_text("x", encoding="utf-8")
    with pytest.raises(VerifierError, match=r"^verifier 'bad' crashed: PatternError: pattern /\(/ does not"):
        await run_verifier(FileContains(id="bad", path="a.txt", pattern=Pattern(regex="(")), ctx)


async def test_custom_verifier_modules_are_imported_from_the_suite(make_ctx: MakeCtx, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    name = f"_suite_checks_{uuid.uuid4().hex[:8]}"
    (suite / f"{name}.py").write_text("def ok(ctx, config):\n    return (True, 'from the suite')\n")
    verifier = CustomVerifier(id="s", target=f"{name}:ok")
    outcome = await run_verifier(verifier, make_ctx(suite_root=str(suite)))
    assert outcome.passed, outcome.message
    assert str(suite) not in sys.path  # only while importing
    with pytest.raises(VerifierError, match="cannot import module"):
        await run_verifier(
            CustomVerifier(id="m", target=f"{name}_absent:ok"), make_ctx(suite_root=str(suite))
        )


async def test_a_verifier_kind_is_judged_by_the_function_registered_for_its_tag(make_ctx: MakeCtx) -> None:
    from skillgym.model import Data
    from skillgym.plugins import VERIFIER_KINDS, verifier_kind

    class LineCount(Data, frozen=True, kw_only=True, tag_field="kind", tag="line-count"):
        id: str
        required: bool = True
        path: str
        lines: int

    @verifier_kind("line-count")
    async def judge(v: LineCount, ctx: GradeContext) -> tuple[bool, str]:
        found = len((Path(ctx.workspace) / v.path).read_text(encoding="utf-8").splitlines())
        return found == v.lines, f"{v.path} has {found} lines"

    ctx = make_ctx()
    (Path(ctx.workspace) / "notes.txt").write_text("a\nb\n", encoding="utf-8")
    try:
        ok = await run_verifier(LineCount(id="n", path="notes.txt", lines=2), ctx)  # type: ignore[arg-type]
        assert (ok.passed, ok.message) == (True, "notes.txt has 2 lines")
    finally:
        VERIFIER_KINDS.remove("line-count")
    with pytest.raises(
        VerifierError, match="verifier 'n' crashed: UsageError: unknown verifier kind 'line-count'"
    ):
        await run_verifier(LineCount(id="n", path="notes.txt", lines=2), ctx)  # type: ignore[arg-type]
