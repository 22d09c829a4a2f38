"""spine_leaf: every leaf linked to every spine, giving equal-cost multi-path."""

from .graph import LinkParams, TopologyGraph
from .kind import TopologyKind, size_param


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


KIND = TopologyKind(
    name="spine_leaf", doc="Every leaf connects to every spine: many equal-cost paths.",
    params={
        "spines": size_param("number of spine switches", 2),
        "leaves": size_param("number of leaf switches", 4),
        "hosts_per_leaf": size_param("hosts on each leaf", 2),
    },
    build=lambda p, edge, core, _: build(p["spines"], p["leaves"], p["hosts_per_leaf"], edge, core),
    label_params=("spines", "leaves"),
    counts=lambda p: (p["spines"] + p["leaves"], p["leaves"] * p["hosts_per_leaf"], p["spines"] * p["leaves"]))
