"""What sdnbench's P4Runtime controller writes into bmv2 switches, computed from the topology.

- Flood ports: frames no entry sends somewhere (ARP requests, other broadcasts,
  unknown destinations) go to multicast group FLOOD_GROUP. On a topology with
  loops (spine-leaf, grid, transit-stub) flooding every port would storm, so
  each switch's group holds its host ports and only the switch links of one
  spanning tree (networkx BFS from the first switch: the same tree every run).
  The programs' egress drops the copy leaving through the ingress port.
- Proactive entries (the `forwarding` program): for every host, the dmac entry
  that sends frames to its MAC along the shortest path (forwarding/rules.py,
  the same paths OpenDaylight and ONOS are given).

Pure: no switch, no controller. Port numbers come from the emulation's port
plan, so the entries match the interfaces the switches were started with.
"""

from __future__ import annotations

import networkx as nx

from ..topology.graph import TopologyGraph
from .rules import forwarding_rules, link_graph

__all__ = ["FLOOD_GROUP", "flood_ports", "proactive_entries", "spanning_tree"]

#: Names in both shipped programs' p4info (sdnbench/p4/programs/*.p4); FLOOD_GROUP as programs.py has it,
#: repeated so that the controller registry does not import the gRPC bindings.
FLOOD_GROUP = 1
DMAC, SMAC = "MyIngress.dmac", "MyIngress.smac"
DST, SRC = "hdr.ethernet.dstAddr", "hdr.ethernet.srcAddr"
FORWARD, NO_ACTION = "MyIngress.forward", "NoAction"
#: Which shipped program each controller mode runs.
PROGRAM_OF_MODE = {"learning": "l2_learning", "proactive": "forwarding"}


def spanning_tree(graph: TopologyGraph) -> nx.Graph:
    """A spanning forest of the switch graph (BFS from each island's first switch, in graph order)."""
    switches = [s.name for s in graph.switches]
    core = nx.Graph()
    core.add_nodes_from(switches)
    names = set(switches)
    core.add_edges_from((link.a, link.b) for link in graph.links if link.a in names and link.b in names)
    tree = nx.Graph()
    tree.add_nodes_from(switches)
    reached: set[str] = set()
    for root in switches:
        if root not in reached:
            reached |= nx.node_connected_component(core, root)
            tree.add_edges_from(nx.bfs_edges(core, root))
    return tree


def flood_ports(graph: TopologyGraph, plan: dict[tuple[str, str], tuple[int, int]]) -> dict[str, list[int]]:
    """switch -> the ports of its flood group: every host port and the spanning tree's switch links."""
    g = link_graph(graph, plan)
    tree = spanning_tree(graph)
    hosts = {h.name for h in graph.hosts}
    out = {}
    for s in graph.switches:
        out[s.name] = sorted(g.edges[s.name, n]["ports"][s.name] for n in g[s.name]
                             if n in hosts or tree.has_edge(s.name, n))
    return out


def proactive_entries(graph: TopologyGraph, plan: dict[tuple[str, str], tuple[int, int]]) -> dict[str, list[dict]]:
    """switch -> dmac entries {table, match, action, params} sending each host's MAC along its shortest path."""
    names = {s.dpid: s.name for s in graph.switches}
    out: dict[str, list[dict]] = {s.name: [] for s in graph.switches}
    for rule in forwarding_rules(graph, plan):
        if rule.eth_dst is not None:   # ARP requests are broadcasts: the flood group carries them
            out[names[rule.dpid]].append({"table": DMAC, "match": {DST: rule.eth_dst}, "action": FORWARD,
                                          "params": {"port": rule.out_port}})
    return out
