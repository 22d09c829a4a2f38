"""Host handles given to workloads: Mininet hosts whose started tools are recorded."""

from __future__ import annotations

import os
import signal
import subprocess

from ..manifest import Manifest


class RecordedHost:
    """Wraps a Mininet Host: popen() runs inside its namespace and records the PID."""

    def __init__(self, host, manifest: Manifest | None):
        self._host, self._manifest = host, manifest
        self.name = host.name
        self.started: list[subprocess.Popen] = []

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

    def popen(self, *args, **kwargs) -> subprocess.Popen:
        """Start a command in the host (Mininet runs it via `mnexec -da`, its own session)."""
        proc = self._host.popen(*args, **kwargs)
        argv = list(args[0]) if args and isinstance(args[0], (list, tuple)) else list(args)
        if self._manifest:
            self._manifest.process(proc.pid, [str(a) for a in argv], f"tool@{self.name}")
        self.started.append(proc)
        return proc

    def cmd(self, *args, **kwargs) -> str:
        """Run a short command in the host's shell and return its output."""
        return self._host.cmd(*args, **kwargs)

    def reap(self) -> None:
        """Kill any tool this host started that still runs, and mark all released."""
        for proc in self.started:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                proc.wait(5)
            if self._manifest:
                self._manifest.released("process", str(proc.pid))
        self.started.clear()
