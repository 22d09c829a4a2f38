"""Open vSwitch tuned for the userspace datapath: patch ports between switches, AF_XDP host ports.

Over veth "system" ports, ovs-vswitchd reads and writes every packet through
AF_PACKET sockets once per switch it crosses, so the userspace (netdev)
datapath, not the controller, becomes the bottleneck. This kind

- carries each unshaped switch-to-switch link as a pair of OVS patch ports
  (Mininet's OVSLink): a packet crosses a whole group of switches in one
  datapath pass. A group holds at most PATCH_GROUP switches, because OVS stops
  translating after 64 nested bridges; links between groups stay veth pairs;
- opens unshaped host-facing veths as AF_XDP ports (`afxdp`: a poll-mode
  thread pinned to the last usable core, allowed to sleep when idle), falling
  back to `system` ports with the reason, per port;
- leaves every shaped link a real veth with tc (AF_XDP's transmit path
  bypasses the qdisc that HTB shapes with);
- leaves standalone switches on a loop exactly as `ovs` builds them: they run
  RSTP, and ovs-vswitchd 3.1 aborts (at every restart, while the bridges stay
  in its database) when RSTP is on over patch ports.

Datapath ids and OpenFlow port numbers are the same as with `ovs`
(ofport_request), so controllers and Faucet's generated config see the same
switches and ports. On the kernel datapath only the patch ports apply.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections import defaultdict, deque

from .. import ovs
from .ovs import OvsSwitch

#: Most switches joined by patch ports into one datapath pass (OVS's translation depth limit is 64).
PATCH_GROUP = 32
#: Longest sleep, in microseconds, of an idle poll-mode thread: it no longer holds a core at 100 %
#: between trials, and adds at most this much delay to the first packet after a pause.
PMD_MAXSLEEP_US = 50
PORT_CHOICES = ("auto", "system", "afxdp", "afxdp-nonpmd")
LINK_CHOICES = ("auto", "patch", "veth")
_AF_XDP = 44   # socket.AF_XDP, missing from older Pythons


def patch_groups(switches: list[str], links: list) -> set:
    """The switch-to-switch links to carry as patch ports: grown breadth-first from each switch in
    turn into connected groups of at most PATCH_GROUP switches; links between groups stay veth."""
    names = set(switches)
    near: dict[str, list[str]] = defaultdict(list)
    for link in links:
        if link.a in names and link.b in names:
            near[link.a].append(link.b)
            near[link.b].append(link.a)
    group: dict[str, str] = {}
    for start in switches:
        if start in group:
            continue
        group[start], size, queue = start, 1, deque([start])
        while queue and size < PATCH_GROUP:
            for other in near[queue.popleft()]:
                if other not in group and size < PATCH_GROUP:
                    group[other], size = start, size + 1
                    queue.append(other)
    return {link for link in links if link.a in names and link.b in names and group[link.a] == group[link.b]}


def af_xdp_support() -> str | None:
    """Why AF_XDP ports cannot work here, or None when Open vSwitch and the kernel offer them."""
    if "afxdp" not in ovs.iface_types():
        return "Open vSwitch lists no afxdp interface type (built without AF_XDP)"
    try:
        socket.socket(_AF_XDP, socket.SOCK_RAW, 0).close()
    except OSError as exc:
        return f"the kernel refuses AF_XDP sockets ({exc.strerror}; CONFIG_XDP_SOCKETS)"
    return None


def _xdp_mode(ifname: str) -> str:
    """How XDP runs on an interface: 'native' (in the driver), 'generic' (after skb allocation) or 'none'."""
    out = subprocess.run(["ip", "-o", "link", "show", "dev", ifname], capture_output=True, text=True).stdout
    words = out.split()
    return "generic" if "xdpgeneric" in words else "native" if "xdp" in words else "none"


class OvsFast(OvsSwitch):
    """OvsSwitch with patch ports on unshaped switch links and AF_XDP ports on unshaped host links."""

    name = "ovs_fast"

    def __init__(self, graph, manifest, openflow="1.3", fail_mode="secure", datapath="auto",
                 ports: str = "auto", switch_links: str = "auto"):
        """ports: auto (AF_XDP with a poll-mode thread on the userspace datapath where it works, else
        system) | system | afxdp | afxdp-nonpmd; switch_links: auto/patch (unshaped ones) | veth."""
        super().__init__(graph, manifest, openflow, fail_mode, datapath)
        if ports not in PORT_CHOICES or switch_links not in LINK_CHOICES:
            raise ValueError(f"ports must be one of {PORT_CHOICES}, switch_links one of {LINK_CHOICES}")
        self.ports_choice, self.links_choice = ports, switch_links
        self.patched: set = set()
        self.peers: dict[str, str] = {}     # patch port -> its peer
        self.xdp_ports: list[str] = []      # host-facing interfaces planned as AF_XDP ports
        self.port_type = "system"
        self.fallbacks: list[str] = []      # why a part runs as today's ports, one line each
        self.pmd_cpus: list[int] = []
        self._settings: dict[str, str | None] = {}   # other_config keys we set -> their previous value
        self._planned = self._started = False

    # -- plan ---------------------------------------------------------------
    def plain_links(self, links):
        """Patch ports for unshaped switch links; unshaped host links are planned as AF_XDP ports."""
        from mininet.link import OVSLink

        from ..network import port_plan

        self.peers, self.xdp_ports, self.patched = {}, [], set()
        if self.rstp:
            self.fallbacks.append("standalone switches on a loop run RSTP, which aborts ovs-vswitchd 3.1 "
                                  "over patch ports: veth pairs and system ports, as with ovs")
            return {}
        switches = {s.name for s in self.graph.switches}
        if self.links_choice != "veth":
            self.patched = patch_groups([s.name for s in self.graph.switches], links)
        plan = port_plan(self.graph)
        for link in links:
            ends = [f"{node}-eth{port}" for node, port in zip((link.a, link.b), plan[(link.a, link.b)])]
            if link in self.patched:
                self.peers.update({ends[0]: ends[1], ends[1]: ends[0]})
            elif (link.a in switches) != (link.b in switches):
                self.xdp_ports.append(ends[0] if link.a in switches else ends[1])
        return {link: {"cls": OVSLink} for link in self.patched}

    def _plan_ports(self) -> None:
        """Choose the host-port type once (why not AF_XDP, when not, into fallbacks) and the
        poll-mode thread's core; describe() can then tell the plan before the network starts."""
        if self._planned:
            return
        self._planned = True
        self.port_type = self._port_type()
        if self.port_type == "afxdp":
            # A controller pinned with `cpus: N` takes the first N cores (procs.cpu_set): take the last.
            self.pmd_cpus = sorted(os.sched_getaffinity(0))[-1:]

    def _port_type(self) -> str:
        if self.ports_choice == "system" or not self.xdp_ports:
            return "system"
        if self.datapath != "user":
            self.fallbacks.append("AF_XDP ports need the userspace datapath: system ports")
            return "system"
        why = af_xdp_support()
        if why:
            self.fallbacks.append(f"{why}: system ports")
            return "system"
        if self.ports_choice == "auto" and len(os.sched_getaffinity(0)) < 2:
            self.fallbacks.append("one usable core: AF_XDP without a poll-mode thread (afxdp-nonpmd)")
            return "afxdp-nonpmd"
        return "afxdp" if self.ports_choice == "auto" else self.ports_choice

    # -- lifecycle -------------------------------------------------------------
    def mininet_switch(self):
        """Mininet's OVSSwitch that adds AF_XDP host ports with their type in the same transaction."""
        from mininet.node import OVSSwitch
        from mininet.util import specialClass

        class FastOVSSwitch(OVSSwitch):
            """An OVSSwitch whose listed interfaces get an interface type."""

            def __init__(self, name, port_types=None, **params):
                super().__init__(name, **params)
                self.port_types = port_types or {}

            def intfOpts(self, intf):
                opts = super().intfOpts(intf)
                kind = self.port_types.get(intf.name)
                if not kind:
                    return opts
                return (opts or f" -- set Interface {intf}") + f" type={kind}"

        types = {name: self.port_type for name in self.xdp_ports} if self.port_type != "system" else {}
        return specialClass(FastOVSSwitch, defaults={**self.switch_params(), "port_types": types})

    def prepare(self) -> None:
        """Refuse leftovers, record bridges; choose the port type; pin the poll-mode thread."""
        super().prepare()
        self._plan_ports()
        if self.pmd_cpus:
            self._set("pmd-cpu-mask", hex(sum(1 << c for c in self.pmd_cpus)))
            self._set("pmd-maxsleep", str(PMD_MAXSLEEP_US))

    def started(self, net) -> None:
        """Offloads off on kernel interfaces (patch ports have none); AF_XDP ports that did not open
        become system ports, each with OVS's reason."""
        super().started(net)
        self._started = True
        if self.port_type == "system":
            return
        failed = {name: row for name, row in ovs.interface_columns(self.xdp_ports, ["ofport", "error"]).items()
                  if row["error"] or row["ofport"] in (None, -1)}
        if failed:
            ovs.vsctl(*[["set", "Interface", name, "type=system"] for name in failed])
            for name, row in sorted(failed.items()):
                self.fallbacks.append(f"{name}: {self.port_type} failed ({row['error'] or 'no port'}): system port")

    def set_port(self, switch: str, port: int, up: bool) -> None:
        """A patch port has no carrier to lose: going down it is deleted (controllers see the port
        go), coming up it is added again with the same port number; other ports as with `ovs`."""
        name = f"{switch}-eth{port}"
        if name not in self.peers:
            return super().set_port(switch, port, up)
        if up:
            ovs.vsctl(["--may-exist", "add-port", switch, name], ["set", "Interface", name, "type=patch",
                      f"options:peer={self.peers[name]}", f"ofport_request={port}"])
        else:
            ovs.vsctl(["--if-exists", "del-port", switch, name])

    def teardown(self) -> None:
        """Remove bridges (their patch ports and AF_XDP sockets go with them), restore OVS settings."""
        try:
            super().teardown()
        finally:
            for key in list(self._settings):
                ovs.set_other_config(key, self._settings.pop(key))
                self.manifest.released("ovs_setting", key)

    def _set(self, key: str, value: str) -> None:
        """Set a global OVS setting, remembering (and recording for `sdnbench clean`) its old value."""
        previous = ovs.other_config(key)
        self.manifest.created("ovs_setting", key, previous=previous)
        self._settings[key] = previous
        ovs.set_other_config(key, value)

    def describe(self) -> dict:
        """Switch kind, datapath, how switch links and host ports are realised (planned, before the
        network starts), the poll-mode thread's cores, and every fallback with its reason."""
        self._plan_ports()
        switches = {s.name for s in self.graph.switches}
        core = sum(1 for link in self.graph.links if link.a in switches and link.b in switches)
        desc = {**super().describe(),
                "switch_links": f"patch {len(self.patched)}/{core}" if self.patched else "veth",
                "host_ports": self.port_type if self.xdp_ports else "system"}
        if self.port_type.startswith("afxdp") and self.xdp_ports:
            desc["xdp_mode"] = _xdp_mode(self.xdp_ports[0]) if self._started else "best-effort"
        if self.pmd_cpus:
            desc.update(pmd_cpus=",".join(map(str, self.pmd_cpus)), pmd_maxsleep_us=PMD_MAXSLEEP_US)
        if self.fallbacks:
            desc["dataplane_fallbacks"] = "; ".join(self.fallbacks)
        return desc
