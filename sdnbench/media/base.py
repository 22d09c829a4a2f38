"""What a medium declares: how hosts reach their switches (a wire, a shared radio channel).

The medium is an axis of a comparison beside the topology (`network.medium`): one topology built once
per medium gives rows that differ only in it. A medium takes the pure graph a topology kind built and
returns it with its hosts' links carried its way; its settings are a record under its own name
(`network.<name>`, or a topology's `<name>` for that topology alone).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..config.fields import Record
from ..topology.graph import TopologyGraph


@dataclass(frozen=True)
class MediumKind:
    """One medium and everything the schema, the planner and the network need to know of it."""

    name: str
    doc: str
    #: The medium applied to a built graph with its settings (None: the record's defaults), shared by every
    #: topology or the topology's own; ConfigError with the key (relative to the settings) of what does not
    #: fit the topology.
    apply: Callable[[TopologyGraph, dict | None, bool], TopologyGraph]
    #: Its settings, or None when it has none.
    record: Record | None = None
    #: Sections of its settings keyed by node names (stations: {h1: ...}): network-wide settings apply to
    #: the topologies that have the name, and a name no topology has is refused.
    named: tuple[str, ...] = ()
    #: Link realisations that can carry it (empty: any).
    links: tuple[str, ...] = ()
    #: What a trial's environment records of the medium (nothing for a wire, so wired data-plane keys
    #: stay as they were).
    describe: Callable[[TopologyGraph], dict] = lambda graph: {}

    def label(self, topology_label: str) -> str:
        """A topology's row name on this medium: wired rows keep the topology's own name."""
        return topology_label if self.name == "wired" else f"{topology_label}-{self.name}"
