"""tree: a complete tree of switches of a given depth and fanout, hosts at the leaves."""

from .graph import LinkParams, TopologyGraph
from .kind import TopologyKind, size_param


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


def counts(depth: int, fanout: int) -> tuple[int, int, int]:
    """(switches, hosts, core links): 1 + f + ... + f^(d-1) switches, f^d hosts, a tree's links."""
    switches = sum(fanout ** level for level in range(depth))
    return switches, fanout ** depth, switches - 1


KIND = TopologyKind(
    name="tree", doc="A complete tree of switches; hosts at the leaves.",
    params={
        "depth": size_param("levels of switches (1 = one switch)", maximum=64),
        "fanout": size_param("children per switch, and hosts per leaf switch"),
    },
    build=lambda p, edge, core, _: build(p["depth"], p["fanout"], edge, core),
    label_params=("depth", "fanout"), counts=lambda p: counts(p["depth"], p["fanout"]))
