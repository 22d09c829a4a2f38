"""graphml: a topology read from a GraphML file, such as the Internet Topology Zoo's.

Every node becomes a switch (s1, s2, ... in file order) and every edge a core
link; each switch gets `hosts_per_switch` hosts. Link speeds in the file
(Topology Zoo's `LinkSpeedRaw` in bit/s, or `LinkSpeed` with `LinkSpeedUnits`)
become the link's bandwidth limit unless the experiment shapes core links
itself; edge attributes named like the experiment's link keys (`delay_ms`,
`loss_pct`, ...) shape that link alone. networkx reads the file.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from xml.etree.ElementTree import ParseError

import networkx as nx

from ..config.fields import REQUIRED, Bool, Field, Str
from ..errors import ConfigError
from .graph import LinkParams, TopologyGraph
from .kind import MAX_HOSTS, MAX_SWITCHES, TopologyKind, size_param
from .links import checked_params

#: Multipliers of Topology Zoo's LinkSpeedUnits to Mbit/s.
_UNIT_MBPS = {"": 1e-6, "k": 1e-3, "m": 1.0, "g": 1e3, "t": 1e6}


def read_graph(path: Path) -> nx.Graph:
    """The file's graph as a simple undirected graph; ConfigError for anything that is not GraphML."""
    try:
        g = nx.read_graphml(path)
    except FileNotFoundError:
        raise ConfigError(f"GraphML file {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"{path} is a directory, not a GraphML file") from None
    except (ParseError, nx.NetworkXError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path} is not a GraphML file networkx can read: {exc}") from None
    return g


def link_speed_mbps(attrs: dict) -> float | None:
    """An edge's speed in Mbit/s from Topology Zoo's attributes, or None when it has none."""
    lower = {str(k).lower(): v for k, v in attrs.items()}
    try:
        if lower.get("linkspeedraw") not in (None, ""):
            return float(lower["linkspeedraw"]) / 1e6 or None
        if lower.get("linkspeed") not in (None, ""):
            unit = str(lower.get("linkspeedunits", "M")).strip().lower()[:1]
            return float(lower["linkspeed"]) * _UNIT_MBPS.get(unit, 1.0) or None
    except (TypeError, ValueError):
        return None
    return None


def _check(g: nx.Graph, path: Path, hosts_per_switch: int) -> None:
    """Refuse empty, oversized and disconnected graphs, naming what is wrong."""
    if g.number_of_nodes() == 0:
        raise ConfigError(f"{path}: the graph has no nodes")
    if g.number_of_nodes() > MAX_SWITCHES:
        raise ConfigError(f"{path}: {g.number_of_nodes():,} nodes; at most {MAX_SWITCHES:,} switches "
                          f"can be emulated")
    if g.number_of_nodes() * hosts_per_switch > MAX_HOSTS:
        raise ConfigError(f"{path}: {g.number_of_nodes() * hosts_per_switch:,} hosts; at most {MAX_HOSTS:,}")
    undirected = g.to_undirected(as_view=True)
    if not nx.is_connected(undirected):
        # Largest part first; ties by their smallest node, so the message is the same every run.
        parts = sorted(nx.connected_components(undirected), key=lambda p: (-len(p), min(map(str, p))))
        stray = ", ".join(_node_name(g, n) for n in sorted(parts[1], key=str)[:5])
        raise ConfigError(f"{path}: the graph is not connected ({len(parts)} parts); "
                          f"nodes {stray} cannot reach node {_node_name(g, min(parts[0], key=str))}")


def _node_name(g: nx.Graph, node) -> str:
    label = g.nodes[node].get("label")
    return f"{node!s} ({label})" if label and str(label) != str(node) else str(node)


def build(path: Path, hosts_per_switch: int, link_speeds: bool,
          edge: LinkParams, core: LinkParams) -> TopologyGraph:
    """Switches and links of the file, hosts on every switch; speeds from the file when asked."""
    g = read_graph(path)
    _check(g, path, hosts_per_switch)
    out = TopologyGraph("graphml")
    names = {node: out.add_switch() for node in g.nodes}
    seen: set[frozenset] = set()
    for a, b, attrs in g.edges(data=True):
        pair = frozenset((names[a], names[b]))
        if len(pair) < 2 or pair in seen:   # self-loops and parallel edges (MultiGraph files)
            continue
        seen.add(pair)
        params = core
        # A bandwidth the experiment sets on core links wins over the file's.
        speed = link_speed_mbps(attrs) if link_speeds and core.bw_mbps is None else None
        if speed:
            params = replace(core, bw_mbps=speed)
        # Edge attributes named like link keys (delay_ms, loss_pct, ...) shape that link alone.
        values = {k: v for k, v in attrs.items() if k in LinkParams.keys()}
        if values:
            params = checked_params(values, f"{path}: edge {_node_name(g, a)} - {_node_name(g, b)}", params)
        out.add_link(names[a], names[b], params)
    for switch in names.values():
        for _ in range(hosts_per_switch):
            out.add_link(out.add_host(), switch, edge, "edge")
    return out


KIND = TopologyKind(
    name="graphml", doc="A GraphML file (e.g. from the Internet Topology Zoo): its nodes become switches, "
                        "its edges links.",
    params={
        "path": Field(Str(), REQUIRED, "the GraphML file (relative to the experiment file)"),
        "hosts_per_switch": size_param("hosts on each switch", 1, minimum=0, maximum=MAX_HOSTS),
        "link_speeds": Field(Bool(), True, "use the file's link speeds (LinkSpeedRaw, or LinkSpeed with "
                                           "LinkSpeedUnits) as bandwidth limits where core links have "
                                           "no bw_mbps of the experiment's"),
    },
    build=lambda p, edge, core, base_dir: build(
        (base_dir / p["path"]).resolve(), p["hosts_per_switch"], p["link_speeds"], edge, core),
    label=lambda p: "graphml-" + Path(p["path"]).stem)
