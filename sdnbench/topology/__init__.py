"""Topology builders: pure graphs from experiment specs, no root needed.

Each kind is one module defining `KIND` (sdnbench.topology.kind.TopologyKind);
KIND_MODULES is the registry. The experiment schema takes its topology choices
and parameters from here.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from .graph import TopologyGraph
from .kind import TopologyKind
from .links import link_params

#: Modules of this package that define a topology kind, in the order the docs list them.
KIND_MODULES = ("single", "linear", "tree", "spine_leaf", "grid", "transit_stub", "custom", "graphml")

KINDS: dict[str, TopologyKind] = {
    kind.name: kind for kind in (importlib.import_module(f"{__name__}.{m}").KIND for m in KIND_MODULES)}


def build_topology(spec: dict, default_link: dict | None = None, base_dir: Path = Path(".")) -> TopologyGraph:
    """Build the graph a topology spec describes (missing parameters take their defaults)."""
    kind = KINDS.get(spec["kind"])
    if kind is None:
        raise ValueError(f"unknown topology kind {spec['kind']!r}; expected one of {', '.join(KINDS)}")
    edge, core = link_params(spec, default_link)
    return kind.build({**kind.defaults(), **spec}, edge, core, base_dir)


def topology_label(spec: dict) -> str:
    """The row name of a topology: its label, or kind plus sizes."""
    return KINDS[spec["kind"]].row_label(spec)
