"""The experiment keys of a wireless network (`network.wireless`, or a topology's `wireless`): the
802.11 cell of every access point, where access points and stations stand, and how stations send."""

from __future__ import annotations

import yaml

from ..config.fields import Context, Field, ListOf, Mapping, Number, Record, Str, Type, _describe
from ..config.source import scalar_value

#: 802.11g's rates (ERP-OFDM), Mbit/s.
RATES_G = (6, 9, 12, 18, 24, 36, 48, 54)
#: Amendments a file may name; only g is emulated, the others are refused with the reason.
STANDARDS = ("g", "n", "ac")
NOT_YET = {"n": "802.11n (HT: MIMO, 40 MHz channels, aggregation)", "ac": "802.11ac (VHT, 5 GHz)"}
#: Coordinates beyond any cell: an 802.11g station is out of reach of its AP after a few hundred metres.
MAX_COORD_M = 100_000
#: Seconds a mobility plan may span: longer than any trial.
MAX_MOBILITY_S = 86_400

POWER = Number(minimum=-30, maximum=40)
GAIN = Number(minimum=-10, maximum=40)
COORD = Number(minimum=-MAX_COORD_M, maximum=MAX_COORD_M)


class Rate(Type):
    """A fixed 802.11g rate in Mbit/s, or `best` (the fastest rate the mean SNR allows)."""

    def check(self, node, ctx, key):
        value = scalar_value(node) if isinstance(node, yaml.ScalarNode) else None
        if value == "best" or (type(value) is int and value in RATES_G):
            return value
        ctx.error(node, key, f"expected best or an 802.11g rate in Mbit/s ({', '.join(map(str, RATES_G))}), "
                             f"got {_describe(node)}")
        return None

    def jsonschema(self):
        return {"enum": ["best", *RATES_G]}


def _standard(value: dict, node, ctx: Context, key: str) -> None:
    """n and ac are named so files can say what they want, and refused until the medium models them."""
    std = value.get("standard")
    if std in NOT_YET:
        ctx.error_at(node, f"{key}.standard", f"{NOT_YET[std]} is not emulated yet; only g (ERP-OFDM, 2.4 GHz) is")


def _placed(value: dict, node, ctx: Context, key: str) -> None:
    """x_m and y_m come together."""
    if (value["x_m"] is None) != (value["y_m"] is None):
        ctx.error_at(node, f"{key}.{'y_m' if value['y_m'] is None else 'x_m'}", "x_m and y_m go together")


def _waypoints(value: list, node, ctx: Context, key: str) -> None:
    """A mobility plan starts at 0 s and moves forward in time."""
    if value[0]["t_s"] != 0:
        ctx.error(node.value[0], f"{key}[0].t_s", "the first waypoint is where the station starts: t_s 0")
    for i, (a, b) in enumerate(zip(value, value[1:]), start=1):
        if b["t_s"] <= a["t_s"]:
            ctx.error(node.value[i], f"{key}[{i}].t_s", f"expected a time after {a['t_s']} s (the waypoint before)")


class Mobility(ListOf):
    """Waypoints of straight-line movement, checked as a whole."""

    def check(self, node, ctx, key):
        before = len(ctx.issues)
        value = super().check(node, ctx, key)
        if value is not None:
            _waypoints(value, node, ctx, key)
        return None if len(ctx.issues) > before else value


WAYPOINT = Record("waypoint", {
    "t_s": Field(Number(minimum=0, maximum=MAX_MOBILITY_S),
                 doc="seconds from the start of the trial's measurement window"),
    "x_m": Field(COORD, doc="position, m"),
    "y_m": Field(COORD, doc="position, m"),
}, doc="Where a station is at t_s; it moves in a straight line to the next waypoint.")


def _station(value: dict, node, ctx: Context, key: str) -> None:
    _placed(value, node, ctx, key)
    if value["mobility"] is not None and value["x_m"] is not None:
        # Two starting points would disagree about where the station is and which AP it joins.
        ctx.error_at(node, f"{key}.x_m", "a moving station starts at its first waypoint: give x_m, y_m or mobility")


STATION = Record("station", {
    "x_m": Field(COORD, None, "position, m (default: station_distance_m from its access point)"),
    "y_m": Field(COORD, None, "position, m"),
    "tx_power_dbm": Field(POWER, None, "transmit power, dBm (default: the network's)"),
    "antenna_gain_dbi": Field(GAIN, None, "antenna gain, dBi (default: the network's)"),
    "rate": Field(Rate(), None, "fixed rate in Mbit/s or best (default: the network's)"),
    "mobility": Field(Mobility(WAYPOINT, min_items=2, max_items=10_000), None,
                      "straight-line movement between waypoints, from the first (t_s 0), replayed in every "
                      "trial; it stays with the access point nearest its first waypoint"),
}, doc="One station (a host by name: h1, h2, ...). It associates with the nearest access point.",
   extra_check=_station)

ACCESS_POINT = Record("access point", {
    "x_m": Field(COORD, None, "position, m (default: along the x axis, ap_spacing_m apart)"),
    "y_m": Field(COORD, None, "position, m"),
    "tx_power_dbm": Field(POWER, None, "transmit power, dBm (default: the network's)"),
    "antenna_gain_dbi": Field(GAIN, None, "antenna gain, dBi (default: the network's)"),
    "standard": Field(Str(choices=STANDARDS), None, "802.11 amendment (default: the network's)"),
    "slot": Field(Str(choices=("short", "long")), None, "slot time (default: the network's)"),
}, doc="One access point (a switch with hosts, by name: s1, s2, ...).",
   extra_check=lambda v, node, ctx, key: (_placed(v, node, ctx, key), _standard(v, node, ctx, key)))

PROPAGATION = Record("propagation", {
    "exponent": Field(Number(minimum=1, maximum=8), 3, "log-distance path loss exponent n: "
                                                       "PL(d) = 40.1 + 10 n log10(d) dB"),
    "shadowing_sigma_db": Field(Number(minimum=0, maximum=30), 0,
                                "log-normal shadowing, standard deviation in dB, drawn per attempt (0: none)"),
}, doc="How the signal weakens with distance (2.4 GHz, 1 m reference loss 40.1 dB, noise -91 dBm).")


def _wireless(value: dict, node, ctx: Context, key: str) -> None:
    """Standards not emulated, and fixed rates Mininet-WiFi's model would ignore."""
    _standard(value, node, ctx, key)
    if value["model"] == "mininet_wifi":
        fixed = [("rate", value["rate"])] + [(f"stations.{h}.rate", s["rate"])
                                              for h, s in (value["stations"] or {}).items()]
        for k, rate in fixed:
            if rate not in (None, "best"):
                ctx.error_at(node, f"{key}.{k}", "model mininet_wifi sets the rate from the distance alone; "
                                              "a fixed rate needs model dcf")


WIRELESS = Record("wireless", {
    "standard": Field(Str(choices=STANDARDS), "g", "802.11 amendment: g (n and ac are refused: not emulated yet)"),
    "model": Field(Str(choices=("dcf", "mininet_wifi")), "dcf",
                   "dcf: each access point's stations share one medium with 802.11 DCF contention; "
                   "mininet_wifi: Mininet-WiFi's per-link rate, delay and loss from distance (no shared airtime)"),
    "slot": Field(Str(choices=("short", "long")), "short", "short 9 µs slots, or long 20 µs (802.11b present)"),
    "propagation": Field(PROPAGATION, None, "log-distance path loss (default exponent 3, no shadowing)"),
    "rate": Field(Rate(), "best", "every station's rate: fixed Mbit/s, or best for its mean SNR"),
    "tx_power_dbm": Field(POWER, 14, "transmit power of access points and stations, dBm (Mininet-WiFi's 14)"),
    "antenna_gain_dbi": Field(GAIN, 5, "antenna gain of access points and stations, dBi (Mininet-WiFi's 5)"),
    "station_distance_m": Field(Number(minimum=0.01, maximum=MAX_COORD_M), 10,
                                "distance of stations not placed from their access point, m"),
    "ap_spacing_m": Field(Number(minimum=1, maximum=MAX_COORD_M), 200,
                          "distance between access points not placed (along the x axis), m"),
    "access_points": Field(Mapping(ACCESS_POINT), None, "per access point (switch name): position and radio"),
    "stations": Field(Mapping(STATION), None, "per station (host name): position, radio, rate, mobility"),
}, doc="An 802.11 network: every switch with hosts is an access point (an OpenFlow switch like any "
       "other), every host a station associated with the nearest access point, each station link through "
       "the access point's medium in sdnbench-linkemu.", extra_check=_wireless)


def defaults() -> dict:
    """The wireless settings of a file that names the medium but gives none."""
    return WIRELESS.check(yaml.compose("{}"), Context(), "")
