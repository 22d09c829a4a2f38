"""Switch graph, host locations and routing for sdnbench's shortest-path app: pure logic, no OpenFlow.

The os-ken app (l2_shortest_path.py) feeds it the links os-ken's LLDP
discovery reports and the PACKET_INs it receives; this module decides which
flows to install or where to flood. Kept apart so it is unit-tested without a
controller.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from l2_table import is_group

#: A directed link as os-ken reports it: (src dpid, src port, dst dpid, dst port).
Link = tuple[int, int, int, int]


class SwitchGraph:
    """The switches and the links discovered between them."""

    def __init__(self) -> None:
        self._links: set[Link] = set()
        self._adj: dict[int, dict[int, int]] = {}     # dpid -> {neighbour dpid: local port}
        self._link_ports: dict[int, set[int]] = {}    # dpid -> ports that carry a link
        self._tree: dict[int, set[int]] | None = None  # dpid -> spanning-tree ports (lazy)
        self._paths: dict[tuple[int, int], list[int] | None] = {}

    def add_link(self, src: int, src_port: int, dst: int, dst_port: int) -> bool:
        """Record a discovered link; True when it is new."""
        if (src, src_port, dst, dst_port) in self._links:
            return False
        self._links.add((src, src_port, dst, dst_port))
        self._rebuild()
        return True

    def remove_link(self, src: int, src_port: int, dst: int, dst_port: int) -> bool:
        """Forget a link (timed out or port down); True when it was known."""
        if (src, src_port, dst, dst_port) not in self._links:
            return False
        self._links.discard((src, src_port, dst, dst_port))
        self._rebuild()
        return True

    def remove_switch(self, dpid: int) -> None:
        """Forget every link of a switch that disconnected."""
        self._links = {ln for ln in self._links if dpid not in (ln[0], ln[2])}
        self._rebuild()

    def _rebuild(self) -> None:
        # Either direction of a link is enough to know both its ports. Sorted,
        # so parallel links always resolve to the same (lowest) port.
        self._adj, self._link_ports = {}, {}
        for src, sp, dst, dp in sorted(self._links):
            self._adj.setdefault(src, {}).setdefault(dst, sp)
            self._adj.setdefault(dst, {}).setdefault(src, dp)
            self._link_ports.setdefault(src, set()).add(sp)
            self._link_ports.setdefault(dst, set()).add(dp)
        self._tree, self._paths = None, {}

    @property
    def link_count(self) -> int:
        """Undirected links (os-ken reports each direction separately)."""
        return len({frozenset(((s, sp), (d, dp))) for s, sp, d, dp in self._links})

    @property
    def switch_count(self) -> int:
        """Switches with at least one discovered link."""
        return len(self._adj)

    def is_link_port(self, dpid: int, port: int) -> bool:
        """True when a discovered link leaves dpid through port."""
        return port in self._link_ports.get(dpid, ())

    def port_to(self, dpid: int, neighbour: int) -> int:
        """The port of dpid that leads to an adjacent switch."""
        return self._adj[dpid][neighbour]

    def path(self, src: int, dst: int) -> list[int] | None:
        """Fewest-hop switch sequence src..dst (BFS, lowest dpid first on ties), or None."""
        key = (src, dst)
        if key not in self._paths:
            prev: dict[int, int | None] = {src: None}
            queue = deque([src])
            while queue and dst not in prev:
                s = queue.popleft()
                for n in sorted(self._adj.get(s, {})):
                    if n not in prev:
                        prev[n] = s
                        queue.append(n)
            if dst not in prev:
                self._paths[key] = None
            else:
                hops, at = [], dst
                while at is not None:
                    hops.append(at)
                    at = prev[at]
                self._paths[key] = hops[::-1]
        return self._paths[key]

    def tree_ports(self, dpid: int) -> set[int]:
        """Ports of dpid on a BFS spanning tree of its component, rooted at the lowest dpid."""
        if self._tree is None:
            self._tree = {}
            seen: set[int] = set()
            for root in sorted(self._adj):
                if root in seen:
                    continue
                seen.add(root)
                queue = deque([root])
                while queue:
                    s = queue.popleft()
                    for n in sorted(self._adj[s]):
                        if n not in seen:
                            seen.add(n)
                            queue.append(n)
                            self._tree.setdefault(s, set()).add(self._adj[s][n])
                            self._tree.setdefault(n, set()).add(self._adj[n][s])
        return self._tree.get(dpid, set())

    def flood_ports(self, dpid: int, in_port: int, ports) -> list[int]:
        """Where a broadcast or unknown-destination frame goes: tree ports and edge ports
        (no discovered link), never back in. Nothing when it came in over a link off
        the tree: a copy of it travels the tree already, and forwarding it would loop."""
        tree = self.tree_ports(dpid)
        if self.is_link_port(dpid, in_port) and in_port not in tree:
            return []
        return sorted(p for p in ports if p != in_port and (p in tree or not self.is_link_port(dpid, p)))


class HostTable:
    """Where each host MAC was seen: (dpid, edge port)."""

    def __init__(self) -> None:
        self._where: dict[str, tuple[int, int]] = {}

    def learn(self, mac: str, dpid: int, port: int) -> None:
        self._where[mac] = (dpid, port)

    def where(self, mac: str) -> tuple[int, int] | None:
        return self._where.get(mac)

    def forget(self, dpid: int, port: int | None = None) -> None:
        """Forget hosts behind a port (it turned out to be a link) or a whole switch."""
        self._where = {m: loc for m, loc in self._where.items()
                       if not (loc[0] == dpid and (port is None or loc[1] == port))}

    def __len__(self) -> int:
        return len(self._where)


@dataclass(frozen=True)
class Hop:
    """One switch of a path: the flow to install there."""

    dpid: int
    in_port: int
    out_port: int


@dataclass(frozen=True)
class Route:
    """What to do with one PACKET_IN: install flows along hops (ingress first), or
    flood out of these ports; both empty means drop."""

    hops: tuple[Hop, ...] = ()
    flood: tuple[int, ...] = ()


def route(graph: SwitchGraph, hosts: HostTable, dpid: int, in_port: int, src: str, dst: str,
          ports) -> Route:
    """Learn src when it arrived on an edge port, then route dst along the shortest path or flood."""
    if not is_group(src) and not graph.is_link_port(dpid, in_port):
        hosts.learn(src, dpid, in_port)
    loc = None if is_group(dst) else hosts.where(dst)
    path = graph.path(dpid, loc[0]) if loc is not None else None
    if loc is None or path is None:
        return Route(flood=tuple(graph.flood_ports(dpid, in_port, ports)))
    if loc == (dpid, in_port):
        return Route()  # the destination is behind the port the frame came from
    hops = []
    for i, s in enumerate(path):
        inp = in_port if i == 0 else graph.port_to(s, path[i - 1])
        out = loc[1] if i == len(path) - 1 else graph.port_to(s, path[i + 1])
        hops.append(Hop(s, inp, out))
    return Route(hops=tuple(hops))
