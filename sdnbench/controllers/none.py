"""The "no SDN" baseline: no controller; switches forward on their own.

The emulation layer sees `standalone = True` and sets every bridge's fail mode
to standalone with no controller, so OVS behaves as a learning switch (the
NORMAL action). SDN and non-SDN runs then compare in one table.
"""

from __future__ import annotations

from pathlib import Path

from .base import Availability, ControllerAdapter


class NoneAdapter(ControllerAdapter):
    """No controller process at all."""

    kind = "none"
    openflow_versions = ("1.0", "1.3")
    standalone = True

    @classmethod
    def availability(cls) -> Availability:
        """Always available: Open vSwitch forwards by itself."""
        return Availability(True, "no controller: switches in standalone fail mode")

    def version(self) -> str:
        """Recorded as the controller version of baseline trials."""
        return "none (OVS standalone)"

    def start(self, rundir: Path, timeout_s: float = 30.0) -> None:
        """Nothing to start."""

    def stop(self) -> None:
        """Nothing to stop."""

    def listening(self) -> bool:
        """There is no OpenFlow port."""
        return False

    def endpoints(self) -> dict[str, str]:
        """No controller, so no endpoints."""
        return {}

    @classmethod
    def northbound_problem(cls, spec) -> str | None:
        """Why northbound load cannot run against this controller as specified."""
        return f"{spec.kind} has no northbound API"


#: The adapter this module registers (sdnbench.controllers.ADAPTER_MODULES).
ADAPTER = NoneAdapter
