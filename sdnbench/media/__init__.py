"""Media by name (`network.medium`): how hosts reach their switches. One module per medium defining
`KIND` (sdnbench.media.base.MediumKind); MEDIUM_MODULES is the registry, and the experiment schema takes
the choices and each medium's settings from it."""

from __future__ import annotations

import importlib

from ..topology.graph import TopologyGraph
from .base import MediumKind

MEDIUM_MODULES = ("wired", "wireless")

MEDIA: dict[str, MediumKind] = {
    kind.name: kind for kind in (importlib.import_module(f"{__name__}.{m}").KIND for m in MEDIUM_MODULES)}

DEFAULT = "wired"


def apply_medium(graph: TopologyGraph, medium: str, settings: dict | None, shared: bool = False) -> TopologyGraph:
    """graph with its hosts reaching their switches over medium (ConfigError from the medium otherwise);
    shared: the settings are every topology's (names this one lacks are someone else's)."""
    return MEDIA[medium].apply(graph, settings, shared)


__all__ = ["DEFAULT", "MEDIA", "MEDIUM_MODULES", "MediumKind", "apply_medium"]
