"""single: N hosts on one switch."""

from .graph import LinkParams, TopologyGraph
from .kind import MAX_HOSTS, TopologyKind, size_param


def build(hosts: int, edge: LinkParams, core: LinkParams) -> TopologyGraph:
    """One switch, `hosts` hosts."""
    g = TopologyGraph("single")
    s = g.add_switch()
    for _ in range(hosts):
        g.add_link(g.add_host(), s, edge, "edge")
    return g


KIND = TopologyKind(
    name="single", doc="N hosts on one switch.",
    params={"hosts": size_param("number of hosts", 2, maximum=MAX_HOSTS)},
    build=lambda p, edge, core, _: build(p["hosts"], edge, core),
    label_params=("hosts",), counts=lambda p: (1, p["hosts"], 0))
