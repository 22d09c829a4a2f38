"""The contract of a link realisation: how an emulated network's links carry and impair frames.

One kind is chosen per experiment (`network.links`) and made once per network.
It says whether it can give links their parameters (bandwidth, delay, loss)
on this machine, which Mininet link class and options realise one link, and,
for realisations that run a process per link or per medium (a userspace
emulator, a wireless medium), starts them once the network is up and stops
them before it goes down, recording each in the run manifest.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from ..capabilities import Capability

if TYPE_CHECKING:
    from ...manifest import Manifest
    from ...topology.graph import Link, TopologyGraph


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

    def describe(self) -> dict:
        """What a trial's environment records about the links."""
        return {"links": self.name}
