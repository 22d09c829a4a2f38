"""Proactive forwarding rules computed from a topology: every host reachable, no controller in the path.

For each destination host, a shortest-path tree towards it (networkx BFS, so
ties break the same way on every run) gives each switch one output port; two
rules per switch and host follow it:

- frames to the host's MAC (IPv4, ARP replies, anything unicast) go out that port;
- ARP requests asking for the host's IP go out the same port. ARP requests
  are broadcasts, so instead of flooding them (which would loop on a topology
  with cycles and need a spanning tree) each one is steered to the one host
  that can answer it.

Pure: no controller, no network. Port numbers come from the emulation's port
plan, so the rules match the switches Mininet builds.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from ..topology.graph import TopologyGraph

#: Cookie of every forwarding rule, so a switch's dump shows which flows sdnbench programmed.
FORWARDING_COOKIE = 0x5DB0F
ETH_DST_PRIORITY = 100
ARP_PRIORITY = 110     # ARP replies match both rules; either sends them the same way
ETH_TYPE_ARP = 0x0806


@dataclass(frozen=True)
class Rule:
    """One flow: on switch dpid, frames matching (eth_dst, or ARP asking for arp_tpa) go out out_port."""

    dpid: int
    name: str                  # unique on its switch: sdnbench-eth-h3, sdnbench-arp-h3
    priority: int
    out_port: int
    eth_dst: str | None = None
    arp_tpa: str | None = None  # an IPv4 address; the rule also matches eth_type ARP
    cookie: int = FORWARDING_COOKIE  # where the API passes it on, the cookie of the FLOW_MOD


def link_graph(graph: TopologyGraph, plan: dict[tuple[str, str], tuple[int, int]]) -> nx.Graph:
    """Switches and hosts as nodes; each edge knows the port number at both of its ends."""
    g = nx.Graph()
    g.add_nodes_from(graph.node_names())
    for link in graph.links:
        pa, pb = plan[(link.a, link.b)]
        g.add_edge(link.a, link.b, ports={link.a: pa, link.b: pb})
    return g


def next_ports(graph: TopologyGraph, plan: dict[tuple[str, str], tuple[int, int]]) -> dict[str, dict[str, int]]:
    """host -> {switch: the port it sends that host's frames out of}, along shortest paths.

    Paths never cross another host. A switch that cannot reach the host gets no
    entry; ForwardingError names such hosts in forwarding_rules().
    """
    g = link_graph(graph, plan)
    host_names = {h.name for h in graph.hosts}
    switch_names = [s.name for s in graph.switches]
    out: dict[str, dict[str, int]] = {}
    for host in graph.hosts:
        view = g.subgraph([n for n in g if n not in host_names or n == host.name])
        paths = nx.single_source_shortest_path(view, host.name)
        ports = {}
        for sw in switch_names:
            path = paths.get(sw)
            if path is not None and len(path) >= 2:
                toward = path[-2]     # the path runs host ... toward, sw
                ports[sw] = g.edges[sw, toward]["ports"][sw]
        out[host.name] = ports
    return out


class ForwardingError(ValueError):
    """The topology cannot be forwarded proactively (a host no switch can reach)."""


def forwarding_rules(graph: TopologyGraph, plan: dict[tuple[str, str], tuple[int, int]]) -> list[Rule]:
    """The rules of every switch, grouped by switch in graph order, hosts in graph order."""
    ports = next_ports(graph, plan)
    lonely = [h for h, by_switch in ports.items() if not by_switch and graph.switches]
    if lonely:
        raise ForwardingError(f"hosts attached to no switch: {', '.join(lonely)}")
    rules = []
    for sw in graph.switches:
        for host in graph.hosts:
            port = ports[host.name].get(sw.name)
            if port is None:
                continue   # another island of the topology: nothing to send there
            rules.append(Rule(sw.dpid, f"sdnbench-eth-{host.name}", ETH_DST_PRIORITY, port, eth_dst=host.mac))
            rules.append(Rule(sw.dpid, f"sdnbench-arp-{host.name}", ARP_PRIORITY, port, arp_tpa=host.ip))
    return rules


def by_switch(rules: list[Rule]) -> dict[int, list[Rule]]:
    """Rules grouped by dpid, keeping their order."""
    out: dict[int, list[Rule]] = {}
    for r in rules:
        out.setdefault(r.dpid, []).append(r)
    return out
