"""Wireless cells of a topology graph: an access point (a switch), its radio and its stations (hosts).

Pure data, like the graph that holds them: `sdnbench.media.wireless` makes them from an experiment's
settings, the link realisation turns them into the link emulator's shared media.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Radio:
    """A transmitter: power, antenna gain, where it stands (x, y in m)."""

    tx_power_dbm: float
    antenna_gain_dbi: float
    position: tuple[float, float]


@dataclass(frozen=True)
class Waypoint:
    """Where a moving station is t_s seconds after a trial's measurement window opens."""

    t_s: float
    x_m: float
    y_m: float


@dataclass(frozen=True)
class Station:
    """A host associated with an access point: its radio, its rate choice and any movement."""

    host: str
    radio: Radio                                   # where it stands, or starts (its first waypoint)
    rate: int | str = "best"                       # Mbit/s, or "best" for the mean SNR
    mobility: tuple[Waypoint, ...] = ()            # straight lines between waypoints


@dataclass
class Cell:
    """One access point's medium: one collision domain shared by its stations."""

    ap: str                                        # the switch that is the access point
    radio: Radio
    standard: str = "g"
    slot: str = "short"
    model: str = "dcf"                             # dcf | mininet_wifi
    exponent: float = 3.0                          # log-distance path loss exponent
    shadowing_sigma_db: float = 0.0
    stations: list[Station] = field(default_factory=list)

    def distance_m(self, station: Station) -> float:
        """Distance from the access point to a station, in the plane."""
        (x0, y0), (x1, y1) = self.radio.position, station.radio.position
        return math.hypot(x1 - x0, y1 - y0)
