"""Mininet's cluster edition (mininet.examples.cluster) with sdnbench's safeguards, as small subclasses.

- Node shells reach their worker through sdnbench's ssh options (Worker.ssh: no agent forwarding, BatchMode,
  one shared master connection) instead of `sudo -E -u USER ssh -o ForwardAgent=yes`, and without sudo when
  the worker's user is root.
- The cluster edition registers `ClusterCleanup` (`mn -c` on every worker over ssh: kills by name, deletes
  every OVS bridge) as a Mininet cleanup callback for each remote node; it is taken off again at once.
- Links between workers are VXLAN tunnels (`VxlanLink`, the GRE link's subclass: kernels without the GRE
  module have VXLAN), created without first deleting an interface of the same name (the GRE link does).
- `PlannedCluster` builds without the stock constructor's precheck (which calls sys.exit on failure) and
  without creating ~/.ssh/mn; nodes go where sdnbench's placement says, through the cluster edition's own
  Placer seam.
Imports Mininet: loaded only when a cluster network starts.
"""

from __future__ import annotations

import shlex
from typing import Callable

from mininet.clean import Cleanup
from mininet.examples.cluster import (ClusterCleanup, MininetCluster, Placer, RemoteGRELink, RemoteHost,
                                      RemoteOVSSwitch)
from mininet.net import Mininet

from ..offload import offload_off_command
from .worker import Worker

#: UDP port of the VXLAN tunnels (IANA's).
VXLAN_PORT = 4789
#: MTU inside tunnels: 1500 less VXLAN's 50 bytes of outer headers.
TUNNEL_MTU = 1450


def disarm_cluster_cleanup() -> None:
    """Take the cluster edition's `mn -c`-on-every-worker callback off Mininet's cleanup, and forget its servers."""
    Cleanup.callbacks[:] = [cb for cb in Cleanup.callbacks if getattr(cb, "__func__", None)
                            is not ClusterCleanup.cleanup.__func__]
    ClusterCleanup.serveruser.clear()


class OwnedRemote:
    """Mix-in before the cluster edition's RemoteMixin: sdnbench's ssh, no ClusterCleanup, every shell recorded."""

    def __init__(self, name, worker: Worker = None, recorder: Callable = None, **params):
        for key in ("server", "serverIP", "user"):
            params.pop(key, None)
        self.worker, self.recorder = worker, recorder
        try:
            super().__init__(name, server=worker.name, serverIP=worker.address, user=worker.user, **params)
        finally:
            disarm_cluster_cleanup()

    def startShell(self, *args, **kwargs):
        """The node's shell on its worker through sdnbench's ssh, recorded once its remote PID is known."""
        self.sshcmd = self.worker.ssh(tty=True)
        super().startShell(*args, **kwargs)
        if self.recorder:
            self.recorder(self)

    def _popen(self, cmd, sudo=True, tt=True, **params):
        # ssh joins its arguments with spaces for the worker's shell, which splits them again: quoted, an
        # argument with spaces or quotes (e.g. `sh -c SCRIPT`, the process gate of procs.OwnedProcess)
        # arrives as one.
        if isinstance(cmd, list) and self.isRemote:
            cmd = [shlex.quote(str(arg)) for arg in cmd]
        # A root login needs no sudo (and a worker may have none); other users need passwordless sudo.
        return super()._popen(cmd, sudo=sudo and self.worker.user != "root", tt=tt, **params)

    def remote_start_time(self) -> int:
        """Start time (clock ticks) of the node's shell on its worker, recorded with its PID."""
        return int(self.cmd("sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20").strip())

    def offloads_off(self) -> None:
        """Checksum and segmentation offloads off on every interface of the node (TCP stalls otherwise)."""
        names = [i.name for i in self.intfList() if i.name != "lo"]
        if names:
            self.cmd("; ".join(offload_off_command(n) for n in names))


class ClusterHost(OwnedRemote, RemoteHost):
    """A host in its own network namespace on a worker."""


class ClusterSwitch(OwnedRemote, RemoteOVSSwitch):
    """An Open vSwitch bridge on a worker's own ovs-vswitchd."""


class VxlanLink(RemoteGRELink):
    """The GRE link with VXLAN tunnels between workers (one VNI per link) and no deletion by name."""

    def __init__(self, node1, node2, vni: int | None = None, **kwargs):
        self.vni = vni
        super().__init__(node1, node2, **kwargs)

    def makeTunnel(self, node1, node2, intfname1, intfname2, addr1=None, addr2=None):
        """One VXLAN interface on each worker, addressed to the other, moved into its node."""
        assert node1.server != node2.server and self.vni is not None
        for node, peer, name, addr in ((node1, node2, intfname1, addr1), (node2, node1, intfname2, addr2)):
            steps = [f"ip link add name {name} type vxlan id {self.vni} local {node.serverIP} "
                     f"remote {peer.serverIP} dstport {VXLAN_PORT} ttl 64"]
            if addr:
                steps.append(f"ip link set dev {name} address {addr}")
            steps.append(f"ip link set dev {name} mtu {TUNNEL_MTU} up")
            for step in steps:
                out = node.rcmd(step).strip()
                if out:
                    raise RuntimeError(f"worker {node.server}: {step}: {out}")
            self.moveIntf(name, node)


def planned_placer(where: dict[str, str]) -> type:
    """A cluster-edition Placer that puts each node where sdnbench's placement did."""

    class PlannedPlacer(Placer):
        """Placement decided beforehand (sdnbench.emulation.cluster.placement)."""

        def place(self, node):
            return where[node]

    return PlannedPlacer


class PlannedCluster(MininetCluster):
    """MininetCluster without its precheck (sys.exit on failure) and ~/.ssh/mn; sdnbench checks workers itself."""

    def __init__(self, workers: dict[str, Worker], where: dict[str, str], **params):
        self.servers = list(workers)
        self.serverIP = {name: w.address for name, w in workers.items()}
        self.user = None
        self.connections = {}
        self.placement = planned_placer(where)
        self.cdir = None
        Mininet.__init__(self, **params)
