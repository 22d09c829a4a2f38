"""transit_stub: the Calvert/Zegura Internet model.

Transit domains are rings of transit switches, joined to each other in a ring
(one link between their first switches). Every transit switch carries stub
domains; a stub domain is a chain of switches whose first switch links to its
transit switch. Hosts sit on stub switches only, so traffic between stubs
crosses the transit core as it does between Internet edge networks.
"""

from .graph import LinkParams, TopologyGraph
from .kind import TopologyKind, size_param


def _ring(g: TopologyGraph, nodes: list[str], params: LinkParams) -> None:
    if len(nodes) == 2:
        g.add_link(nodes[0], nodes[1], params)
    elif len(nodes) > 2:
        for a, b in zip(nodes, nodes[1:] + nodes[:1]):
            g.add_link(a, b, params)


def build(transit_domains: int, transit_nodes: int, stubs_per_transit: int, stub_nodes: int,
          hosts_per_stub_node: int, edge: LinkParams, core: LinkParams) -> TopologyGraph:
    """Build the graph; transit switches are numbered first, then each stub's chain."""
    g = TopologyGraph("transit_stub")
    domains = [[g.add_switch() for _ in range(transit_nodes)] for _ in range(transit_domains)]
    for domain in domains:
        _ring(g, domain, core)
    _ring(g, [d[0] for d in domains], core)
    stub_switches = []
    for domain in domains:
        for transit in domain:
            for _ in range(stubs_per_transit):
                chain = [g.add_switch() for _ in range(stub_nodes)]
                g.add_link(chain[0], transit, core)
                for a, b in zip(chain, chain[1:]):
                    g.add_link(a, b, core)
                stub_switches.extend(chain)
    for s in stub_switches:
        for _ in range(hosts_per_stub_node):
            g.add_link(g.add_host(), s, edge, "edge")
    return g


def counts(p: dict) -> tuple[int, int, int]:
    """(switches, hosts, core links at most) of a transit-stub spec: rings have as many links as
    switches, each stub chain as many as its switches (one of them to its transit switch)."""
    transit = p["transit_domains"] * p["transit_nodes"]
    stub_switches = transit * p["stubs_per_transit"] * p["stub_nodes"]
    return (transit + stub_switches, stub_switches * p["hosts_per_stub_node"],
            transit + p["transit_domains"] + stub_switches)


KIND = TopologyKind(
    name="transit_stub", doc="Calvert/Zegura Internet model: transit domains with stub domains.",
    params={
        "transit_domains": size_param("number of transit domains", 1),
        "transit_nodes": size_param("switches per transit domain (joined in a ring)", 3),
        "stubs_per_transit": size_param("stub domains attached to each transit switch", 2),
        "stub_nodes": size_param("switches per stub domain (a chain)", 2),
        "hosts_per_stub_node": size_param("hosts on each stub switch", 3),
    },
    build=lambda p, edge, core, _: build(p["transit_domains"], p["transit_nodes"], p["stubs_per_transit"],
                                         p["stub_nodes"], p["hosts_per_stub_node"], edge, core),
    label_params=("transit_domains", "transit_nodes"), counts=counts)
