"""A controller already running elsewhere (ONOS, OpenDaylight, Floodlight, ...).

Nothing is started or stopped: start() waits until spec.host:spec.port
accepts TCP connections, and spec.rest_url is recorded as its REST endpoint.
spec.options["version"] names the version recorded with results ("remote"
when unset). With options {forwarding: proactive, flow_api: onos|opendaylight,
rest_auth: USER:PASS}, network_ready() programs shortest-path forwarding
through its REST API (sdnbench.forwarding), as the odl adapter does.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..errors import ControllerError
from .base import Availability, ControllerAdapter
from .process import accepts


class RemoteAdapter(ControllerAdapter):
    """A controller at host:port that sdnbench does not manage."""

    kind = "remote"
    openflow_versions = ("1.0", "1.3")

    @classmethod
    def availability(cls) -> Availability:
        """Always usable: reachability is checked at start()."""
        return Availability(True, "reached over TCP at the configured host:port; nothing to install")

    def version(self) -> str:
        """What the experiment says the remote controller is."""
        return str(self.spec.options.get("version", "remote"))

    def start(self, rundir: Path, timeout_s: float = 30.0) -> None:
        """Wait until the remote OpenFlow port accepts connections."""
        deadline = time.monotonic() + timeout_s
        while not accepts(self.spec.host, self.spec.port):
            if time.monotonic() >= deadline:
                raise ControllerError(f"{self.spec.label}: nothing accepts connections at "
                                      f"{self.spec.host}:{self.spec.port} after {timeout_s:g} s; "
                                      "start the remote controller first")
            time.sleep(0.2)

    def stop(self) -> None:
        """Nothing to stop: sdnbench did not start it."""

    def listening(self) -> bool:
        """True while host:port accepts a TCP connection."""
        return accepts(self.spec.host, self.spec.port)

    def health(self) -> str | None:
        """Not probed: a connect per check would show the controller short-lived switches. The
        switches' own connections say whether it serves."""
        return None

    def network_ready(self, net) -> dict:
        """Proactive forwarding through the controller's REST API, when the options ask for it."""
        from ..emulation.network import port_plan
        from ..forwarding.programmer import program_topology

        mode = self.spec.options.get("forwarding")
        if mode is None:
            return {}
        if mode != "proactive" or not self.spec.rest_url:
            raise ControllerError(f"{self.spec.label}: options.forwarding can only be proactive, and needs rest_url")
        programmer = self._programmer(str(self.spec.options.get("flow_api", "")))
        return program_topology(programmer, net.graph, port_plan(net.graph)).environment()

    def flow_programmer(self):
        """The programmer of options.flow_api (onos, opendaylight) at rest_url; None without either."""
        api = self.spec.options.get("flow_api")
        return self._programmer(str(api)) if api and self.spec.rest_url else None

    def _programmer(self, api: str):
        from ..forwarding import flow_programmer
        from ..restclient import RestClient

        return flow_programmer(api, RestClient(self.spec.rest_url, self.spec.options.get("rest_auth")))

    @classmethod
    def northbound_problem(cls, spec) -> str | None:
        """Why northbound load cannot run against this controller as specified."""
        return None if spec.rest_url else "remote controllers need rest_url"


#: The adapter this module registers (sdnbench.controllers.ADAPTER_MODULES).
ADAPTER = RemoteAdapter
