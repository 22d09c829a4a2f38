"""A running Mininet + Open vSwitch network built from a TopologyGraph.

Owns exactly what it creates: it writes each bridge, interface and host shell
into the run manifest before creating it, so `sdnbench clean` can remove them
after a crash, and it removes them itself on stop().
"""

from __future__ import annotations

import subprocess
import time
from functools import partial
from pathlib import Path

from ..errors import CapabilityError, ControllerError
from ..manifest import Manifest
from ..procs import kill_recorded, wait_for
from ..topology.graph import TopologyGraph
from . import capabilities, ovs
from .hosts import RecordedHost
from .lock import NetworkLock
from .offload import disable_offloads_root, offload_off_command


def port_plan(graph: TopologyGraph) -> dict[tuple[str, str], tuple[int, int]]:
    """Port numbers of every link end: switches count from 1, hosts from 0 (Mininet's way)."""
    hosts = {h.name for h in graph.hosts}
    used: dict[str, int] = {}
    plan = {}
    for link in graph.links:
        ends = []
        for node in (link.a, link.b):
            first = 0 if node in hosts else 1
            used[node] = used.get(node, first - 1) + 1
            ends.append(used[node])
        plan[(link.a, link.b)] = (ends[0], ends[1])
    return plan


def switch_ports(graph: TopologyGraph) -> dict[int, list[int]]:
    """dpid -> OpenFlow port numbers, as controllers that need a config (Faucet) want them."""
    by_name = {s.name: s.dpid for s in graph.switches}
    ports: dict[int, list[int]] = {dpid: [] for dpid in by_name.values()}
    for (a, b), (pa, pb) in port_plan(graph).items():
        if a in by_name:
            ports[by_name[a]].append(pa)
        if b in by_name:
            ports[by_name[b]].append(pb)
    return ports


def check_link_support(graph: TopologyGraph) -> None:
    """Refuse links the kernel cannot shape, naming the missing capability."""
    if any(link.params.needs_netem() for link in graph.links):
        netem = capabilities.qdisc_available("netem")
        if not netem.ok:
            raise CapabilityError(f"links ask for delay/loss but {netem.detail}; needs {netem.fix}")
    if any(link.params.bw_mbps for link in graph.links):
        htb = capabilities.qdisc_available("htb")
        if not htb.ok:
            raise CapabilityError(f"links ask for a bandwidth limit but {htb.detail}")


def _quiet_htb_quantum_warning() -> None:
    """Drop Mininet's relay of the kernel's harmless 'quantum of class is big' HTB note."""
    from mininet.log import lg

    if not any(getattr(f, "sdnbench", False) for f in lg.filters):
        def keep(record) -> bool:
            return "quantum of class" not in str(record.msg)
        keep.sdnbench = True
        lg.addFilter(keep)


class EmulatedNetwork:
    """Build, start, connect and stop one network."""

    def __init__(self, graph: TopologyGraph, manifest: Manifest, datapath: str = "auto",
                 openflow: str = "1.3", fail_mode: str = "secure", lock: NetworkLock | None | bool = None):
        """lock: None takes the machine's network lock for the network's lifetime; False means
        the caller already holds it (a campaign holds it from its first controller to its end)."""
        self.graph, self.manifest = graph, manifest
        self.datapath = capabilities.datapath_for(datapath)
        self.openflow, self.fail_mode = openflow, fail_mode
        self.lock = NetworkLock() if lock is None else (lock or None)
        self.net = None
        self.hosts: dict[str, RecordedHost] = {}
        self._owns_resources = False   # set once our bridges/interfaces are in the manifest

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> None:
        """Create and start the network (switches forward nothing until a controller or standalone)."""
        check_link_support(self.graph)
        ovs_state = capabilities.ovs_running()
        if not ovs_state.ok:
            raise CapabilityError(f"{ovs_state.detail}; run: {ovs_state.fix}")
        if self.lock:
            self.lock.acquire()
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        from mininet.log import setLogLevel
        from mininet.net import Mininet
        from mininet.node import OVSSwitch

        setLogLevel("error")
        _quiet_htb_quantum_warning()
        leftovers = ovs.existing_bridges() & {s.name for s in self.graph.switches}
        if leftovers:
            raise CapabilityError(f"OVS bridges {', '.join(sorted(leftovers))} already exist "
                                  "(left by a killed run?): run `sdnbench clean`")
        self._record_planned()
        self._owns_resources = True
        proto = {"1.0": "OpenFlow10", "1.3": "OpenFlow13"}[self.openflow]
        switch_cls = partial(OVSSwitch, datapath=self.datapath, failMode=self.fail_mode,
                             protocols=proto, reconnectms=1000)
        self.net = Mininet(topo=self._mininet_topo(), switch=switch_cls, host=self._host_class(),
                           controller=None, autoSetMacs=False, autoStaticArp=False, build=True)
        self.net.start()
        if self.fail_mode == "standalone" and self.graph_has_cycle():
            # A loop of standalone learning switches storms; RSTP blocks the loop.
            ovs.vsctl(*[["set", "bridge", s.name, "rstp_enable=true"] for s in self.graph.switches])
        if self.datapath == "user":
            self._offloads_off()
        self.hosts = {h.name: RecordedHost(h, self.manifest) for h in self.net.hosts}

    def attach_controller(self, target: str, timeout_s: float = 60.0) -> None:
        """Point all switches at target ('tcp:IP:PORT'); wait until every one is connected."""
        bridges = [s.name for s in self.graph.switches]
        ovs.set_controllers(bridges, target, self.openflow, self.fail_mode)
        connected: set[str] = set()

        def all_connected() -> bool:
            connected.clear()
            connected.update(ovs.connected_bridges(bridges))
            return len(connected) == len(bridges)

        if not wait_for(all_connected, timeout_s, 0.1):
            missing = sorted(set(bridges) - connected)
            raise ControllerError(f"{len(missing)} of {len(bridges)} switches did not connect to {target} "
                                  f"within {timeout_s:.0f} s: {', '.join(missing[:10])}")

    def stop(self) -> None:
        """Stop everything this network created; safe to call twice."""
        try:
            for host in self.hosts.values():
                host.reap()
            if self.net is not None:
                self.net.stop()
                self.net = None
            if self._owns_resources:
                self._remove_leftovers()
                self._owns_resources = False
        finally:
            if self.lock:
                self.lock.release()

    # -- checks ------------------------------------------------------------
    def reachability(self, pairs: list[tuple[str, str]], timeout_s: float = 20.0) -> list[tuple[str, str]]:
        """Ping each (src, dst) until it answers or timeout_s passes; returns the pairs that never did."""
        pending = list(pairs)
        deadline = time.monotonic() + timeout_s
        while pending and time.monotonic() < deadline:
            procs = [(p, self.hosts[p[0]].popen(["ping", "-c1", "-W1", "-n", "-q", self.hosts[p[1]].IP()]))
                     for p in pending]
            pending = [p for p, proc in procs if proc.wait() != 0]
            if pending:
                time.sleep(0.2)
        return pending

    def graph_has_cycle(self) -> bool:
        """True when the switch graph has a loop (more switch links than a tree has)."""
        names = {s.name for s in self.graph.switches}
        core = [link for link in self.graph.links if link.a in names and link.b in names]
        return len(core) > len(names) - 1

    def ports(self) -> dict[int, list[int]]:
        """dpid -> port numbers."""
        return switch_ports(self.graph)

    # -- internals ---------------------------------------------------------
    def _mininet_topo(self):
        from mininet.link import TCLink
        from mininet.topo import Topo

        topo = Topo()
        for s in self.graph.switches:
            topo.addSwitch(s.name, dpid=f"{s.dpid:016x}")
        for h in self.graph.hosts:
            topo.addHost(h.name, ip=f"{h.ip}/8", mac=h.mac)
        plan = port_plan(self.graph)
        for link in self.graph.links:
            p1, p2 = plan[(link.a, link.b)]
            opts = {}
            if link.params.bw_mbps or link.params.needs_netem():
                opts = {"cls": TCLink, "bw": link.params.bw_mbps}
                if link.params.delay_ms:
                    opts["delay"] = f"{link.params.delay_ms}ms"
                if link.params.loss_pct:
                    opts["loss"] = link.params.loss_pct
            topo.addLink(link.a, link.b, port1=p1, port2=p2, **opts)
        return topo

    def _host_class(self):
        from mininet.node import Host

        manifest = self.manifest

        class ManifestHost(Host):
            """A Mininet host whose shell PID goes into the manifest as soon as it exists."""

            def startShell(self, *args, **kwargs):
                super().startShell(*args, **kwargs)
                manifest.process(self.pid, ["mininet-host", self.name], "host")

        return ManifestHost

    def _root_interfaces(self) -> list[str]:
        """Interfaces this network puts in the root namespace: the switch ends of links."""
        hosts = {h.name for h in self.graph.hosts}
        names = []
        for (a, b), (pa, pb) in port_plan(self.graph).items():
            for node, port in ((a, pa), (b, pb)):
                if node not in hosts:
                    names.append(f"{node}-eth{port}")
        return names

    def _record_planned(self) -> None:
        for s in self.graph.switches:
            self.manifest.created("bridge", s.name)
        for ifname in self._root_interfaces():
            self.manifest.created("interface", ifname)

    def _offloads_off(self) -> None:
        disable_offloads_root(self._root_interfaces())
        for host in self.net.hosts:
            host.cmd("; ".join(offload_off_command(i.name) for i in host.intfList() if i.name != "lo"))

    def _remove_leftovers(self) -> None:
        """Delete whatever Mininet did not (after a failed start), then mark all released."""
        existing = ovs.existing_bridges()
        for s in self.graph.switches:
            if s.name in existing:
                ovs.delete_bridge(s.name)
            self.manifest.released("bridge", s.name)
        for ifname in self._root_interfaces():
            if Path(f"/sys/class/net/{ifname}").exists():
                subprocess.run(["ip", "link", "del", ifname], capture_output=True)
            self.manifest.released("interface", ifname)
        for rec in self.manifest.outstanding():
            if rec["kind"] == "process" and rec.get("role") == "host":
                kill_recorded(int(rec["name"]), rec.get("start"))
                self.manifest.released("process", rec["name"])
