"""Host handles given to workloads: Mininet hosts whose started tools are recorded."""

from __future__ import annotations

import signal
import subprocess

from ..manifest import Manifest
from ..procs import OwnedProcess, ProcessTracker


class RecordedHost:
    """Wraps a Mininet Host: every process started in it goes into its run's manifest first."""

    def __init__(self, host, manifest: Manifest | None):
        self._host = host
        self.name = host.name
        self.tracker = ProcessTracker(manifest)

    def IP(self) -> str:
        """The host's IPv4 address."""
        return self._host.IP()

    def MAC(self) -> str:
        """The host's MAC address."""
        return self._host.MAC()

    @property
    def pid(self) -> int:
        """PID of the host's shell (its namespace lives as long as it does)."""
        return self._host.pid

    @property
    def started(self) -> list[OwnedProcess]:
        """The processes started in this host and not yet reaped."""
        return self.tracker.processes

    def spawn(self, argv: list, role: str, **how) -> OwnedProcess:
        """Start argv in the host (Mininet's `mnexec -da`: its own session), recorded in the run's manifest."""
        return self.tracker.spawn(argv, f"{role}@{self.name}", popen=self._host.popen, **how)

    def popen(self, argv: list, stdout=None, stderr=None, cwd=None, env=None) -> subprocess.Popen:
        """spawn() for callers that want only the Popen; its stdin is /dev/null, output discarded unless given."""
        return self.spawn(argv, "tool", stdout=stdout, stderr=stderr, cwd=cwd, env=env).popen

    def cmd(self, *args, **kwargs) -> str:
        """Run a short command in the host's shell and return its output."""
        return self._host.cmd(*args, **kwargs)

    def reap(self) -> None:
        """Kill any tool this host started that still runs, and mark all released."""
        self.tracker.stop_all(signal.SIGKILL, 0.0)
