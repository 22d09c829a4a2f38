"""The contract of a switch implementation: what an emulated network's switches are and how they are driven.

One kind is chosen per experiment (`network.switch`) and made once per
network. It tells Mininet which switch class to build, writes into the run
manifest what it will create before creating it (bridges here; a kind whose
switches are processes records each PID as it starts them, so `sdnbench clean`
finds them after a crash), connects switches to a controller and says which
are connected, and removes what Mininet's stop left behind.
"""

from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from ..capabilities import Capability

if TYPE_CHECKING:
    from ...manifest import Manifest
    from ...topology.graph import Link, TopologyGraph


class SwitchKind(ABC):
    """Build, control and remove one network's switches."""

    name: ClassVar[str] = ""
    #: What a controller speaks to these switches: "openflow", "p4runtime", or None (no controller).
    southbound: ClassVar[str | None] = "openflow"

    def __init__(self, graph: TopologyGraph, manifest: Manifest, openflow: str = "1.3",
                 fail_mode: str = "secure", datapath: str = "auto"):
        """datapath is network.datapath; a kind with one forwarding path ignores it."""
        self.graph, self.manifest = graph, manifest
        self.openflow, self.fail_mode = openflow, fail_mode
        #: The forwarding path in one word, shown in progress lines and stored with every trial.
        self.datapath = self.name

    @classmethod
    @abstractmethod
    def availability(cls) -> Capability:
        """Can this kind run here? Cheap; used by start, check and doctor."""

    @abstractmethod
    def mininet_switch(self):
        """Mininet's `switch=` argument: a Switch subclass (Mininet batches start-up only
        for a class with batchStartup, so prefer mininet.util.specialClass to a partial)."""

    def plain_links(self, links: list[Link]) -> dict[Link, dict]:
        """Told which links the link realisation leaves plain (no shaping, no process of their own):
        Mininet addLink options for those this kind carries itself (OVS patch ports). It may also
        choose its port types for them. Default: none, every link stays the link realisation's."""
        return {}

    def prepare(self) -> None:
        """Before Mininet builds anything: refuse leftovers of an earlier run, record what start creates."""

    def started(self, net) -> None:
        """After Mininet started the network: what its switch class does not set itself."""

    @abstractmethod
    def attach(self, target: str) -> None:
        """Point every switch at the controller's southbound endpoint (e.g. 'tcp:127.0.0.1:6653')."""

    @abstractmethod
    def connected(self) -> set[str]:
        """Names of the switches whose controller session is up."""

    def detach(self, names: list[str]) -> None:
        """Cut these switches' controller sessions (fault injection); reattach() restores them."""
        raise NotImplementedError(f"{self.name} switches cannot be disconnected from their controller")

    def reattach(self, names: list[str]) -> None:
        """Point these switches at the controller again after detach()."""
        raise NotImplementedError(f"{self.name} switches cannot be reconnected")

    def set_port(self, switch: str, port: int, up: bool) -> None:
        """Take one switch port down or up (link faults); default: its interface in the root namespace."""
        subprocess.run(["ip", "link", "set", "dev", f"{switch}-eth{port}", "up" if up else "down"],
                       check=True, capture_output=True)

    def endpoints(self) -> dict[str, str]:
        """switch -> address a controller dials (e.g. a P4Runtime gRPC server); empty when switches dial."""
        return {}

    def device_ids(self) -> dict[str, int]:
        """switch -> the device id a controller names it by on its endpoint (P4Runtime); empty otherwise."""
        return {}

    def stopping(self, net) -> None:
        """Before Mininet stops the network: remove the switches in bulk where that is faster than
        Mininet's own stop (default: leave it to Mininet)."""

    def teardown(self) -> None:
        """After Mininet stopped, or failed to start: remove what remains of our switches, release records."""

    def describe(self) -> dict:
        """What a trial's environment records about the switches."""
        return {"switch": self.name, "datapath": self.datapath}


def has_switch_loop(graph: TopologyGraph) -> bool:
    """True when the switch graph has a loop (more switch links than a tree has)."""
    names = {s.name for s in graph.switches}
    core = [link for link in graph.links if link.a in names and link.b in names]
    return len(core) > len(names) - 1
