"""The pinned agent CLIs the integration tests run, installed from npm into a cache directory once.

The cache is ``$SKILLGYM_AGENT_CLI_CACHE`` or ``~/.cache/skillgym/agent-clis``; each package version
gets its own prefix there, so bumping a pin installs next to the old one and never mixes the two.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Final

import msgspec


class AgentCli(msgspec.Struct, frozen=True, kw_only=True):
    """An npm package that provides an agent CLI, at the version the tests are pinned to."""

    package: str
    version: str
    command: str


CLAUDE: Final = AgentCli(package="@anthropic-ai/claude-code", version="2.1.332", command="claude")
CODEX: Final = AgentCli(package="@openai/codex", version="0.171.0", command="codex")
GEMINI: Final = AgentCli(package="@google/gemini-cli", version="0.61.0", command="gemini")
CACHE_VAR: Final = "SKILLGYM_AGENT_CLI_CACHE"
_INSTALL_TIMEOUT_S: Final = 600


class InstallError(RuntimeError):
    """npm could not install a pinned CLI, or what it installed does not report the pinned version."""


def missing_node() -> str | None:
    """Why the CLIs cannot be installed here (node or npm missing), or None when they can."""
    absent = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if not absent:
        return None
    return (
        f"{' and '.join(absent)} not found on PATH: the integration tests install the pinned agent CLIs "
        f"({CLAUDE.package}@{CLAUDE.version}, {CODEX.package}@{CODEX.version}, "
        f"{GEMINI.package}@{GEMINI.version}) with npm; install Node.js"
    )


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_VAR)
    return Path(configured) if configured else Path.home() / ".cache" / "skillgym" / "agent-clis"


def install(cli: AgentCli, say: Callable[[str], None] = lambda _line: None) -> Path:
    """The executable of ``cli`` at its pinned version, installing it with npm when not cached yet.

    ``say`` hears, once per install, what is installed where, and then how big it came out: the three
    CLIs take several hundred MB of the user's disk, which nobody should find by surprise.
    """
    prefix = cache_dir() / f"{cli.package.replace('/', '__')}@{cli.version}"
    executable = prefix / "node_modules" / ".bin" / cli.command
    if _reports(executable, cli.version):
        return executable
    say(f"installing {cli.package}@{cli.version} from npm into {prefix} (once; ${CACHE_VAR} moves the cache)")
    prefix.mkdir(parents=True, exist_ok=True)
    argv = [
        "npm",
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--loglevel=error",
        f"{cli.package}@{cli.version}",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise InstallError(f"`{' '.join(argv)}` failed ({done.returncode}): {done.stderr[-2000:]}")
    if not _reports(executable, cli.version):
        raise InstallError(f"{executable} does not report version {cli.version} after `{' '.join(argv)}`")
    say(f"installed {cli.package}@{cli.version}: {_size_mb(prefix):.0f} MB in {prefix}")
    return executable


def _size_mb(folder: Path) -> float:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total / 1e6


def _reports(executable: Path, version: str) -> bool:
    if not executable.exists():
        return False
    # A throwaway home: asking the version must not touch the developer's own agent settings.
    with tempfile.TemporaryDirectory(prefix="skillgym-cli-") as home:
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": home,
            "CODEX_HOME": home,
            "GEMINI_CLI_HOME": home,
        }
        try:
            done = subprocess.run(
                [str(executable), "--version"],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except OSError:
            return False
    return done.returncode == 0 and version in done.stdout
