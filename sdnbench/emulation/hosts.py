"""Host handles given to workloads: Mininet hosts whose started tools are recorded."""

from __future__ import annotations

import signal
import subprocess

from ..manifest import Manifest
from ..procs import OwnedProcess, ProcessTracker


class RecordedHost:
    """Wraps a Mininet Host: tools started in it with procs.spawn_in go into its run's manifest."""

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

    def popen(self, *args, **kwargs) -> subprocess.Popen:
        """How to start a command in the host: Mininet runs it via `mnexec -da`, its own session.

        Owning it (manifest, stop) is procs.spawn_in's job, which calls this.
        """
        return self._host.popen(*args, **kwargs)

    def cmd(self, *args, **kwargs) -> str:
        """Run a short command in the host's shell and return its output."""
        return self._host.cmd(*args, **kwargs)

    def reap(self) -> None:
        """Kill any tool this host started that still runs, and mark all released."""
        self.tracker.stop_all(signal.SIGKILL, 0.0)
