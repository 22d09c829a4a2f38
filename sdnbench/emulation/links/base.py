"""The contract of a link realisation: how an emulated network's links carry and impair frames.

One kind is chosen per experiment (`network.links`) and made once per network.
It says whether it can give links their parameters (bandwidth, delay, loss)
on this machine, which Mininet link class and options realise one link, and,
for realisations that run a process per link or per medium (a userspace
emulator, a wireless medium), starts them once the network is up and stops
them before it goes down, recording each in the run manifest. Such a
realisation also measures itself during each trial (`window()`): its metrics
are stored with the trial and its problems mark the trial not valid.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from ...metrics import HIGHER, LOWER, Metric, by_name
from ..capabilities import Capability

if TYPE_CHECKING:
    from ...manifest import Manifest
    from ...topology.graph import Link, TopologyGraph


#: What link realisations measure of themselves per trial (a userspace emulator's accuracy).
LINK_METRICS: dict[str, Metric] = by_name(
    Metric("link_late_p99_us", "µs", "99th percentile of how late the link emulator released frames after "
                                     "their release time (worst link direction, over the trial)", LOWER, shown=True),
    Metric("link_late_p50_us", "µs", "median release lateness of the link emulator (worst link direction)", LOWER),
    Metric("link_late_max_us", "µs", "largest release lateness of the link emulator (worst link direction)", LOWER),
    Metric("link_emulator_drops", "frames", "frames the link emulator lost itself (full receive ring, refused "
                                            "send), beyond the configured loss", LOWER),
    Metric("link_timing_valid", "0/1", "1 when the link emulator kept time (p99 lateness within its limit) and "
                                       "lost no frame itself; 0 marks the trial not valid", HIGHER),
)


class LinkWindow:
    """What a link realisation measured of itself during one trial (a context manager around it).

    metrics: catalogued in LINK_METRICS (or AIR_METRICS); problems: why the trial's links were not as
    configured (the trial is stored with them as its error); raw: details stored with the trial, by file
    name. This one measures nothing.
    """

    engine = ""

    def __init__(self):
        self.metrics: dict[str, float] = {}
        self.problems: list[str] = []
        self.raw: dict[str, str] = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class LinkKind(ABC):
    """Realise one network's links."""

    name: ClassVar[str] = ""

    def __init__(self, graph: TopologyGraph, manifest: Manifest):
        self.graph, self.manifest = graph, manifest

    @classmethod
    @abstractmethod
    def availability(cls, links: Iterable[Link] = ()) -> Capability:
        """Can this kind realise these links here (none given: at all)? Names what is missing."""

    @abstractmethod
    def options(self, link: Link) -> dict:
        """Keyword options of Mininet's addLink for one link (e.g. cls=TCLink, bw=10)."""

    def plain(self, link: Link) -> bool:
        """True when this realisation adds nothing to the link (no shaping, no process): a switch
        kind may then carry it itself (OVS patch ports between two switches)."""
        return False

    def started(self, net) -> None:
        """After the network started: start per-link processes, each recorded in the manifest."""

    def stopping(self, net) -> None:
        """Before the network stops: stop what started() started and release its records."""

    def window(self) -> LinkWindow:
        """A window over one trial: enter before the workload, exit after it."""
        return LinkWindow()

    def teardown(self) -> None:
        """After the network stopped (or failed to start): remove what options() made, release its records."""

    def describe(self) -> dict:
        """What a trial's environment records about the links."""
        return {"links": self.name}
