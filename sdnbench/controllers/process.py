"""Launching controller processes: the shared start/wait/stop of every local adapter.

The `launchers/*_launcher.py` scripts run inside a controller's own
virtualenv (they import os-ken or Ryu, never sdnbench); this module runs in
sdnbench's process and starts them.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from abc import abstractmethod
from pathlib import Path

from ..errors import ControllerError
from ..paths import venv_python
from ..procs import OwnedProcess, ProcessTracker, cpu_set
from .base import Availability, ControllerAdapter, ControllerSpec

LAUNCHERS_DIR = Path(__file__).resolve().parent / "launchers"
INSTALL_SCRIPT = "scripts/install-controllers.sh"
_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp


def launcher(name: str) -> Path:
    """Path of a launcher script shipped with sdnbench (e.g. 'osken_launcher.py')."""
    return LAUNCHERS_DIR / name


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (bind port 0)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def accepts(host: str, port: int, timeout_s: float = 0.5) -> bool:
    """True when a TCP connect to host:port succeeds."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def _listen_ports(path: str) -> set[int] | None:
    try:
        lines = Path(path).read_text().splitlines()[1:]
    except OSError:
        return None
    ports = set()
    for line in lines:
        fields = line.split()
        if len(fields) > 3 and fields[3] == _LISTEN:
            ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def port_listening(host: str, port: int) -> bool:
    """True when something in this network namespace listens on TCP port.

    Reads /proc/net/tcp{,6} rather than connecting, so that waiting for a
    controller does not show it a switch that connects and vanishes.
    """
    found = [_listen_ports(p) for p in ("/proc/net/tcp", "/proc/net/tcp6")]
    if all(f is None for f in found):
        return accepts(host, port)
    return any(f and port in f for f in found)


def install_fix(venv: str) -> str:
    """The command that installs the controller venv `venv`."""
    return f"{INSTALL_SCRIPT} {venv}   (or: make controllers)"


def venv_availability(venv: str, check: list[str], what: str) -> Availability:
    """Availability of a controller living in .venvs/<venv>: run check with its python."""
    py = venv_python(venv)
    fix = install_fix(venv)
    if not py.exists():
        return Availability(False, f"{what} is not installed: no virtualenv {py.parent.parent}", fix)
    try:
        out = subprocess.run([str(py), *check], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(False, f"{what}: {py} does not run: {exc}", fix)
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
        return Availability(False, f"{what} in {py.parent.parent} does not import: {last}", fix)
    return Availability(True, f"{what} {out.stdout.strip()} in {py.parent.parent}")


class ProcessAdapter(ControllerAdapter):
    """A controller that is one local process: start it, wait for its port, stop it by PID."""

    #: Values spec.app may take (None: any); default_app stands in for spec.app = None.
    apps: tuple[str, ...] | None = None
    default_app: str | None = None
    #: Name of the controller's virtualenv under .venvs, for venv-based controllers.
    venv: str | None = None

    def __init__(self, spec: ControllerSpec, tracker: ProcessTracker | None = None):
        super().__init__(spec, tracker)
        self.proc: OwnedProcess | None = None
        self.log_path: Path | None = None
        self._version: str | None = None

    @abstractmethod
    def command(self, rundir: Path) -> list[str]:
        """The argv that starts the controller."""

    def environment(self, rundir: Path) -> dict[str, str] | None:
        """Environment of the controller process (None = inherit sdnbench's)."""
        return None

    def workdir(self) -> Path | None:
        """Working directory of the controller process (None = inherit)."""
        return None

    def prepare(self, rundir: Path) -> None:
        """Write configuration files the controller reads (hook for subclasses)."""

    def usable(self) -> Availability:
        """Availability checked at every start: for a venv only that it exists.

        A full import check costs up to a second per trial; a venv that exists
        but is broken makes the process exit, and start() reports its log.
        """
        if self.venv is None:
            return self.availability()
        py = venv_python(self.venv)
        if py.exists():
            return Availability(True, f"{py}")
        return Availability(False, f"{self.kind} is not installed: no virtualenv {py.parent.parent}",
                            install_fix(self.venv))

    def check_spec(self) -> None:
        """Refuse a spec this adapter cannot honour."""
        refusal = self.refusal(self.spec.openflow)
        if refusal:
            raise ControllerError(f"{self.spec.label}: {refusal}")
        if self.apps is not None and self.app() not in self.apps:
            raise ControllerError(f"{self.spec.label}: {self.kind} app must be one of "
                                  f"{', '.join(self.apps)}, not {self.spec.app!r}")

    def app(self) -> str | None:
        """The application to run: spec.app or the adapter's default."""
        return self.spec.app or self.default_app

    def start(self, rundir: Path, timeout_s: float = 30.0) -> None:
        """Start the process and return once its OpenFlow port listens."""
        if self.proc is not None and self.proc.alive():
            raise ControllerError(f"{self.spec.label}: already running (PID {self.proc.pid})")
        self.check_spec()
        avail = self.usable()
        if not avail.ok:
            raise ControllerError(f"{self.spec.label}: {avail.detail}; fix: {avail.fix}")
        if port_listening(self.spec.host, self.spec.port):
            raise ControllerError(f"{self.spec.label}: TCP port {self.spec.port} is already in use "
                                  "by another process; choose another port")
        try:
            cpus = cpu_set(self.spec.cpus)
        except ValueError as exc:
            raise ControllerError(f"{self.spec.label}: {exc}") from None
        rundir = Path(rundir)
        rundir.mkdir(parents=True, exist_ok=True)
        self.prepare(rundir)
        argv = self.command(rundir)
        self.log_path = rundir / f"{self.spec.label}.log"
        tracker = self.tracker or ProcessTracker()
        self.proc = tracker.spawn(argv, role=f"controller:{self.spec.label}", log_path=self.log_path,
                                  env=self.environment(rundir), cwd=self.workdir(), cpus=cpus)
        self._wait_listening(timeout_s)

    def _wait_listening(self, timeout_s: float) -> None:
        self.wait_until(lambda: port_listening(self.spec.host, self.spec.port),
                        f"listening on {self.spec.host}:{self.spec.port}", timeout_s)

    def wait_until(self, ready, what: str, timeout_s: float) -> None:
        """Return once ready() is true; stop the process and raise ControllerError (with its log) when it
        ends or timeout_s passes first. what: the awaited state, as in 'not <what> after 30 s'."""
        proc = self.proc
        deadline = time.monotonic() + timeout_s
        while not ready():
            if not proc.alive():
                code = proc.returncode
                self.stop()
                raise ControllerError(f"{self.spec.label}: exited with code {code} before {what}; "
                                      f"log {self.log_path}:\n{proc.log_tail()}")
            if time.monotonic() >= deadline:
                self.stop()
                raise ControllerError(f"{self.spec.label}: not {what} after {timeout_s:g} s; "
                                      f"log {self.log_path}:\n{proc.log_tail()}")
            time.sleep(0.05)

    def stop(self) -> None:
        """Stop the process group by PID; safe to call twice."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        proc.stop()
        if self.tracker is not None and proc in self.tracker.processes:
            # Stopped and reaped: keep the tracker from signalling a PID that may be reused.
            self.tracker.processes.remove(proc)

    def listening(self) -> bool:
        """True while the OpenFlow port listens."""
        return port_listening(self.spec.host, self.spec.port)

    def health(self) -> str | None:
        """The process's end (exit code or signal) if it ended, else whether its port listens."""
        proc = self.proc
        if proc is None:
            return "not started"
        if not proc.alive():
            return f"the controller process (PID {proc.pid}) {exit_description(proc.returncode)}"
        return super().health()

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the log the controller writes in its run directory."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def identity(self) -> str | None:
        """PID and kernel start time of the controller process."""
        if self.proc is None:
            return None
        return f"{self.proc.pid}@{self.proc.start}"

    def send_signal(self, sig: int) -> None:
        """Signal the controller's process group (it is our unreaped child, so its PID cannot be reused yet)."""
        if self.proc is None or not self.proc.alive():
            raise ControllerError(f"{self.spec.label}: no running process to signal")
        self.proc.send_signal(sig)

    def pids(self) -> list[int]:
        """The controller's PID while it runs."""
        return [self.proc.pid] if self.proc is not None and self.proc.alive() else []

    def version(self) -> str:
        """The controller's version, asked once and remembered."""
        if self._version is None:
            self._version = self.query_version()
        return self._version

    @abstractmethod
    def query_version(self) -> str:
        """Ask the installed controller for its version."""


def exit_description(returncode: int | None) -> str:
    """'exited with code 1' or 'was killed by SIGKILL' from a Popen returncode."""
    if returncode is None:
        return "is running"
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"


def run_version(argv: list[str], default: str = "unknown") -> str:
    """First line a version command prints, or default when it fails."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return default
    lines = out.stdout.strip().splitlines()
    return lines[0].strip() if out.returncode == 0 and lines else default
