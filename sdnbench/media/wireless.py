"""wireless: 802.11 cells without radio drivers. Every switch with hosts is an access point (still an
OpenFlow switch the controller manages), every host a station associated with the nearest access
point; each station's link goes through its access point's shared medium in sdnbench-linkemu.

Placement: access points not placed stand along the x axis, ap_spacing_m apart, in switch order;
stations not placed stand station_distance_m from the access point the topology wired them to, spread
evenly around it; a moving station starts at its first waypoint. Then each station associates with the
nearest access point (its own on a tie), so placing a station near another access point moves its link
there; a moving station keeps that access point wherever it goes (no re-association). The medium
replaces the station links' wired shaping; links between switches keep theirs.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..errors import ConfigError
from ..topology.cells import Cell, Radio, Station, Waypoint
from ..topology.graph import Link, LinkParams, TopologyGraph
from .base import MediumKind
from .wireless_keys import WIRELESS, defaults


def _own_access_points(graph: TopologyGraph) -> dict[str, str]:
    """host -> the switch the topology wired it to (ConfigError for a host that is not one station)."""
    hosts = {h.name for h in graph.hosts}
    switches = {s.name for s in graph.switches}
    own: dict[str, str] = {}
    for link in graph.links:
        ends = {link.a, link.b}
        host = next((n for n in ends if n in hosts), None)
        if host is None:
            continue
        other = (ends - {host}).pop() if len(ends) == 2 else host
        if other not in switches or host in own:
            raise ConfigError(f"host {host} has more than one link or a link to another host; a station "
                              f"associates with one access point")
        own[host] = other
    return own


def _named(settings: dict, section: str, known: set[str], what: str, shared: bool) -> dict:
    """The per-node settings of one section, refusing names the topology lacks unless the settings are
    shared with other topologies (the planner refuses a name none has)."""
    given = settings.get(section) or {}
    if shared:
        return {k: v for k, v in given.items() if k in known}
    for name in given:
        if name not in known:
            raise ConfigError(f"no {what} {name} in this topology; its {what}s are {', '.join(sorted(known))}",
                              key=f"{section}.{name}")
    return given


def apply(graph: TopologyGraph, settings: dict | None, shared: bool = False) -> TopologyGraph:
    """graph with its edge switches as access points and its hosts as stations of their cells."""
    s = settings or defaults()
    own = _own_access_points(graph)
    aps = [sw.name for sw in graph.switches if sw.name in set(own.values())]
    if not aps:
        raise ConfigError("no switch has hosts: there is no access point for stations to associate with")
    ap_keys = _named(s, "access_points", set(aps), "access point", shared)
    sta_keys = _named(s, "stations", set(own), "station", shared)
    prop = s["propagation"] or {}

    def radio(keys: dict, position: tuple[float, float]) -> Radio:
        power = keys.get("tx_power_dbm")
        gain = keys.get("antenna_gain_dbi")
        return Radio(s["tx_power_dbm"] if power is None else power,
                     s["antenna_gain_dbi"] if gain is None else gain, position)

    cells: dict[str, Cell] = {}
    for k, ap in enumerate(aps):
        keys = ap_keys.get(ap, {})
        where = (keys["x_m"], keys["y_m"]) if keys.get("x_m") is not None else (k * s["ap_spacing_m"], 0.0)
        cells[ap] = Cell(ap, radio(keys, where), keys.get("standard") or s["standard"],
                         keys.get("slot") or s["slot"], s["model"], prop.get("exponent", 3),
                         prop.get("shadowing_sigma_db", 0))
    around = {ap: [h for h in own if own[h] == ap] for ap in aps}
    moved: dict[str, str] = {}
    for host, ap in own.items():
        keys = sta_keys.get(host, {})
        mobility = tuple(Waypoint(w["t_s"], w["x_m"], w["y_m"]) for w in keys.get("mobility") or ())
        if mobility:
            where = (mobility[0].x_m, mobility[0].y_m)
        elif keys.get("x_m") is not None:
            where = (keys["x_m"], keys["y_m"])
        else:
            # Evenly around the AP from straight above it: never nearer another AP on its row.
            angle = math.pi / 2 + 2 * math.pi * around[ap].index(host) / len(around[ap])
            x0, y0 = cells[ap].radio.position
            where = (x0 + s["station_distance_m"] * math.cos(angle), y0 + s["station_distance_m"] * math.sin(angle))
        rate = keys.get("rate") or s["rate"]
        nearest = min(aps, key=lambda a: (math.dist(where, cells[a].radio.position), a != ap))
        cells[nearest].stations.append(Station(host, radio(keys, where), rate, mobility))
        moved[host] = nearest
    links = []
    for link in graph.links:
        host = link.a if link.a in own else link.b if link.b in own else None
        if host is None:
            links.append(link)
            continue
        ends = (host, moved[host]) if host == link.a else (moved[host], host)
        links.append(Link(*ends, LinkParams(), "edge", medium=moved[host]))
    return replace(graph, links=links, medium="wireless", cells=cells)


def describe(graph: TopologyGraph) -> dict:
    """The medium, its model and standard, each station's access point and (starting) distance, and the
    stations that move, for a trial's environment."""
    cells = list(graph.cells.values())
    if not cells:
        return {}
    return {"medium": "wireless", "wifi_model": cells[0].model,
            "wifi_standard": sorted({c.standard for c in cells}), "wifi_slot": sorted({c.slot for c in cells}),
            "wifi_propagation": {"exponent": cells[0].exponent, "shadowing_sigma_db": cells[0].shadowing_sigma_db},
            "wifi_association": {st.host: c.ap for c in cells for st in c.stations},
            "wifi_distance_m": {st.host: round(c.distance_m(st), 2) for c in cells for st in c.stations},
            **({"wifi_mobility": moving} if (moving := _moving(cells)) else {})}


def _moving(cells: list[Cell]) -> dict:
    """Each moving station's plan in brief: waypoints, when it stops, how far from its access point it ends."""
    out = {}
    for c in cells:
        for st in (st for st in c.stations if st.mobility):
            end = st.mobility[-1]
            out[st.host] = {"waypoints": len(st.mobility), "until_s": end.t_s,
                            "end_distance_m": round(math.dist(c.radio.position, (end.x_m, end.y_m)), 2)}
    return out


KIND = MediumKind(name="wireless", named=("access_points", "stations"), doc="802.11 cells: switches with hosts are access points, hosts their stations "
                                       "(network.wireless, docs/wireless.md)", apply=apply, record=WIRELESS, links=("linkemu",),
                  describe=describe)
