"""``--sandbox bwrap``: each trial in a bubblewrap sandbox that lives as long as the trial.

The first command of a trial starts a keeper: ``bwrap`` with the trial's mounts and new PID, IPC and
(``--network none``) network namespaces, running a process that waits. Every command of the trial then
enters the keeper's namespaces with ``nsenter``, so all of them share one view: the host read-only, the
user's home empty, the trial folder writable, ``/tmp`` the trial's own, and one process namespace. A
daemon the agent starts (a tmux server) outlives the agent, so the graders can still ask it what it
shows, and ends with the trial: killing the keeper ends the namespace's init, and the kernel ends
everything left in the namespace, whether it double-forked, called setsid or cleared its environment.

Run as an ordinary user, bwrap creates the namespaces in a new user namespace and then, for ``/dev/pts``,
a second one nested in it that maps the user back to their own uid. Entering takes two hops: into the
outer user namespace (which owns the others) to join them, then into the inner one to be the user again.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import ClassVar, Final

import anyio
import anyio.to_thread

from ..plugins import sandbox_backend
from ..process import command_line, left_running, run_process
from .base import SandboxSpec, SandboxUnavailable, TrialSandbox

# ioctl(2) on a namespace file: a file of the user namespace that owns it (linux/nsfs.h).
_NS_GET_PARENT: Final = 0xB702
_READY: Final = b"ready\n"
_CHDIR_AND_RUN: Final = 'cd -- "$0" || exit 127; exec "$@"'
_STOP_TIMEOUT_S: Final = 5.0
_PROBE_TIMEOUT_S: Final = 20.0
# Daemons whose sockets would hand a trial the machine (a root container engine) or the desktop session:
# each one present is covered with /dev/null inside, since a read-only mount still lets a client connect.
_DAEMON_SOCKETS: Final = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman/podman.sock",
    "/run/containerd/containerd.sock",
    "/run/dbus/system_bus_socket",
    "/var/run/dbus/system_bus_socket",
)

_INSTALL: Final = (
    "install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`, Fedora: `sudo dnf install "
    "bubblewrap`, Arch: `sudo pacman -S bubblewrap`), or pass --sandbox none to run trials without a "
    "sandbox (agents can then write anywhere you can)"
)


@sandbox_backend
class Bubblewrap:
    """The bubblewrap backend: one keeper per trial, every command entered into it with ``nsenter``."""

    name: ClassVar[str] = "bwrap"
    help: ClassVar[str] = (
        "bubblewrap (Linux): host read-only, home hidden, only the trial folder writable, private /tmp "
        "and process namespace"
    )
    _checked: ClassVar[dict[tuple[str, str], str | None]] = {}

    def __init__(self) -> None:
        self.bwrap = shutil.which("bwrap") or ""
        self.nsenter = shutil.which("nsenter") or ""

    async def problem(self) -> str | None:
        if not self.bwrap:
            return f"the bwrap sandbox needs bubblewrap, which is not on PATH: {_INSTALL}"
        if not self.nsenter:
            return (
                "the bwrap sandbox needs nsenter (from util-linux), which is not on PATH: install "
                "util-linux, or pass --sandbox none to run trials without a sandbox"
            )
        key = (self.bwrap, self.nsenter)
        if key not in self._checked:
            self._checked[key] = await self._probe()
        return self._checked[key]

    def open(self, spec: SandboxSpec) -> TrialSandbox:
        return BwrapSandbox(spec, bwrap=self.bwrap, nsenter=self.nsenter)

    async def _probe(self) -> str | None:
        """Start a real sandbox and run ``true`` in it: user namespaces may be switched off."""
        with tempfile.TemporaryDirectory(prefix="skillgym-sandbox-probe-") as folder:
            spec = SandboxSpec(trial_dir=folder, tmp=os.path.join(folder, "tmp"), network="none")
            box = BwrapSandbox(spec, bwrap=self.bwrap, nsenter=self.nsenter)
            try:
                argv = await box.command(["true"], cwd=folder)
                result = await run_process(
                    argv, cwd=Path(folder), env={"PATH": os.defpath}, timeout_s=_PROBE_TIMEOUT_S
                )
            except SandboxUnavailable as exc:
                return str(exc)
            finally:
                await box.close()
        if result.exit_code == 0:
            return None
        said = (result.stderr or result.stdout).decode("utf-8", errors="replace").strip()[-400:]
        return (
            f"bubblewrap is installed but a command could not run in its sandbox ({said or 'no message'}); "
            "if user namespaces are switched off, switch them on (`sysctl "
            "kernel.unprivileged_userns_clone=1`; on Ubuntu 24.04 and later `sysctl "
            "kernel.apparmor_restrict_unprivileged_userns=0` or an AppArmor profile for bwrap), or pass "
            "--sandbox none to run trials without a sandbox"
        )


class BwrapSandbox(TrialSandbox):
    """One trial's bubblewrap sandbox; its keeper starts with the first command."""

    def __init__(self, spec: SandboxSpec, *, bwrap: str, nsenter: str) -> None:
        self.spec = spec
        self._bwrap = bwrap
        self._nsenter = nsenter
        self._keeper: _Keeper | None = None
        self._closed = False
        self._starting = anyio.Lock()

    async def command(self, argv: Sequence[str], *, cwd: str) -> list[str]:
        keeper = self._keeper
        if keeper is None:
            async with self._starting:
                if self._closed:
                    raise SandboxUnavailable("the trial's sandbox was already closed")
                if self._keeper is None:
                    # Started from this thread, the event loop's, which lives as long as the run: with
                    # --die-with-parent the kernel ends the sandbox when the thread that started it ends,
                    # and worker threads end whenever they idle.
                    popen, info_fd = _spawn(self.spec, self._bwrap)
                    self._keeper = await anyio.to_thread.run_sync(_Keeper.ready, popen, info_fd, self.spec)
                keeper = self._keeper
        assert keeper is not None
        return [*keeper.enter(self._nsenter, cwd), *argv]

    async def close(self) -> tuple[str, ...]:
        self._closed = True
        keeper, self._keeper = self._keeper, None
        if keeper is None:
            return ()
        with anyio.CancelScope(shield=True):
            stopped = await anyio.to_thread.run_sync(keeper.stop)
        return stopped


def bwrap_args(spec: SandboxSpec) -> list[str]:
    """bubblewrap's options for ``spec``, in mount order (later mounts cover earlier ones).

    ``/tmp`` goes before the folders that are kept, so that one of them under the host's ``/tmp`` (a
    test's temporary folder) still shows at its own path. A kept folder that holds a hidden one (a home
    below it) goes before the hidden ones, which stay hidden; the others go after them, and the trial
    folder last, so nothing covers it.
    """
    args = ["--die-with-parent", "--unshare-pid", "--unshare-ipc"]
    if spec.network == "none":
        args.append("--unshare-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", spec.tmp, "/tmp"]
    for socket in _present_sockets():
        args += ["--ro-bind", "/dev/null", socket]
    hidden = [folder for folder in spec.hidden if os.path.isdir(folder) and folder != "/"]
    kept = [*(("--ro-bind", f) for f in spec.readable), *(("--bind", f) for f in spec.writable)]
    around = [
        (option, f) for option, f in kept if any(_strictly_below(h, os.path.realpath(f)) for h in hidden)
    ]
    for option, folder in around:
        args += _same_path(option, folder)
    for folder in hidden:
        args += ["--tmpfs", folder]
    for option, folder in kept:
        if (option, folder) not in around:
            args += _same_path(option, folder)
    args += _same_path("--bind", spec.trial_dir)
    for folder in hidden:  # read-only last: the folders kept inside were mounted on it first
        args += ["--remount-ro", folder]
    return args


def _strictly_below(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip(os.sep) + os.sep)


def _same_path(option: str, folder: str) -> list[str]:
    """Mount ``folder`` at its own path, and at the path its symlinks lead to, when it exists."""
    if not os.path.exists(folder):
        return []
    real = os.path.realpath(folder)
    args = [option, real, real]
    if real != folder:
        args += [option, real, folder]
    return args


def _present_sockets() -> Iterator[str]:
    seen: set[str] = set()
    for path in _DAEMON_SOCKETS:
        real = os.path.realpath(path)
        if real not in seen and os.path.exists(real):
            seen.add(real)
            yield real


def _spawn(spec: SandboxSpec, bwrap: str) -> tuple[subprocess.Popen[bytes], int]:
    """Start a keeper for ``spec``: its process, and the pipe its namespaces' info arrives on."""
    os.makedirs(spec.tmp, mode=0o700, exist_ok=True)
    read, write = os.pipe()
    argv = [bwrap, *bwrap_args(spec), "--info-fd", str(write), "--", "sh", "-c", "echo ready; read -r _"]
    try:
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(write,),
            cwd="/",
            env={"PATH": os.environ.get("PATH", os.defpath)},
            start_new_session=True,
        )
    except OSError as exc:
        os.close(read)
        raise SandboxUnavailable(f"cannot start bubblewrap ({bwrap}): {exc.strerror or exc}") from exc
    finally:
        os.close(write)
    return popen, read


class _Keeper:
    """The running ``bwrap`` of one trial: its init's PID, and how to enter its namespaces."""

    def __init__(self, popen: subprocess.Popen[bytes], info: dict[str, int], network: str) -> None:
        self.popen = popen
        self.init = info["child-pid"]
        self._proc = f"/proc/{self.init}/root/proc"  # the sandbox's /proc, seen from the host
        self.own = frozenset({1, *_children(1, self._proc)})  # its init and the keeper's waiting shell
        self._network = network
        self._user_fd, self._user, self._inner_user = _user_hops(self.init)
        self._lock = threading.Lock()

    @classmethod
    def ready(cls, popen: subprocess.Popen[bytes], info_fd: int, spec: SandboxSpec) -> _Keeper:
        """Wait until the keeper's sandbox is set up (the first line it prints); it is killed if never."""
        try:
            info, ready = _read_start(popen, info_fd)
        finally:
            os.close(info_fd)
        if info is None or not ready:
            popen.kill()
            _, stderr = popen.communicate(timeout=_STOP_TIMEOUT_S)
            said = stderr.decode("utf-8", errors="replace").strip()[-400:]
            raise SandboxUnavailable(
                f"bubblewrap could not set up the trial's sandbox: {said or 'no message'}"
            )
        return cls(popen, info, spec.network)

    def enter(self, nsenter: str, cwd: str) -> list[str]:
        """The ``nsenter`` prefix that runs a command inside the keeper's namespaces, in ``cwd``."""
        ns = f"/proc/{self.init}/ns"
        namespaces = [f"--mount={ns}/mnt", f"--pid={ns}/pid", f"--ipc={ns}/ipc"]
        if self._network == "none":
            namespaces.append(f"--net={ns}/net")
        user = [f"--user={self._user}", "--preserve-credentials"] if self._user else []
        prefix = [nsenter, *user, *namespaces, "--"]
        if self._inner_user:
            # Inside the mount namespace, the sandbox's /proc shows its init as PID 1.
            prefix += [nsenter, "--user=/proc/1/ns/user", "--preserve-credentials", "--"]
        # The working directory is entered from inside: nsenter's own --wd opens it before it enters, and
        # the process would then stand in the host's folder, where `..` leads out of the sandbox.
        return [*prefix, "/bin/sh", "-c", _CHDIR_AND_RUN, cwd]

    def stop(self) -> tuple[str, ...]:
        """Kill the keeper and with it every process of the sandbox; a warning for each one still running."""
        with self._lock:
            left = self._members()
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.popen.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.communicate(timeout=_STOP_TIMEOUT_S)
            # The namespace's init exits only once the kernel has ended every process left in it.
            _settle(lambda: _alive(self.init), _STOP_TIMEOUT_S)
            if self._user_fd is not None:
                os.close(self._user_fd)
                self._user_fd = None
        return tuple(
            left_running(command, f"{pid} in the sandbox", by="its sandbox") for pid, command in left
        )

    def _members(self) -> list[tuple[int, str]]:
        """The live processes of the sandbox (its own PIDs), init and the keeper's own excluded.

        Read from the sandbox's own /proc, which lists only them, rather than from every process of the
        machine: at fifty trials at a time, scanning all of /proc at every trial's end was a CPU cost.
        """
        found: list[tuple[int, str]] = []
        for pid in _pids(self._proc):
            if pid in self.own:
                continue
            try:
                if _state(pid, self._proc) in "ZX":
                    continue
            except OSError:
                continue  # gone meanwhile
            command = command_line(pid, proc=self._proc)
            if command is not None:
                found.append((pid, command))
        return found


def _read_start(popen: subprocess.Popen[bytes], info_fd: int) -> tuple[dict[str, int] | None, bool]:
    """bwrap's info JSON (written once the namespaces exist) and whether the keeper said it is ready."""
    chunks: list[bytes] = []
    while True:  # bwrap writes the JSON and closes the pipe; an error closes it with nothing written
        chunk = os.read(info_fd, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    try:
        info = json.loads(b"".join(chunks))
    except ValueError:
        return None, False
    assert popen.stdout is not None
    return info, popen.stdout.readline() == _READY


def _user_hops(init: int) -> tuple[int | None, str | None, bool]:
    """How to enter the sandbox's user namespaces: (an open fd to keep, the first --user path, a second hop).

    Run as root, bwrap makes no user namespace: nothing to enter. Otherwise the namespaces belong to the
    user namespace bwrap made first, the parent of the one its init runs in when bwrap nested a second.
    """
    ours = os.stat("/proc/self/ns/user").st_ino
    theirs = f"/proc/{init}/ns/user"
    if os.stat(theirs).st_ino == ours:
        return None, None, False
    inner = os.open(theirs, os.O_RDONLY)
    try:
        outer = fcntl.ioctl(inner, _NS_GET_PARENT)
    finally:
        os.close(inner)
    if os.fstat(outer).st_ino == ours:
        os.close(outer)
        return None, theirs, False
    # nsenter reopens it by this path, which stays valid while this process holds the fd.
    return outer, f"/proc/{os.getpid()}/fd/{outer}", True


def _children(pid: int, proc: str) -> frozenset[int]:
    try:
        with open(f"{proc}/{pid}/task/{pid}/children") as file:
            return frozenset(int(p) for p in file.read().split())
    except OSError:
        return frozenset()


def _pids(proc: str) -> Iterator[int]:
    with os.scandir(proc) as entries:
        for entry in entries:
            if entry.name.isdigit():
                yield int(entry.name)


def _state(pid: int, proc: str = "/proc") -> str:
    with open(f"{proc}/{pid}/stat", "rb") as file:
        stat = file.read()
    return stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3].decode()


def _alive(pid: int) -> bool:
    try:
        return _state(pid) not in "ZX"
    except OSError:
        return False


def _settle(busy: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    delay = 0.002
    while busy() and time.monotonic() < deadline:
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
