"""Open vSwitch bridges, one per switch, on the kernel or the userspace (netdev) datapath."""

from __future__ import annotations

from pathlib import Path

from ...errors import CapabilityError
from .. import capabilities, ovs
from ..capabilities import Capability
from ..offload import disable_offloads_root, offload_off_command
from .base import SwitchKind, has_switch_loop

_PROTOCOLS = {"1.0": "OpenFlow10", "1.3": "OpenFlow13"}


class OvsSwitch(SwitchKind):
    """Mininet's OVSSwitch; the datapath follows network.datapath (auto: kernel when its module is loaded)."""

    name = "ovs"

    def __init__(self, graph, manifest, openflow="1.3", fail_mode="secure", datapath="auto"):
        super().__init__(graph, manifest, openflow, fail_mode, datapath)
        self.datapath = capabilities.datapath_for(datapath)
        self.bridges = [s.name for s in graph.switches]
        self.target: str | None = None   # the controller endpoint, once attached

    @classmethod
    def availability(cls) -> Capability:
        """ovsdb-server and ovs-vswitchd answer."""
        return capabilities.ovs_running()

    def switch_params(self) -> dict:
        """OVSSwitch's parameters: datapath, fail mode, OpenFlow version and a 1 s reconnect."""
        return {"datapath": self.datapath, "failMode": self.fail_mode, "protocols": _PROTOCOLS[self.openflow],
                "reconnectms": 1000}

    def mininet_switch(self):
        """OVSSwitch with switch_params(), as a class: Mininet then starts all switches in one
        ovs-vsctl transaction (batchStartup), as `mn` does, where a partial gets one per switch."""
        from mininet.node import OVSSwitch
        from mininet.util import specialClass

        return specialClass(OVSSwitch, defaults=self.switch_params())

    @property
    def rstp(self) -> bool:
        """Standalone switches on a loop run RSTP (a loop of learning switches would storm)."""
        return self.fail_mode == "standalone" and has_switch_loop(self.graph)

    def prepare(self) -> None:
        """Refuse bridges of the same names (another tool's, or a killed run's); record ours."""
        leftovers = ovs.existing_bridges() & set(self.bridges)
        if leftovers:
            raise CapabilityError(f"OVS bridges {', '.join(sorted(leftovers))} already exist "
                                  "(left by a killed run?): run `sdnbench clean`")
        for name in self.bridges:
            self.manifest.created("bridge", name)

    def started(self, net) -> None:
        """RSTP for standalone switches on loops; offloads off on the userspace datapath."""
        if self.rstp:
            # A loop of standalone learning switches storms; RSTP blocks the loop.
            ovs.vsctl(*[["set", "bridge", name, "rstp_enable=true"] for name in self.bridges])
        if self.datapath == "user":
            # Only kernel interfaces: a switch kind may add ports that have none (OVS patch ports).
            disable_offloads_root([i.name for s in net.switches for i in s.intfList()
                                   if i.name != "lo" and Path(f"/sys/class/net/{i.name}").exists()])
            # Every host's shell at once, then collect: one round trip per host, all in parallel.
            for host in net.hosts:
                host.sendCmd("; ".join(offload_off_command(i.name) for i in host.intfList() if i.name != "lo"))
            for host in net.hosts:
                host.waitOutput()

    def attach(self, target: str) -> None:
        """Set every bridge's controller, fail mode and OpenFlow version in one transaction."""
        self.target = target
        ovs.set_controllers(self.bridges, target, self.openflow, self.fail_mode)

    def connected(self) -> set[str]:
        """Bridges whose controller record says is_connected."""
        return ovs.connected_bridges(self.bridges)

    def detach(self, names: list[str]) -> None:
        """Remove the bridges' controller (the fail mode then decides what they forward)."""
        ovs.vsctl(*[["del-controller", name] for name in names])

    def reattach(self, names: list[str]) -> None:
        """Give the bridges their controller back, with the same settings as attach()."""
        ovs.set_controllers(names, self.target, self.openflow, self.fail_mode)

    def stopping(self, net) -> None:
        """Delete every bridge in one transaction, before Mininet deletes their ports one by one."""
        existing = ovs.existing_bridges()
        ovs.delete_bridges([name for name in self.bridges if name in existing])

    def teardown(self) -> None:
        """Delete the bridges Mininet did not (after a failed start), release them all."""
        existing = ovs.existing_bridges()
        ovs.delete_bridges([name for name in self.bridges if name in existing])
        for name in self.bridges:
            self.manifest.released("bridge", name)

    def describe(self) -> dict:
        """Switch kind, datapath and Open vSwitch version."""
        version = capabilities.tool("ovs-vswitchd", "openvswitch-switch", ["--version"])
        return {**super().describe(), "ovs_version": version.detail.split()[-1] if version.ok else "?"}
