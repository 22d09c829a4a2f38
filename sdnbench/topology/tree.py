"""tree: a complete tree of switches of a given depth and fanout, hosts at the leaves."""

from .graph import LinkParams, TopologyGraph


def build(depth: int, fanout: int, edge: LinkParams, core: LinkParams) -> TopologyGraph:
    """Like Mininet's TreeTopo: depth levels of switches, fanout children, fanout hosts per leaf."""
    g = TopologyGraph("tree")

    def grow(level: int) -> str:
        s = g.add_switch()
        for _ in range(fanout):
            if level == depth:
                g.add_link(g.add_host(), s, edge, "edge")
            else:
                g.add_link(grow(level + 1), s, core)
        return s

    grow(1)
    return g
