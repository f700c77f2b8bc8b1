"""Tests for skillgym.plugins: the registries, their decorators, and plug-ins from an installed package."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

from skillgym.errors import UsageError
from skillgym.plugins import (
    PROVIDERS,
    REPORTERS,
    STREAM_FORMATS,
    VERIFIER_KINDS,
    PluginError,
    Registry,
    load_plugins,
    stream_format,
)
from skillgym.trace import Trace
from tests.conftest import REPO, run_dirs, write_suite


def test_every_module_of_the_plug_in_packages_registers_itself() -> None:
    # No list to edit: a new provider or reporter is one new file in its package.
    assert {"claude", "codex", "command", "replay", "stub"} <= set(PROVIDERS.names())
    assert REPORTERS.names()[:3] == ("console", "jsonl", "junit")
    assert {"skillgym-trace", "claude-stream-json", "codex-json"} <= set(STREAM_FORMATS.names())
    assert {"file-exists", "file-contains", "command", "custom"} <= set(VERIFIER_KINDS.names())


def test_an_unknown_name_is_a_usage_error_naming_the_flag_and_the_valid_names() -> None:
    with pytest.raises(UsageError) as caught:
        REPORTERS.get("html")
    assert str(caught.value) == (
        "unknown reporter 'html' given to --reporter; valid reporters: console, jsonl, junit"
    )


def test_a_name_taken_twice_names_both_places() -> None:
    registry: Registry[int] = Registry("widget")
    registry.add("a", 1, origin="pkg.one")
    registry.add("a", 1, origin="pkg.one")  # the same object again (a module imported twice) is fine
    with pytest.raises(PluginError, match=r"widget 'a' is registered twice: by pkg.one and by pkg.two"):
        registry.add("a", 2, origin="pkg.two")
    with pytest.raises(PluginError, match="non-empty string name"):
        registry.add("", 3, origin="pkg.three")


def test_a_stream_format_registered_by_decorator_is_what_replay_looks_up() -> None:
    @stream_format("test-format")
    def parse(lines: object) -> Trace:
        return Trace(final_text="parsed")

    try:
        assert STREAM_FORMATS.get("test-format") is parse
        assert "test-format" in STREAM_FORMATS.names()
    finally:
        STREAM_FORMATS.remove("test-format")
    assert "test-format" not in STREAM_FORMATS


def test_loading_twice_registers_nothing_twice() -> None:
    before = PROVIDERS.names()
    load_plugins()
    assert PROVIDERS.names() == before


PLUGIN = '''
"""A third-party skillgym plug-in: a provider and a reporter that wants the finished report."""

import json

from skillgym.plugins import provider, reporter
from skillgym.providers.base import Detection, ProviderResult
from skillgym.trace import Trace


@provider
class EchoAgent:
    name = "echo-agent"
    skill_dirs = ()
    runs_agent = False
    passthrough_env = ()
    home_env = {}
    stream_format = None
    network = "none"
    sandbox_readable = ()

    @classmethod
    def from_settings(cls, settings):
        return cls()

    async def detect(self):
        return Detection(provider=self.name, available=True, version="1.0")

    async def invoke(self, request):
        return ProviderResult(ok=True, trace=Trace(final_text=f"I would wait for {request.id.case_id}"))


@reporter
class Tally:
    name = "tally"
    help = "trial count and report totals in tally.json"

    def __init__(self, run_dir):
        self.run_dir = run_dir
        self.trials = 0

    @classmethod
    def from_context(cls, context):
        return cls(context.run_dir)

    async def on_event(self, event):
        if type(event).__name__ == "TrialFinish":
            self.trials += 1

    async def finish(self):
        return None

    async def on_report(self, report):
        (self.run_dir / "tally.json").write_text(
            json.dumps({"trials": self.trials, "report_total": report.counts.total})
        )
'''

SUITE = {
    "cases.py": """
        from skillgym import prompt_case

        for name in ("first", "second"):
            with prompt_case(name) as c:
                c.category("trigger")
                c.prompt("what would you do?")
                c.expect_skill(None)
                with c.step("waits") as s:
                    s.must_mention("wait")
    """,
}


def _wheel(folder: Path) -> Path:
    """A wheel of the plug-in package, built by hand: pip installs it with no build backend or index."""
    dist = "skillgym_echo-0.1.dist-info"
    files = {
        "skillgym_echo/__init__.py": textwrap.dedent(PLUGIN).lstrip(),
        f"{dist}/METADATA": "Metadata-Version: 2.1\nName: skillgym-echo\nVersion: 0.1\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist}/entry_points.txt": "[skillgym]\necho = skillgym_echo\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join([*record, f"{dist}/RECORD,,"]) + "\n"
    path = folder / "skillgym_echo-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
    return path


def _venv_with_plugin(tmp_path: Path) -> Path:
    """A new venv that sees skillgym and its dependencies, with the plug-in package installed by pip."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], str(REPO)}
    (Path(site) / "skillgym-under-test.pth").write_text("\n".join(sorted(ours)) + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
         str(_wheel(tmp_path))],
        check=True,
    )  # fmt: skip
    return python


def test_a_provider_and_a_reporter_from_an_installed_package_run_through_the_cli(tmp_path: Path) -> None:
    python = _venv_with_plugin(tmp_path)
    suite = write_suite(tmp_path / "suite", SUITE)

    def skillgym(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), "-m", "skillgym", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "COLUMNS": "300"},  # help unwrapped
        )

    helped = skillgym("run", "--help")
    providers = ", ".join((*PROVIDERS.names(), "echo-agent"))  # skillgym's own first, sorted
    assert providers in " ".join(helped.stdout.split())
    assert "console, jsonl, junit, tally" in " ".join(helped.stdout.split())
    done = skillgym("run", "--suite", str(suite), "--provider", "echo-agent", "--reporter", "tally")
    assert done.returncode == 0, done.stderr
    (run_dir,) = run_dirs(tmp_path / "runs")
    assert json.loads((run_dir / "tally.json").read_text()) == {"trials": 2, "report_total": 2}
    report = json.loads((run_dir / "report.json").read_text())
    assert report["providers"] == ["echo-agent"]
    wrong = skillgym("run", "--suite", str(suite), "--provider", "echo")
    assert wrong.returncode == 2
    assert f"valid providers: {providers}" in " ".join(wrong.stderr.split())


def test_a_provider_written_for_an_older_contract_is_one_clear_error(tmp_path: Path) -> None:
    from skillgym.plugins import PluginError, provider
    from skillgym.providers import make_provider

    @provider
    class Old:
        name = "old-agent"
        skill_dirs = ()
        runs_agent = True
        passthrough_env = ()
        home_env: dict[str, str] = {}
        stream_format = None

        @classmethod
        def from_settings(cls, settings: object) -> Old:
            return cls()

    try:
        with pytest.raises(PluginError, match=r"'old-agent' .* lacks network, sandbox_readable"):
            make_provider("old-agent", suite_root=tmp_path)
    finally:
        PROVIDERS.remove("old-agent")
