"""Topology builders: pure graphs from experiment specs, no root needed."""

from __future__ import annotations

from pathlib import Path

from . import custom, grid, linear, single, spine_leaf, transit_stub, tree
from .graph import TopologyGraph
from .links import link_params


def build_topology(spec: dict, default_link: dict | None = None, base_dir: Path = Path(".")) -> TopologyGraph:
    """Build the graph a validated topology spec describes."""
    edge, core = link_params(spec, default_link)
    kind = spec["kind"]
    if kind == "single":
        return single.build(spec["hosts"], edge, core)
    if kind == "linear":
        return linear.build(spec["switches"], spec["hosts_per_switch"], spec.get("hosts"), edge, core)
    if kind == "tree":
        return tree.build(spec["depth"], spec["fanout"], edge, core)
    if kind == "spine_leaf":
        return spine_leaf.build(spec["spines"], spec["leaves"], spec["hosts_per_leaf"], edge, core)
    if kind == "grid":
        return grid.build(spec["rows"], spec["columns"], spec["hosts_per_switch"], spec.get("hosts"), edge, core)
    if kind == "transit_stub":
        return transit_stub.build(spec["transit_domains"], spec["transit_nodes"], spec["stubs_per_transit"],
                                  spec["stub_nodes"], spec["hosts_per_stub_node"], edge, core)
    if kind == "custom":
        return custom.build(spec["class"], spec.get("path"), spec.get("args") or {}, base_dir, edge, core)
    raise ValueError(f"unknown topology kind {kind!r}")


def topology_label(spec: dict) -> str:
    """The row name of a topology: its label, or kind plus sizes."""
    if spec.get("label"):
        return spec["label"]
    sizes = {
        "single": ("hosts",), "linear": ("switches",), "tree": ("depth", "fanout"),
        "spine_leaf": ("spines", "leaves"), "grid": ("rows", "columns"),
        "transit_stub": ("transit_domains", "transit_nodes"), "custom": (),
    }[spec["kind"]]
    if spec["kind"] == "custom":
        return spec["class"].split(":")[-1]
    return spec["kind"] + "-" + "x".join(str(spec[k]) for k in sizes)
