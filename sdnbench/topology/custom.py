"""custom: a user's Mininet Topo class, read into a TopologyGraph."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from ..config.fields import Any_, Field, REQUIRED, Str
from ..errors import ConfigError
from .graph import Host, LinkParams, Switch, TopologyGraph
from .kind import TopologyKind


def load_class(ref: str, search_path: Path | None):
    """Import 'module:Class', optionally from search_path."""
    module_name, _, class_name = ref.partition(":")
    if search_path is not None and str(search_path) not in sys.path:
        sys.path.insert(0, str(search_path))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"cannot import {module_name!r}: {exc}") from None
    cls = getattr(module, class_name, None)
    if cls is None:
        raise ConfigError(f"module {module_name!r} has no class {class_name!r}")
    return cls


def from_mininet_topo(topo, edge: LinkParams, core: LinkParams) -> TopologyGraph:
    """Convert a built mininet.topo.Topo; link options bw/delay/loss are kept."""
    g = TopologyGraph("custom")
    switches = list(topo.switches())
    hosts = list(topo.hosts())
    for i, name in enumerate(switches, start=1):
        dpid = topo.nodeInfo(name).get("dpid")
        g.switches.append(Switch(name, int(dpid, 16) if dpid else i))
    for i, name in enumerate(hosts, start=1):
        info = topo.nodeInfo(name)
        ip = (info.get("ip") or f"10.0.0.{i}").split("/")[0]
        mac = info.get("mac") or ":".join(f"{(i >> s) & 0xFF:02x}" for s in (40, 32, 24, 16, 8, 0))
        g.hosts.append(Host(name, ip, mac))
    host_set = set(hosts)
    for a, b, info in topo.links(withInfo=True):
        role = "edge" if a in host_set or b in host_set else "core"
        default = edge if role == "edge" else core
        params = LinkParams(info.get("bw", default.bw_mbps), info.get("delay_ms", default.delay_ms),
                            info.get("loss", default.loss_pct))
        if isinstance(info.get("delay"), str):   # Mininet writes delay as '5ms'
            params = LinkParams(params.bw_mbps, float(info["delay"].rstrip("ms")), params.loss_pct)
        g.add_link(a, b, params, role)
    return g


def build(class_ref: str, path: str | None, args: dict, base_dir: Path,
          edge: LinkParams, core: LinkParams) -> TopologyGraph:
    """Instantiate the user's Topo class and convert it."""
    search = (base_dir / path).resolve() if path else base_dir.resolve()
    cls = load_class(class_ref, search)
    try:
        topo = cls(**(args or {}))
    except Exception as exc:  # the user's code: report, don't trace back
        raise ConfigError(f"{class_ref}({args}) failed: {exc}") from None
    return from_mininet_topo(topo, edge, core)


KIND = TopologyKind(
    name="custom", doc="A Mininet Topo class of the user's.",
    params={
        "class": Field(Str(pattern=r"^[\w.]+:\w+$"), REQUIRED, "module:Class of a mininet.topo.Topo subclass"),
        "path": Field(Str(), None, "directory to add to the import path (relative to the experiment file)"),
        "args": Field(Any_(), {}, "keyword arguments for the class"),
    },
    build=lambda p, edge, core, base_dir: build(p["class"], p.get("path"), p.get("args") or {}, base_dir,
                                                edge, core),
    label=lambda p: p["class"].split(":")[-1])
