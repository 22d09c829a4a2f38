"""The data planes the benchmark compares, each built around the same hosts and the same shape.

- bridge:  the kernel's Linux bridge (`ip link add type bridge`, no OVS): this machine's ceiling;
- mininet: Mininet's own default with the userspace datapath (`mn --switch ovs,datapath=user`:
           OVSSwitch over veth pairs, offloads as the kernel leaves them), built with Mininet's API;
- mininet-nooffload: the same with veth offloads switched off, as the userspace datapath needs
           (otherwise UDP and TCP arrive with unfinished checksums);
- today:   sdnbench's `ovs` switch kind (veth system ports, offloads off);
- fast:    sdnbench's `ovs_fast` switch kind (patch ports between switches, AF_XDP host ports).

Every variant holds the machine's network lock while its network exists; the bridge and Mininet
variants name their switches dpb<N> / dpm<N>, so they cannot collide with sdnbench's s<N> either.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from sdnbench.emulation.lock import NetworkLock  # noqa: E402
from sdnbench.emulation.network import EmulatedNetwork  # noqa: E402
from sdnbench.emulation.offload import offload_off_command  # noqa: E402
from sdnbench.manifest import Manifest  # noqa: E402

VARIANTS = ("bridge", "mininet", "mininet-nooffload", "today", "fast")
SWITCH_KIND = {"today": "ovs", "fast": "ovs_fast"}
PREFIX = {"bridge": "dpb", "mininet": "dpm", "mininet-nooffload": "dpn"}


def _ip_bridge_class():
    """A Mininet switch that is a plain Linux bridge made with `ip link` (no STP, no forward delay)."""
    from mininet.node import Switch

    class IpBridge(Switch):
        """Linux bridge: the kernel forwards, nothing in user space."""

        def start(self, controllers):
            self.cmd(f"ip link add name {self.name} type bridge stp_state 0 forward_delay 0")
            for intf in self.intfList():
                if intf.name != "lo":
                    self.cmd(f"ip link set dev {intf} master {self.name}")
            self.cmd(f"ip link set dev {self.name} up")

        def stop(self, deleteIntfs=True):
            self.cmd(f"ip link del dev {self.name}")
            super().stop(deleteIntfs)

    return IpBridge


def _mininet_topo(graph, prefix: str):
    """The graph's shape as a Mininet Topo, switches renamed <prefix><N> (same dpids, same host IPs)."""
    from mininet.topo import Topo

    rename = {s.name: f"{prefix}{s.dpid}" for s in graph.switches}
    topo = Topo()
    for s in graph.switches:
        topo.addSwitch(rename[s.name], dpid=f"{s.dpid:016x}")
    for h in graph.hosts:
        topo.addHost(h.name, ip=f"{h.ip}/8")
    for link in graph.links:
        topo.addLink(rename.get(link.a, link.a), rename.get(link.b, link.b))
    return topo


@contextlib.contextmanager
def _mininet(graph, variant: str):
    """A Mininet network of bridges or of Mininet's default userspace OVS switches, under the lock."""
    from mininet.log import setLogLevel
    from mininet.net import Mininet
    from mininet.node import OVSSwitch

    setLogLevel("error")
    switch = _ip_bridge_class() if variant == "bridge" else partial(OVSSwitch, datapath="user",
                                                                     failMode="standalone")
    lock = NetworkLock()
    lock.acquire()
    net = None
    try:
        net = Mininet(topo=_mininet_topo(graph, PREFIX[variant]), switch=switch, controller=None,
                      autoSetMacs=False, build=True)
        net.start()
        if variant != "mininet":
            # The bridge gets sdnbench's host settings too, so its senders cut GSO batches per packet.
            for node in net.hosts + (net.switches if variant != "bridge" else []):
                node.cmd("; ".join(offload_off_command(i.name) for i in node.intfList() if i.name != "lo"))
        yield {h.name: h for h in net.hosts}, {"variant": variant,
                                                "offloads": "on" if variant == "mininet" else "off"}
    finally:
        if net is not None:
            net.stop()
        lock.release()


@contextlib.contextmanager
def _sdnbench(graph, variant: str):
    """An sdnbench EmulatedNetwork (standalone switches, userspace datapath); it takes the lock itself."""
    workdir = Path(tempfile.mkdtemp(prefix=f"sdnbench-dataplane-{variant}-"))
    net = EmulatedNetwork(graph, Manifest(workdir), datapath="user", fail_mode="standalone",
                          switch=SWITCH_KIND[variant])
    try:
        net.start()
        yield net.hosts, {"variant": variant, **net.describe()}
    finally:
        net.stop()
    leftover = Manifest(workdir).outstanding()
    if leftover:
        raise RuntimeError(f"{variant}: left behind {leftover}")


def network(variant: str, graph):
    """Context manager yielding (hosts by name, description) of one variant's running network."""
    return _mininet(graph, variant) if variant in PREFIX else _sdnbench(graph, variant)
