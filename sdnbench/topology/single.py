"""single: N hosts on one switch."""

from .graph import LinkParams, TopologyGraph


def build(hosts: int, edge: LinkParams, core: LinkParams) -> TopologyGraph:
    """One switch, `hosts` hosts."""
    g = TopologyGraph("single")
    s = g.add_switch()
    for _ in range(hosts):
        g.add_link(g.add_host(), s, edge, "edge")
    return g
