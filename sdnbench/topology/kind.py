"""What a topology kind declares: its parameters, how to build it, its label, its size.

One module per kind defines `KIND = TopologyKind(...)`; the registry in
`topology/__init__.py` lists the module names. The experiment schema, its JSON
Schema, the format reference and the table labels all read from the kind, so a
parameter is named once, where the builder that uses it lives.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..config.fields import REQUIRED, Field, Number
from .graph import LinkParams, TopologyGraph

#: Largest network a topology may describe. Mininet + OVS start about 7 switches/s on
#: a 2-core machine (100 switches in ~15 s), so 5,000 switches take over ten minutes;
#: every host is a network namespace with a shell, and the 10.0.0.0/8 plan numbers hosts
#: from 1. The bounds keep a typo (fanout: 99999) a clear error instead of a hang.
MAX_SWITCHES = 5000
MAX_HOSTS = 20000
#: Every switch-to-switch link is a veth pair (two interfaces in the root namespace); a full
#: mesh of spines and leaves grows as their product.
MAX_CORE_LINKS = 50000

#: Builds a graph from the spec (defaults filled in), edge and core link parameters,
#: and the experiment file's directory (for kinds that read files).
Builder = Callable[[dict, LinkParams, LinkParams, Path], TopologyGraph]


def size_param(doc: str, default=REQUIRED, minimum: int = 1, maximum: int = MAX_SWITCHES) -> Field:
    """An integer size parameter bounded like every builder's (default None: optional)."""
    return Field(Number(integer=True, minimum=minimum, maximum=maximum), default, doc)


@dataclass(frozen=True)
class TopologyKind:
    """One topology builder and everything the schema and tables need to know of it."""

    name: str
    doc: str
    params: dict[str, Field]
    build: Builder
    #: Parameters joined into the default row label, e.g. ("depth", "fanout") -> tree-3x2.
    label_params: tuple[str, ...] = ()
    #: (switches, hosts, switch-to-switch links; the links may be an upper bound) from the
    #: parameters alone, to refuse huge networks before building.
    counts: Callable[[dict], tuple[int, int, int]] | None = None
    #: A label for kinds whose name is not made of sizes (custom, graphml).
    label: Callable[[dict], str] | None = None

    def defaults(self) -> dict:
        """The parameters' defaults (required ones absent)."""
        return {k: f.default for k, f in self.params.items() if f.default is not REQUIRED}

    def row_label(self, spec: dict) -> str:
        """The name of this topology in tables: its label, or kind plus sizes."""
        if spec.get("label"):
            return spec["label"]
        if self.label is not None:
            return self.label(spec)
        spec = {**self.defaults(), **spec}
        return "-".join([self.name, "x".join(str(spec[k]) for k in self.label_params)]) \
            if self.label_params else self.name

    def size_problem(self, spec: dict) -> str | None:
        """Why a spec describes a network too large to emulate, or None."""
        if self.counts is None:
            return None
        switches, hosts, core_links = self.counts({**self.defaults(), **spec})
        if switches > MAX_SWITCHES:
            return (f"describes {switches:,} switches; at most {MAX_SWITCHES:,} can be emulated "
                    f"(Mininet starts about 7 switches/s here)")
        if hosts > MAX_HOSTS:
            return f"describes {hosts:,} hosts; at most {MAX_HOSTS:,} (each host is a network namespace)"
        if core_links > MAX_CORE_LINKS:
            return (f"describes {core_links:,} switch-to-switch links; at most {MAX_CORE_LINKS:,} "
                    f"(each is a veth pair)")
        return None
