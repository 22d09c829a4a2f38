"""Which worker holds each node: switches by the cluster's placement, hosts with their switch (pure, no root)."""

from __future__ import annotations

from ...errors import ConfigError
from ...topology.graph import TopologyGraph


def place(graph: TopologyGraph, workers: list[str], placement: str = "blocks",
          explicit: dict[str, str] | None = None) -> dict[str, str]:
    """node name -> worker name. blocks: contiguous runs of switches (in the graph's order) per worker, as even
    as they divide; round_robin: switch i on worker i mod N; explicit overrides both for the switches it names.
    Hosts go where their first switch is, so host links never cross machines."""
    explicit = explicit or {}
    switches = [s.name for s in graph.switches]
    unknown = sorted(set(explicit) - set(switches))
    if unknown:
        raise ConfigError(f"cluster.switches names {', '.join(unknown)}, not a switch of this topology "
                          f"({', '.join(switches[:8])}{', ...' if len(switches) > 8 else ''})", key="cluster.switches")
    where: dict[str, str] = {}
    per, extra = divmod(len(switches), len(workers))
    for i, name in enumerate(switches):
        if placement == "round_robin":
            worker = workers[i % len(workers)]
        else:
            # The first `extra` workers take one switch more.
            cut = extra * (per + 1)
            worker = workers[i // (per + 1)] if i < cut else workers[extra + (i - cut) // max(per, 1)]
        where[name] = explicit.get(name, worker)
    for host in graph.hosts:
        switch = next((link.b if link.a == host.name else link.a for link in graph.links
                       if host.name in (link.a, link.b) and (link.b if link.a == host.name else link.a) in where), None)
        if switch is None:
            raise ConfigError(f"host {host.name} has no switch to be placed with")
        where[host.name] = where[switch]
    return where


def crossing(graph: TopologyGraph, where: dict[str, str]) -> list[tuple[str, str]]:
    """The links whose ends are on different workers (each becomes a tunnel)."""
    return [(link.a, link.b) for link in graph.links if where[link.a] != where[link.b]]
