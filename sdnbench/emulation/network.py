"""A running Mininet network built from a TopologyGraph, with a chosen switch kind and link kind.

The switch kind (switches/: Open vSwitch, ...) and the link realisation
(links/: veth + tc, ...) come from their registries; this module builds the
Mininet network around them, attaches the controller and waits for every
switch. Owns exactly what it creates: it writes each bridge, interface and host
shell into the run manifest before creating it, so `sdnbench clean` can remove
them after a crash, and it removes them itself on stop().
"""

from __future__ import annotations

import random
import subprocess
import time
from pathlib import Path

from ..errors import CapabilityError, ControllerError
from ..manifest import Manifest
from ..media import MEDIA
from ..procs import kill_recorded, wait_for
from ..topology.graph import TopologyGraph
from .hosts import RecordedHost
from .links import LINKS, resolve
from .lock import NetworkLock
from .switches import SWITCHES


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


def delete_interfaces(names: list[str]) -> None:
    """Delete these root-namespace interfaces in one kernel operation: tag them with a link group no
    interface is in, then delete that group. The kernel unregisters them together (one RCU grace
    period), where `ip link del` waits one per interface: 100 veth pairs in 0.06 s instead of 1.6 s."""
    if not names:
        return
    group = _unused_link_group()
    tag = "".join(f"link set dev {n} group {group}\n" for n in names)
    subprocess.run(["ip", "-force", "-batch", "-"], input=tag, capture_output=True, text=True,
                   timeout=max(60, len(names) / 20))
    subprocess.run(["ip", "link", "del", "group", str(group)], capture_output=True, timeout=max(60, len(names) / 20))


def _unused_link_group() -> int:
    """A link group number no interface of the root namespace is in (never 0, the default group)."""
    while True:
        group = random.randrange(1 << 20, 1 << 31)
        out = subprocess.run(["ip", "-o", "link", "show", "group", str(group)], capture_output=True, text=True)
        if out.returncode == 0 and not out.stdout.strip():
            return group


class EmulatedNetwork:
    """Build, start, connect and stop one network."""

    def __init__(self, graph: TopologyGraph, manifest: Manifest, datapath: str = "auto",
                 openflow: str = "1.3", fail_mode: str = "secure", lock: NetworkLock | None | bool = None,
                 switch: str = "ovs", links: str = "auto"):
        """switch, links: registered kinds (ConfigError naming the choices otherwise); links "auto" picks
        veth_tc where it can realise every link, else the userspace emulator (links.resolve).
        lock: None takes the machine's network lock for the network's lifetime; False means
        the caller already holds it (a campaign holds it from its first controller to its end)."""
        self.graph, self.manifest = graph, manifest
        self.switch = SWITCHES.get(switch)(graph, manifest, openflow, fail_mode, datapath)
        self.links = LINKS.get(resolve(links, graph.links))(graph, manifest)
        # Links the realisation leaves plain may be carried by the switches (OVS patch ports).
        self.carried = self.switch.plain_links([link for link in graph.links if self.links.plain(link)])
        self.openflow, self.fail_mode = openflow, fail_mode
        self.lock = NetworkLock() if lock is None else (lock or None)
        self.net = None
        self.hosts: dict[str, RecordedHost] = {}
        self._owns_resources = False   # set once our bridges/interfaces are in the manifest

    @property
    def datapath(self) -> str:
        """The switches' forwarding path in one word (OVS: 'kernel' or 'user')."""
        return self.switch.datapath

    def link_window(self):
        """What the link realisation measures of itself over one trial (a LinkWindow context manager)."""
        return self.links.window()

    def switch_availability(self):
        """Whether this network's switch kind can run here (a Capability, with the fix when it cannot)."""
        return self.switch.availability()

    def describe(self) -> dict:
        """Switch kind, datapath, link realisation and their versions, and the medium, for the trial environment."""
        return {**self.switch.describe(), **self.links.describe(), **MEDIA[self.graph.medium].describe(self.graph)}

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> None:
        """Create and start the network (switches forward nothing until a controller or standalone)."""
        for cap in (self.links.availability(self.graph.links), self.switch.availability()):
            if not cap.ok:
                raise CapabilityError(f"{cap.detail}; fix: {cap.fix}" if cap.fix else cap.detail)
        if self.lock:
            self.lock.acquire()
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        from mininet.log import setLogLevel

        from .veth_batch import BatchLinkMininet

        setLogLevel("error")
        self.switch.prepare()
        for ifname in self._root_interfaces():
            self.manifest.created("interface", ifname)
        self._owns_resources = True
        self.net = BatchLinkMininet(topo=self._mininet_topo(), switch=self.switch.mininet_switch(),
                                    host=self._host_class(), controller=None, autoSetMacs=False,
                                    autoStaticArp=False, build=True)
        self.net.start()
        self.switch.started(self.net)
        self.links.started(self.net)
        self.hosts = {h.name: RecordedHost(h, self.manifest) for h in self.net.hosts}

    def attach_controller(self, target: str, timeout_s: float = 60.0) -> None:
        """Point all switches at target ('tcp:IP:PORT'); wait until every one is connected."""
        self.switch.attach(target)
        self.wait_connected(target, timeout_s)

    def switch_endpoints(self) -> dict[str, dict]:
        """switch -> {"address": where it listens, "device_id": ...}, for a controller that dials the
        switches (P4Runtime); empty for switches that dial their controller."""
        ids = self.switch.device_ids()
        return {name: {"address": address, "device_id": ids.get(name)}
                for name, address in self.switch.endpoints().items()}

    def wait_connected(self, target: str, timeout_s: float = 60.0) -> None:
        """Return once every switch's controller session is up; ControllerError naming the missing ones."""
        names = [s.name for s in self.graph.switches]
        connected: set[str] = set()

        def all_connected() -> bool:
            connected.clear()
            connected.update(self.switch.connected())
            return len(connected) == len(names)

        if not wait_for(all_connected, timeout_s, 0.1):
            missing = sorted(set(names) - connected)
            raise ControllerError(f"{len(missing)} of {len(names)} switches did not connect to {target} "
                                  f"within {timeout_s:.0f} s: {', '.join(missing[:10])}")

    def stop(self) -> None:
        """Stop everything this network created; safe to call twice."""
        try:
            for host in self.hosts.values():
                host.reap()
            if self.net is not None:
                try:
                    self.links.stopping(self.net)
                finally:
                    try:
                        self._remove_in_bulk()
                    except (CapabilityError, subprocess.SubprocessError):
                        pass   # only quicker: Mininet's stop and _remove_leftovers remove whatever it left
                    finally:
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
            # Up to 3 s per echo: the first one through a long chain of learning switches may need more
            # than 1 s (ARP flooded hop by hop), and waiting for it is quicker than sending another.
            wait = str(max(1, min(3, int(deadline - time.monotonic()))))
            procs = [(p, self.hosts[p[0]].popen(["ping", "-c1", "-W", wait, "-n", "-q", self.hosts[p[1]].IP()]))
                     for p in pending]
            pending = [p for p, proc in procs if proc.wait() != 0]
            if pending:
                time.sleep(0.2)
        return pending

    def connected_switches(self) -> set[str]:
        """Switches whose controller session is up now."""
        return self.switch.connected()

    def disconnect_switches(self, names: list[str]) -> None:
        """Cut these switches off their controller (fault injection)."""
        self.switch.detach(names)

    def reconnect_switches(self, names: list[str]) -> None:
        """Give switches cut off by disconnect_switches() their controller back."""
        self.switch.reattach(names)

    def set_link(self, a: str, b: str, up: bool) -> None:
        """Take the link between nodes a and b down or up (its switch-side interfaces' admin state)."""
        plan = port_plan(self.graph)
        ports = plan.get((a, b)) or tuple(reversed(plan.get((b, a)) or ()))
        if not ports:
            raise ValueError(f"no link between {a} and {b}")
        hosts = {h.name for h in self.graph.hosts}
        for node, port in zip((a, b), ports):
            if node not in hosts:
                self.switch.set_port(node, port, up)

    def ports(self) -> dict[int, list[int]]:
        """dpid -> port numbers."""
        return switch_ports(self.graph)

    # -- internals ---------------------------------------------------------
    def _mininet_topo(self):
        """Mininet's Topo of the graph: plain links (nothing of the link realisation's or the switches')
        are PrecreatedLinks, made in one batch with the hosts' MACs on their ends."""
        from mininet.topo import Topo

        from .veth_batch import PrecreatedLink

        topo = Topo()
        for s in self.graph.switches:
            topo.addSwitch(s.name, dpid=f"{s.dpid:016x}")
        macs = {h.name: h.mac for h in self.graph.hosts}
        for h in self.graph.hosts:
            topo.addHost(h.name, ip=f"{h.ip}/8", mac=h.mac)
        plan = port_plan(self.graph)
        for link in self.graph.links:
            p1, p2 = plan[(link.a, link.b)]
            opts = self.carried[link] if link in self.carried else self.links.options(link)
            if not opts:
                # A host's MAC on the end its address goes on (port 0); no MAC given: the kernel's.
                opts = {"cls": PrecreatedLink, "addr1": macs.get(link.a) if p1 == 0 else None,
                        "addr2": macs.get(link.b) if p2 == 0 else None}
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

            def setMAC(self, mac, intf=None):
                """Nothing to do when the interface was created with this MAC (a PrecreatedLink's end):
                Mininet's setMAC takes the interface down and up again, three shell round trips."""
                if self.intf(intf).mac == mac:
                    return ""
                return super().setMAC(mac, intf)

        return ManifestHost

    def _root_interfaces(self) -> list[str]:
        """Interfaces this network puts in the root namespace: the switch ends of links (those the
        switches carry themselves have none)."""
        hosts = {h.name for h in self.graph.hosts}
        carried = {(link.a, link.b) for link in self.carried}
        names = []
        for (a, b), (pa, pb) in port_plan(self.graph).items():
            if (a, b) in carried:
                continue
            for node, port in ((a, pa), (b, pb)):
                if node not in hosts:
                    names.append(f"{node}-eth{port}")
        return names

    def _remove_in_bulk(self) -> None:
        """Before Mininet's stop: the switches, then the root-namespace ends of plain veth links, each
        in one call; Mininet would delete every interface with a shell round trip of its own."""
        from mininet.link import Link

        from .veth_batch import PrecreatedLink

        self.switch.stopping(self.net)
        names = {n for n in self._root_interfaces() if Path(f"/sys/class/net/{n}").exists()}
        delete_interfaces(sorted(names))
        # Deleting one end of a veth pair deletes both: Mininet has nothing left to do for these links.
        self.net.links = [link for link in self.net.links if type(link) not in (Link, PrecreatedLink)
                          or not {link.intf1.name, link.intf2.name} & names]

    def _remove_leftovers(self) -> None:
        """Delete whatever Mininet did not (after a failed start), then mark all released."""
        self.switch.teardown()
        self.links.teardown()
        for ifname in self._root_interfaces():
            if Path(f"/sys/class/net/{ifname}").exists():
                subprocess.run(["ip", "link", "del", ifname], capture_output=True)
            self.manifest.released("interface", ifname)
        for rec in self.manifest.outstanding():
            if rec["kind"] == "process" and rec.get("role") == "host":
                kill_recorded(int(rec["name"]), rec.get("start"))
                self.manifest.released("process", rec["name"])
