"""Wireless cells as sdnbench-linkemu's `media`, and what its `air` counters say about a trial.

Pure functions: no root, unit-tested. A cell's station links take no impairment of their own: the
medium delays and loses their frames (docs/wireless.md).
"""

from __future__ import annotations

import json
import zlib

from ...metrics import HIGHER, LOWER, NEITHER, Metric, by_name
from ...topology.cells import Cell
from ...topology.graph import Link

#: The experiment's medium model -> the emulator's.
MODELS = {"dcf": "dcf", "mininet_wifi": "compat"}

#: What the emulator's media measured during a trial (over every station link direction).
AIR_METRICS: dict[str, Metric] = by_name(
    Metric("wifi_airtime_pct", "%", "share of the trial the busiest access point's medium carried frames "
                                    "(data, and SIFS + ACK after a success)", NEITHER, shown=True),
    Metric("wifi_rate_min_mbps", "Mbit/s", "lowest 802.11 rate of a station link's last attempt", HIGHER),
    Metric("wifi_rate_max_mbps", "Mbit/s", "highest 802.11 rate of a station link's last attempt", HIGHER),
    Metric("wifi_attempts", "frames", "transmission attempts on every medium", NEITHER),
    Metric("wifi_retries", "frames", "attempts after a frame's first (collisions and frame errors)", LOWER),
    Metric("wifi_retry_pct", "%", "retries per attempt", LOWER, shown=True),
    Metric("wifi_collisions", "frames", "attempts that collided with another contender's", LOWER),
    Metric("wifi_frame_errors", "frames", "lone attempts lost to a frame error (too little SNR)", LOWER),
    Metric("wifi_retry_drops", "frames", "frames dropped after the retry limit (7 attempts)", LOWER),
    Metric("wifi_queue_drops", "frames", "frames refused by a sender's full queue (the AP's serves all its "
                                         "stations)", LOWER),
)


def _position(xy: tuple[float, float]) -> list[float]:
    return [xy[0], xy[1], 0.0]


def emulator_medium(cell: Cell, names: dict[int, str], links: list[Link]) -> dict:
    """One cell of the emulator's configuration; names: link index -> the emulator's link name."""
    stations = []
    by_host = {st.host: st for st in cell.stations}
    for i, link in enumerate(links):
        if link.medium != cell.ap:
            continue
        station = by_host[link.a if link.a in by_host else link.b]
        # A moving station follows its waypoints on the emulator's clock, restarted at each trial's mark.
        where = ({"waypoints": [{"t_s": w.t_s, "position": _position((w.x_m, w.y_m))} for w in station.mobility]}
                 if station.mobility else {"position": _position(station.radio.position)})
        stations.append({"link": names[i], "station_end": "a" if link.a == station.host else "b", **where,
                         "tx_power_dbm": station.radio.tx_power_dbm, "gain_dbi": station.radio.antenna_gain_dbi,
                         "rate": station.rate})
    return {"name": cell.ap, "model": MODELS[cell.model], "standard": cell.standard, "slot": cell.slot,
            "ap": {"tx_power_dbm": cell.radio.tx_power_dbm, "gain_dbi": cell.radio.antenna_gain_dbi,
                   "position": _position(cell.radio.position)},
            "propagation": {"exponent": cell.exponent, "shadowing_sigma_db": cell.shadowing_sigma_db},
            # Every controller of a comparison meets the same backoffs and frame errors.
            "seed": zlib.crc32(f"medium:{cell.ap}".encode()),
            "stations": stations}


def emulator_media(cells: dict[str, Cell], names: dict[int, str], links: list[Link]) -> list[dict]:
    """The `media` of the emulator's configuration: one entry per access point."""
    return [emulator_medium(cell, names, links) for cell in cells.values()]


def air_window(record: dict, association: dict[str, str]) -> tuple[dict[str, float], str | None]:
    """Metrics of the media over one window record, and each station link direction as JSON (None without
    media); association: emulator link name -> access point."""
    dirs = [d for d in record.get("links", []) if d.get("air")]
    if not dirs:
        return {}, None
    air = [d["air"] for d in dirs]
    busy: dict[str, float] = {}
    for a in air:
        busy[a["medium"]] = busy.get(a["medium"], 0.0) + a["airtime_share"]
    rates = [a["rate_mbps"] for a in air if a["attempts"] and a["rate_mbps"]]
    total = {k: float(sum(a[k] for a in air))
             for k in ("attempts", "retries", "collisions", "frame_errors", "retry_drops", "queue_drops")}
    metrics = {"wifi_airtime_pct": 100.0 * max(busy.values()),
               **{f"wifi_{k}": v for k, v in total.items()},
               "wifi_retry_pct": 100.0 * total["retries"] / total["attempts"] if total["attempts"] else 0.0}
    if rates:
        metrics.update(wifi_rate_min_mbps=float(min(rates)), wifi_rate_max_mbps=float(max(rates)))
    stations = [{"link": d["link"], "access_point": association.get(d["link"], d["air"]["medium"]),
                 "way": d["air"]["way"], "rate_mbps": d["air"]["rate_mbps"], "attempts": d["air"]["attempts"],
                 "retries": d["air"]["retries"], "collisions": d["air"]["collisions"],
                 "delivered_pkts": d["air"]["delivered_pkts"], "retry_drops": d["air"]["retry_drops"],
                 "airtime_share": d["air"]["airtime_share"]} for d in dirs]
    return metrics, json.dumps(stations, indent=1)
