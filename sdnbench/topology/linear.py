"""linear: K switches in a chain, hosts spread over them."""

from .graph import LinkParams, TopologyGraph
from .kind import MAX_HOSTS, TopologyKind, size_param


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


KIND = TopologyKind(
    name="linear", doc="K switches in a chain, hosts spread over them.",
    params={
        "switches": size_param("number of switches"),
        "hosts_per_switch": size_param("hosts on each switch", 1, maximum=MAX_HOSTS),
        "hosts": size_param("total hosts instead: spread evenly, extras on the end switches", None,
                            maximum=MAX_HOSTS),
    },
    build=lambda p, edge, core, _: build(p["switches"], p["hosts_per_switch"], p.get("hosts"), edge, core),
    label_params=("switches",),
    counts=lambda p: (p["switches"], p.get("hosts") or p["switches"] * p["hosts_per_switch"], p["switches"] - 1))
