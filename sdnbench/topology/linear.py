"""linear: K switches in a chain, hosts spread over them."""

from .graph import LinkParams, TopologyGraph


def hosts_per_switch(switches: int, per_switch: int, total: int | None) -> list[int]:
    """How many hosts each switch gets; with a total, extras go to the end switches first."""
    if total is None:
        return [per_switch] * switches
    counts = [total // switches] * switches
    ends = [switches - 1, 0] + list(range(1, switches - 1))
    for i in range(total % switches):
        counts[ends[i]] += 1
    return counts


def build(switches: int, hosts_per_switch_: int, hosts: int | None,
          edge: LinkParams, core: LinkParams) -> TopologyGraph:
    """A chain s1 - s2 - ... - sK; hosts numbered along the chain."""
    g = TopologyGraph("linear")
    names = [g.add_switch() for _ in range(switches)]
    for a, b in zip(names, names[1:]):
        g.add_link(a, b, core)
    for s, n in zip(names, hosts_per_switch(switches, hosts_per_switch_, hosts)):
        for _ in range(n):
            g.add_link(g.add_host(), s, edge, "edge")
    return g
