"""The contract between sdnbench and a traffic engine (native, D-ITG, iperf3, ping).

An engine receives flow specifications and handles to the emulated hosts, runs
all flows at once (a mix is just several flows), and returns one FlowResult
per flow in the common metrics schema below. Engines read their tools'
machine-readable output (JSON where the tool has it, D-ITG's decoded log
otherwise), never text meant for people.
"""

from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ...metrics import HIGHER, LOWER, Metric, by_name
from ..base import FlowResult

__all__ = ["METRICS", "FlowResult", "FlowSpec", "HostHandle", "TrafficEngine"]

#: Every metric a flow can report. Names carry units; shown ones appear in default tables in this order.
METRICS: dict[str, Metric] = by_name(
    Metric("owd_mean_ms", "ms", "mean one-way delay", LOWER, shown=True),
    Metric("owd_p99_ms", "ms", "99th percentile of one-way delay", LOWER, shown=True),
    Metric("rtt_mean_ms", "ms", "mean round-trip time", LOWER, shown=True),
    Metric("jitter_ms", "ms", "interarrival jitter (RFC 3550) or the tool's own jitter", LOWER, shown=True),
    Metric("loss_pct", "%", "packets lost as a percentage of packets sent", LOWER, shown=True),
    Metric("throughput_bps", "bit/s", "received payload bit rate", HIGHER, shown=True),
    Metric("tx_rate_ratio", "ratio", "achieved / requested send rate (1.0 = the generator held the rate)",
           HIGHER, shown=True),
    Metric("tcp_connect_ms", "ms", "TCP connect (SYN to established) delay", LOWER, shown=True),
    Metric("transfer_time_s", "s", "time to transfer the requested volume", LOWER, shown=True),
    Metric("video_startup_ms", "ms", "playout start-up (initial buffering) delay", LOWER, shown=True),
    Metric("video_stalls", "count", "playout stalls after start-up", LOWER, shown=True),
    Metric("video_stall_s", "s", "total time playout was stalled", LOWER),
    Metric("tx_pkts", "packets", "packets sent"),
    Metric("rx_pkts", "packets", "packets received"),
    Metric("loss_pkts", "packets", "packets lost (sent - received, duplicates excluded)", LOWER),
    Metric("owd_min_ms", "ms", "minimum one-way delay", LOWER),
    Metric("owd_max_ms", "ms", "maximum one-way delay", LOWER),
    Metric("owd_sd_ms", "ms", "standard deviation of one-way delay", LOWER),
    Metric("owd_p50_ms", "ms", "median one-way delay", LOWER),
    Metric("owd_p90_ms", "ms", "90th percentile of one-way delay", LOWER),
    Metric("rtt_min_ms", "ms", "minimum round-trip time", LOWER),
    Metric("rtt_max_ms", "ms", "maximum round-trip time", LOWER),
    Metric("rtt_sd_ms", "ms", "standard deviation of round-trip time", LOWER),
    Metric("rtt_p50_ms", "ms", "median round-trip time", LOWER),
    Metric("rtt_p99_ms", "ms", "99th percentile of round-trip time", LOWER),
    Metric("ipdv_mean_ms", "ms", "mean absolute delay difference of consecutive packets (IPDV)", LOWER),
    Metric("throughput_pps", "packets/s", "received packet rate", HIGHER),
    Metric("l2_throughput_bps", "bit/s", "received bit rate of whole Ethernet frames", HIGHER),
    Metric("tx_rate_pps", "packets/s", "achieved send rate", HIGHER),
    Metric("tx_late_pkts", "packets", "packets sent later than the late threshold after their intended time",
           LOWER),
    Metric("bytes", "bytes", "payload bytes delivered", HIGHER),
    Metric("retransmits", "segments", "TCP retransmissions seen by the sender", LOWER),
    Metric("reordered_pkts", "packets", "packets that arrived after a later-sent packet", LOWER),
    Metric("duplicate_pkts", "packets", "packets received more than once (not counted in rx_pkts)", LOWER),
    Metric("longest_gap_ms", "ms", "longest silence between arrivals of the flow's packets (an outage)", LOWER),
)


@dataclass(frozen=True)
class FlowSpec:
    """One flow as the experiment asks for it; units are in the field names."""

    flow_id: str
    src: str                       # host name, e.g. "h1"
    dst: str                       # host name, e.g. "h8"
    proto: str                     # udp | tcp | icmp
    size_bytes: int | None = None  # UDP/ICMP payload size, TCP write size
    rate_pps: float | None = None  # constant packet rate (UDP/ICMP)
    rate_bps: float | None = None  # bit rate (UDP) as an alternative to rate_pps
    duration_s: float | None = None
    count: int | None = None       # exact number of packets (UDP/ICMP)
    volume_bytes: int | None = None  # TCP bulk by size
    meter: str = "owd"             # owd (one-way) | rtt (round trip)
    port: int | None = None        # destination port; engines pick one when None
    options: dict = field(default_factory=dict)


class HostHandle(Protocol):
    """What an engine needs from an emulated host (a Mininet Host satisfies it).

    sdnbench.procs.spawn_in starts processes inside the host through popen,
    which must make each a session leader (Mininet's `mnexec -d` does), or
    through the host's own spawn() when it records them (RecordedHost).
    """

    name: str

    def IP(self) -> str: ...

    def popen(self, *args, **kwargs) -> subprocess.Popen: ...


class TrafficEngine(ABC):
    """Runs flows between hosts and parses the results."""

    name: str = ""
    protocols: tuple[str, ...] = ()

    @classmethod
    @abstractmethod
    def availability(cls):
        """An sdnbench.controllers.base.Availability for the engine's tools."""

    @abstractmethod
    def version(self) -> str:
        """The tool's version string."""

    @abstractmethod
    def run(self, flows: list[FlowSpec], hosts: dict[str, HostHandle], workdir: Path) -> list[FlowResult]:
        """Run all flows concurrently; raw outputs go to workdir; one result per flow."""
