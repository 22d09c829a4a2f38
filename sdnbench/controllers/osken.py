"""os-ken running sdnbench's reference L2-learning app through sdnbench's own launcher.

os-ken 4.x ships neither `osken-manager` nor the sample apps nor `ofctl_rest`,
so sdnbench starts `AppManager.run_apps()` itself (launchers/osken_launcher.py)
with apps/l2_learning.py. spec.app picks when a PACKET_IN leads to a flow:
"l2_learning" (default: for learnt destinations, like Ryu's simple_switch),
"l2_flow_every_packet_in" (one FLOW_MOD for every PACKET_IN, flooding ones
too) or "l2_packet_out" (never: every packet of every flow is a PACKET_IN,
which loads the southbound channel). spec.options["idle_timeout"] sets the
idle timeout of installed flows in seconds.
"""

from __future__ import annotations

from pathlib import Path

from ..paths import venv_python
from .base import Availability
from .process import ProcessAdapter, launcher, run_version, venv_availability

FLOWS = {"l2_learning": "known", "l2_flow_every_packet_in": "always", "l2_packet_out": "never"}


class OsKenAdapter(ProcessAdapter):
    """os-ken with the reference L2 app, OpenFlow 1.0 or 1.3."""

    kind = "osken"
    venv = "osken"
    openflow_versions = ("1.0", "1.3")
    apps = tuple(FLOWS)
    default_app = "l2_learning"

    @classmethod
    def availability(cls) -> Availability:
        """Is the osken venv there and does the launcher import os-ken?"""
        return venv_availability("osken", [str(launcher("osken_launcher.py")), "--version"], "os-ken")

    def command(self, rundir: Path) -> list[str]:
        """python osken_launcher.py --host H --port P --openflow V --flows F."""
        return [str(venv_python("osken")), str(launcher("osken_launcher.py")),
                "--host", self.spec.host, "--port", str(self.spec.port),
                "--openflow", self.spec.openflow, "--flows", FLOWS[self.app()],
                "--idle-timeout", str(int(self.spec.options.get("idle_timeout", 0)))]

    def query_version(self) -> str:
        """os-ken's package version in the venv."""
        return "os-ken " + run_version([str(venv_python("osken")), str(launcher("osken_launcher.py")), "--version"])
