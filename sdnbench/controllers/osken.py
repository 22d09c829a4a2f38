"""os-ken running sdnbench's own apps through sdnbench's own launcher.

os-ken 4.x ships neither `osken-manager` nor the sample apps nor `ofctl_rest`,
so sdnbench starts `AppManager.run_apps()` itself (launchers/osken_launcher.py).
spec.app picks the app. apps/l2_learning.py, per switch, with when a
PACKET_IN leads to a flow: "l2_learning" (default: for learnt destinations,
like Ryu's simple_switch), "l2_flow_every_packet_in" (one FLOW_MOD for every
PACKET_IN, flooding ones too) or "l2_packet_out" (never: every packet of every
flow is a PACKET_IN, which loads the southbound channel). "shortest_path":
apps/l2_shortest_path.py with os-ken's LLDP link discovery, flows on every
switch of the fewest-hop path, flooding along a spanning tree.
spec.options["idle_timeout"] sets the idle timeout of installed flows in seconds.
"""

from __future__ import annotations

from pathlib import Path

from ..paths import venv_python
from .base import Availability
from .process import ProcessAdapter, launcher, run_version, venv_availability

FLOWS = {"l2_learning": "known", "l2_flow_every_packet_in": "always", "l2_packet_out": "never"}
SHORTEST_PATH = "shortest_path"


class OsKenAdapter(ProcessAdapter):
    """os-ken with sdnbench's L2 apps, OpenFlow 1.0 or 1.3."""

    kind = "osken"
    venv = "osken"
    openflow_versions = ("1.0", "1.3")
    apps = (*FLOWS, SHORTEST_PATH)
    default_app = "l2_learning"

    @classmethod
    def availability(cls) -> Availability:
        """Is the osken venv there and does the launcher import os-ken?"""
        return venv_availability("osken", [str(launcher("osken_launcher.py")), "--version"], "os-ken")

    def command(self, rundir: Path) -> list[str]:
        """python osken_launcher.py --host H --port P --openflow V (--flows F | --app l2_shortest_path --discover-links)."""
        app = ["--app", "l2_shortest_path", "--discover-links"] if self.app() == SHORTEST_PATH \
            else ["--flows", FLOWS[self.app()]]
        return [str(venv_python("osken")), str(launcher("osken_launcher.py")),
                "--host", self.spec.host, "--port", str(self.spec.port), "--openflow", self.spec.openflow,
                *app, "--idle-timeout", str(int(self.spec.options.get("idle_timeout", 0)))]

    def query_version(self) -> str:
        """os-ken's package version in the venv."""
        return "os-ken " + run_version([str(venv_python("osken")), str(launcher("osken_launcher.py")), "--version"])

    @classmethod
    def northbound_problem(cls, spec) -> str | None:
        """Why northbound load cannot run against this controller as specified."""
        return None if spec.rest_port else f"{spec.kind} has no northbound API without rest_port"


#: The adapter this module registers (sdnbench.controllers.ADAPTER_MODULES).
ADAPTER = OsKenAdapter
