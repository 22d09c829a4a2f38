"""Start and stop processes that sdnbench owns, recorded by PID in the manifest.

Every process starts in its own session (process group == PID), so stopping it
signals only that group: never `pkill`, never `killall`, never a name match.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from .manifest import Manifest, process_start_time


def cpu_set(count: int | None) -> list[int] | None:
    """The first `count` CPUs this process may use, for pinning a controller."""
    if not count:
        return None
    allowed = sorted(os.sched_getaffinity(0))
    if count > len(allowed):
        raise ValueError(f"cpus: {count} asked, this machine has {len(allowed)}")
    return allowed[:count]


def cpus_left_over(count: int | None) -> list[int] | None:
    """The CPUs a controller pinned with cpu_set(count) does not use (None: no pinning, or none left)."""
    if not count:
        return None
    rest = sorted(os.sched_getaffinity(0))[count:]
    return rest or None


class ManagedProcess:
    """A process started by sdnbench; stop() ends its whole process group."""

    def __init__(self, popen: subprocess.Popen, role: str, log_path: Path | None, manifest: Manifest | None):
        self.popen, self.role, self.log_path, self.manifest = popen, role, log_path, manifest
        self.pid = popen.pid
        self.stopped = False

    def alive(self) -> bool:
        """True while the process runs."""
        return self.popen.poll() is None

    def stop(self, grace_s: float = 5.0) -> int | None:
        """SIGTERM the group, SIGKILL after grace_s; returns the exit code. Idempotent."""
        if self.stopped:
            return self.popen.returncode
        self.stopped = True
        if self.alive():
            _signal_group(self.pid, signal.SIGTERM)
            try:
                self.popen.wait(grace_s)
            except subprocess.TimeoutExpired:
                _signal_group(self.pid, signal.SIGKILL)
                self.popen.wait(5)
        # Children that outlived the leader (same group) get the same end. Done once:
        # the group id stays reserved only while a member lives.
        _signal_group(self.pid, signal.SIGKILL)
        if self.manifest:
            self.manifest.released("process", str(self.pid))
        return self.popen.returncode

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the process's log, for error messages."""
        if not self.log_path or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class ProcessTracker:
    """Starts processes with logs in a run directory and records them."""

    def __init__(self, manifest: Manifest | None = None):
        self.manifest = manifest
        self.processes: list[ManagedProcess] = []

    def spawn(self, argv: list[str], role: str, log_path: Path | None = None,
              env: dict | None = None, cwd: Path | None = None, cpus: list[int] | None = None,
              stdout=None) -> ManagedProcess:
        """Start argv in a new session; stdout+stderr go to log_path unless stdout is given."""
        out = stdout
        logf = None
        if out is None and log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            logf = open(log_path, "ab")
            out = logf
        preexec = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
        popen = subprocess.Popen(argv, stdout=out or subprocess.DEVNULL,
                                 stderr=subprocess.STDOUT if (logf or stdout) else subprocess.DEVNULL,
                                 stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                                 start_new_session=True, preexec_fn=preexec)
        if logf:
            logf.close()
        if self.manifest:
            self.manifest.process(popen.pid, argv, role)
        proc = ManagedProcess(popen, role, log_path, self.manifest)
        self.processes.append(proc)
        return proc

    def stop_all(self) -> None:
        """Stop every process still running, newest first."""
        for proc in reversed(self.processes):
            proc.stop()
        self.processes.clear()


def kill_recorded(pid: int, start: int | None) -> bool:
    """Kill a process group recorded in a manifest if the PID is still the same process."""
    current = process_start_time(pid)
    if current is None or (start is not None and current != start):
        return False
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and process_start_time(pid) == current:
        time.sleep(0.05)
    if process_start_time(pid) == current:
        _signal_group(pid, signal.SIGKILL)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return True


def wait_for(predicate, timeout_s: float, interval_s: float = 0.05) -> bool:
    """Poll predicate until it is true or timeout_s passes."""
    deadline = time.monotonic() + timeout_s
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval_s)
