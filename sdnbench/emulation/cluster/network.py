"""A network spread over workers (experimental): EmulatedNetwork's interface over Mininet's cluster edition.

Before anything exists on a worker, its bridges and interfaces are in the run manifest; each node's shell
is recorded (its local ssh client, and its PID and start time on the worker) as soon as it runs. stop()
lets Mininet stop the network, then removes over ssh whatever of the recorded resources still exists, by
PID and start time or by the recorded name, and nothing else. One ssh master per worker carries every
command (one login each).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from ...errors import CapabilityError, ControllerError
from ...manifest import Manifest
from ...procs import OwnedProcess, kill_recorded, wait_for
from ...topology.graph import TopologyGraph
from .. import ovs
from ..hosts import RecordedHost
from ..lock import NetworkLock
from ..network import port_plan, switch_ports
from .placement import crossing, place
from .worker import REMOTE_KINDS, Worker, parse_probe, probe_script, record_name, removal_script

_PROTOCOLS = {"1.0": "OpenFlow10", "1.3": "OpenFlow13"}


def head_address(towards: str) -> str:
    """This machine's source address on its route to `towards` (what a worker reaches it at)."""
    out = subprocess.run(["ip", "-o", "route", "get", towards], capture_output=True, text=True).stdout.split()
    if "src" not in out:
        raise CapabilityError(f"no route from this machine to worker address {towards}")
    return out[out.index("src") + 1]


def controller_target(target: str, address: str) -> str:
    """'tcp:127.0.0.1:6653' with a loopback or unspecified host replaced by an address the workers reach."""
    proto, host, port = target.split(":") if target.count(":") == 2 else (target, "", "")
    if host.startswith("127.") or host in ("0.0.0.0", "localhost"):
        return f"{proto}:{address}:{port}"
    return target


class ClusterNetwork:
    """Build, start, connect and stop one network whose switches (and their hosts) live on several workers."""

    def __init__(self, graph: TopologyGraph, manifest: Manifest, cluster: dict, datapath: str = "auto",
                 openflow: str = "1.3", fail_mode: str = "secure", lock: NetworkLock | None | bool = None):
        """cluster: the experiment's cluster section; lock as for EmulatedNetwork (it guards this machine's
        controller ports; workers run one sdnbench network at a time, which nothing here can lock)."""
        self.graph, self.manifest, self.cluster = graph, manifest, cluster
        self.workers = {w["name"]: Worker(w["name"], w["address"], w["user"] or cluster["user"],
                                          cluster["ssh_config"]) for w in cluster["workers"]}
        self.where = place(graph, list(self.workers), cluster["placement"], cluster["switches"])
        self.crossing = crossing(graph, self.where)
        self.asked_datapath, self.openflow, self.fail_mode = datapath, openflow, fail_mode
        self.datapath = "user" if datapath == "auto" else datapath   # auto: kernel once every worker has it
        self.lock = NetworkLock() if lock is None else (lock or None)
        self.net = None
        self.hosts: dict[str, RecordedHost] = {}
        self.masters: dict[str, OwnedProcess] = {}
        self.probes: dict[str, dict] = {}
        self.target: str | None = None
        self.build_s: float | None = None
        self._socket_dir: str | None = None

    # -- what it is --------------------------------------------------------
    def switches_on(self, worker: str) -> list[str]:
        """The switches placed on a worker."""
        return [s.name for s in self.graph.switches if self.where[s.name] == worker]

    def link_window(self):
        """VXLAN tunnels and veth pairs measure nothing of themselves: an empty window."""
        from ..links.base import LinkWindow

        return LinkWindow()

    def switch_availability(self):
        """Open vSwitch on the workers: probed over ssh when the network starts (start() refuses a worker
        without it), so nothing to check here."""
        from ..capabilities import Capability

        return Capability("openvswitch", True, "on the cluster's workers (probed at start)")

    def describe(self) -> dict:
        """Switch kind, datapath, tunnels, and the cluster: workers, placement, clock sync, and whether every
        worker runs on this machine's kernel (the namespace harness: functional results only)."""
        here = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        boots = {p["boot_id"] for p in self.probes.values()}
        return {"switch": "ovs", "datapath": self.datapath, "links": "vxlan",
                "cluster": {"workers": {n: w.address for n, w in self.workers.items()},
                            "placement": {s.name: self.where[s.name] for s in self.graph.switches},
                            "placement_rule": self.cluster["placement"], "cross_links": len(self.crossing),
                            "clock_sync": self.cluster["clock_sync"]},
                # None until the workers were probed (start).
                "functional_only": (boots == {here}) if len(self.probes) == len(self.workers) else None}

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> None:
        """Reach every worker, refuse leftovers, build and start the network over the cluster edition."""
        shaped = [f"{link.a}-{link.b}" for link in self.graph.links if link.params.bw_mbps or link.params.needs_netem()]
        if shaped:
            raise CapabilityError(f"links shaped across a cluster are not supported yet: {', '.join(shaped[:5])}")
        if self.lock:
            self.lock.acquire()
        try:
            t0 = time.monotonic()
            self._start()
            self.build_s = time.monotonic() - t0
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        from mininet.log import setLogLevel

        from .nodes import ClusterHost, ClusterSwitch, PlannedCluster, VxlanLink

        setLogLevel("error")
        self._open_masters()
        self._probe()
        self._record_planned()
        node = {"recorder": self._record_node}
        self.net = PlannedCluster(self.workers, self.where, topo=self._mininet_topo(),
                                  switch=partial(ClusterSwitch, datapath=self.datapath, failMode=self.fail_mode,
                                                 protocols=_PROTOCOLS[self.openflow], reconnectms=1000, **node),
                                  host=partial(ClusterHost, **node), link=VxlanLink, controller=None,
                                  autoSetMacs=False, autoStaticArp=False, build=False)
        self.net.build()
        self.net.start()
        if self.datapath == "user":
            for n in (*self.net.switches, *self.net.hosts):
                n.offloads_off()
        self.hosts = {h.name: RecordedHost(h, self.manifest) for h in self.net.hosts}

    def attach_controller(self, target: str, timeout_s: float = 60.0) -> None:
        """Point every switch at target, its address rewritten to one the workers reach; wait for all."""
        first = next(iter(self.workers.values())).address
        self.target = controller_target(target, self.cluster["controller_address"] or head_address(first))
        for name, worker in self.workers.items():
            ovs.set_controllers(self.switches_on(name), self.target, self.openflow, self.fail_mode, run=worker.vsctl)
        status: dict[str, set[str]] = {}

        def all_connected() -> bool:
            status.clear()
            status.update(self.connection_status())
            return all(status[w] == set(self.switches_on(w)) for w in self.workers)

        if not wait_for(all_connected, timeout_s, 0.2):
            missing = [f"{s} on {w}" for w in self.workers for s in self.switches_on(w) if s not in status.get(w, ())]
            raise ControllerError(f"{len(missing)} switches did not connect to {self.target} within "
                                  f"{timeout_s:.0f} s: {', '.join(missing[:10])}")

    def connection_status(self) -> dict[str, set[str]]:
        """worker -> its switches whose controller session is up, read from that worker's Open vSwitch."""
        return {name: ovs.connected_bridges(self.switches_on(name), run=w.vsctl) for name, w in self.workers.items()}

    def connected_switches(self) -> set[str]:
        """Switches whose controller session is up now."""
        return set().union(*self.connection_status().values())

    def stop(self) -> None:
        """Stop the network, then remove by record whatever of it remains on each worker; safe to call twice."""
        try:
            for host in self.hosts.values():
                host.reap()
            self.hosts = {}
            if self.net is not None:
                try:
                    self.net.stop()
                except Exception as exc:   # a half-built network: the records below still remove it all
                    print(f"sdnbench: stopping the cluster network: {exc}", file=sys.stderr)
                self.net = None
            self._remove_recorded()
        finally:
            for master in self.masters.values():
                master.stop(grace_s=3.0)
            self.masters = {}
            self.workers = {n: w.with_master(None) for n, w in self.workers.items()}
            if self._socket_dir:
                shutil.rmtree(self._socket_dir, ignore_errors=True)
                self._socket_dir = None
            if self.lock:
                self.lock.release()

    # -- checks ------------------------------------------------------------
    def reachability(self, pairs: list[tuple[str, str]], timeout_s: float = 20.0) -> list[tuple[str, str]]:
        """Ping each (src, dst) until it answers or timeout_s passes; every source pings its destinations at
        once from its own shell (no ssh login per ping). Returns the pairs that never answered."""
        pending = list(pairs)
        deadline = time.monotonic() + timeout_s
        nodes = {h.name: h for h in self.net.hosts}
        while pending and time.monotonic() < deadline:
            by_src: dict[str, list[str]] = {}
            for src, dst in pending:
                by_src.setdefault(src, []).append(dst)
            for src, dsts in by_src.items():
                ips = " ".join(nodes[d].IP() for d in dsts)
                # In a subshell: the node's interactive shell would print job notices for each ping.
                nodes[src].sendCmd(f"(for ip in {ips}; do (ping -c1 -W1 -n -q $ip >/dev/null 2>&1 || echo miss $ip) & "
                                   f"done; wait)")
            missed = {src: nodes[src].waitOutput().split() for src in by_src}
            ip_of = {n: h.IP() for n, h in nodes.items()}
            pending = [(s, d) for s, d in pending if ip_of[d] in missed[s]]
            if pending:
                time.sleep(0.2)
        return pending

    def ports(self) -> dict[int, list[int]]:
        """dpid -> port numbers."""
        return switch_ports(self.graph)

    # -- internals ---------------------------------------------------------
    def _open_masters(self) -> None:
        """One ssh master connection per worker (recorded like every process), shared by all its commands."""
        self._socket_dir = tempfile.mkdtemp(prefix="sdnbench-ssh-")
        for name, worker in self.workers.items():
            path = f"{self._socket_dir}/{name[:40]}"
            master = OwnedProcess.spawn(["ssh", *worker.ssh_options(master=True), "-o", f"ControlPath={path}",
                                         worker.dest], "ssh-master", self.manifest,
                                        stdout=Path(self._socket_dir) / f"{name[:40]}.log")
            self.masters[name] = master
            if not wait_for(lambda: Path(path).exists() or not master.alive(), 20.0, 0.05) or not master.alive():
                raise CapabilityError(f"worker {name}: ssh {worker.dest} failed: {master.stderr_tail()}")
            self.workers[name] = worker.with_master(path)

    def _interfaces_on(self) -> dict[str, list[str]]:
        """worker -> the link interfaces created there (switch ends, tunnels, and host ends before they move)."""
        out: dict[str, list[str]] = {w: [] for w in self.workers}
        for (a, b), (pa, pb) in port_plan(self.graph).items():
            for node, port in ((a, pa), (b, pb)):
                out[self.where[node]].append(f"{node}-eth{port}")
        return out

    def _probe(self) -> None:
        """Each worker answers, has mnexec, ethtool and Open vSwitch, and holds none of our names yet."""
        interfaces = self._interfaces_on()
        for name, worker in self.workers.items():
            bridges = self.switches_on(name)
            found = parse_probe(worker.check(probe_script(bridges, interfaces[name]), "probe (mnexec, ethtool, "
                                                                                      "ovs-vsctl)"))
            taken = found["bridges"] + found["interfaces"]
            if taken:
                raise CapabilityError(f"worker {name} already has {', '.join(taken[:8])} (a killed run's? "
                                      f"`sdnbench clean` on its run directory removes what a run recorded)")
            self.probes[name] = found
        if self.asked_datapath == "auto" and all(p["kernel_datapath"] for p in self.probes.values()):
            self.datapath = "kernel"

    def _record_planned(self) -> None:
        """Bridges and interfaces each worker will get, in the manifest before they exist."""
        for name, ifnames in self._interfaces_on().items():
            worker = self.workers[name].record()
            for bridge in self.switches_on(name):
                self.manifest.created("remote_bridge", record_name(name, bridge), **worker)
            for ifname in ifnames:
                self.manifest.created("remote_interface", record_name(name, ifname), **worker)

    def _record_node(self, node) -> None:
        """A node's shell runs: its local ssh client and its shell on the worker go into the manifest."""
        self.manifest.process(node.shell.pid, node.worker.ssh(tty=True)[:1] + [node.worker.dest], "ssh")
        self.manifest.created("remote_process", record_name(node.worker.name, node.pid), pid=node.pid,
                              start=node.remote_start_time(), role=f"shell of {node.name}", **node.worker.record())

    def _remove_recorded(self) -> None:
        """Remove what the manifest still holds on each worker, then the local ssh clients of node shells."""
        held = self.manifest.outstanding()
        for name in {r["worker"] for r in held if r["kind"] in REMOTE_KINDS}:
            recs = [r for r in held if r["kind"] in REMOTE_KINDS and r["worker"] == name]
            worker = self.workers.get(name) or Worker.from_record(recs[0])
            try:
                worker.check(removal_script(recs), "removing the run's processes, bridges and interfaces", 120)
            except (CapabilityError, subprocess.SubprocessError) as exc:
                print(f"sdnbench: {exc}; `sdnbench clean` will try again", file=sys.stderr)
                continue
            for rec in recs:
                self.manifest.released(rec["kind"], rec["name"])
        for rec in held:
            if rec["kind"] == "process" and rec.get("role") == "ssh":
                kill_recorded(int(rec["name"]), rec.get("start"))
                self.manifest.released("process", rec["name"])

    def _mininet_topo(self):
        from mininet.topo import Topo

        topo = Topo()
        for s in self.graph.switches:
            topo.addSwitch(s.name, dpid=f"{s.dpid:016x}", server=self.where[s.name], worker=self.workers[self.where[s.name]])
        for h in self.graph.hosts:
            topo.addHost(h.name, ip=f"{h.ip}/8", mac=h.mac, server=self.where[h.name],
                         worker=self.workers[self.where[h.name]])
        plan = port_plan(self.graph)
        vni = {pair: 1000 + i for i, pair in enumerate(self.crossing)}
        for link in self.graph.links:
            p1, p2 = plan[(link.a, link.b)]
            opts = {"vni": vni[(link.a, link.b)]} if (link.a, link.b) in vni else {}
            topo.addLink(link.a, link.b, port1=p1, port2=p2, **opts)
        return topo
