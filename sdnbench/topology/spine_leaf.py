"""spine_leaf: every leaf linked to every spine, giving equal-cost multi-path."""

from .graph import LinkParams, TopologyGraph


def build(spines: int, leaves: int, hosts_per_leaf: int, edge: LinkParams, core: LinkParams) -> TopologyGraph:
    """Spines s1..sS, leaves after them; hosts numbered leaf by leaf."""
    g = TopologyGraph("spine_leaf")
    spine_names = [g.add_switch() for _ in range(spines)]
    leaf_names = [g.add_switch() for _ in range(leaves)]
    for leaf in leaf_names:
        for spine in spine_names:
            g.add_link(leaf, spine, core)
    for leaf in leaf_names:
        for _ in range(hosts_per_leaf):
            g.add_link(g.add_host(), leaf, edge, "edge")
    return g
