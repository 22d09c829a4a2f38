"""ovs-testcontroller (Debian's openvswitch-testcontroller): the C baseline.

spec.app: "learning" (default: MAC learning, a flow per destination),
"noflow" (learning, but PACKET_OUT only, never a flow), "hub" (flood
everything) or "normal" (flows with the NORMAL action).
spec.options["max_idle"] sets the idle timeout of its flows in seconds
(its default is 60).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .base import Availability
from .process import ProcessAdapter, run_version

BINARY = "ovs-testcontroller"
MODE_FLAGS = {"learning": [], "noflow": ["--noflow"], "hub": ["--hub"], "normal": ["--normal"]}
PROTOCOLS = {"1.0": "OpenFlow10", "1.3": "OpenFlow13"}


class TestControllerAdapter(ProcessAdapter):
    """ovs-testcontroller listening on ptcp:PORT:HOST with one OpenFlow version."""

    __test__ = False  # not a pytest test class despite its name
    kind = "testcontroller"
    openflow_versions = ("1.0", "1.3")
    apps = tuple(MODE_FLAGS)
    default_app = "learning"

    @classmethod
    def availability(cls) -> Availability:
        """Is the binary on PATH?"""
        path = shutil.which(BINARY)
        if not path:
            return Availability(False, f"{BINARY} not found on PATH",
                                "apt-get install -y openvswitch-testcontroller")
        return Availability(True, f"{run_version([path, '--version'])} at {path}")

    def command(self, rundir: Path) -> list[str]:
        """ovs-testcontroller -O OpenFlowXY [mode flags] ptcp:PORT:HOST."""
        argv = [shutil.which(BINARY) or BINARY, "-O", PROTOCOLS[self.spec.openflow]]
        argv += MODE_FLAGS[self.app()]
        if "max_idle" in self.spec.options:
            argv.append(f"--max-idle={int(self.spec.options['max_idle'])}")
        return argv + [f"ptcp:{self.spec.port}:{self.spec.host}"]

    def query_version(self) -> str:
        """'ovs-testcontroller (Open vSwitch) X.Y.Z'."""
        return run_version([shutil.which(BINARY) or BINARY, "--version"])

    @classmethod
    def northbound_problem(cls, spec) -> str | None:
        """Why northbound load cannot run against this controller as specified."""
        return f"{spec.kind} has no northbound API"


#: The adapter this module registers (sdnbench.controllers.ADAPTER_MODULES).
ADAPTER = TestControllerAdapter
