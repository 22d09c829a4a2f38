"""custom: a user's Mininet Topo class, read into a TopologyGraph."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from ..config.fields import Any_, Field, REQUIRED, Str
from ..errors import ConfigError
from .graph import Host, LinkParams, Switch, TopologyGraph
from .kind import TopologyKind
from .links import checked_params


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


#: Mininet's own link options and the experiment file's names for them.
_MININET_KEYS = {"bw": "bw_mbps", "delay": "delay_ms", "jitter": "jitter_ms", "loss": "loss_pct",
                 "max_queue_size": "queue_pkts"}


def _ms(value) -> float:
    """A Mininet time option ('5ms', '250us', '1s' or a number of ms) in ms."""
    if not isinstance(value, str):
        return float(value)
    for suffix, scale in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if value.endswith(suffix):
            return float(value[:-len(suffix)]) * scale
    return float(value)


def link_values(info: dict) -> dict:
    """The link parameters among a Topo link's options: sdnbench's keys, and Mininet's (bw, delay,
    jitter, loss, max_queue_size) translated."""
    out = {k: v for k, v in info.items() if k in LinkParams.keys()}
    for mininet, ours in _MININET_KEYS.items():
        if info.get(mininet) is not None and ours not in out:
            try:
                out[ours] = _ms(info[mininet]) if mininet in ("delay", "jitter") else info[mininet]
            except ValueError:
                raise ConfigError(f"link option {mininet}={info[mininet]!r} is not a time") from None
    return out


def from_mininet_topo(topo, edge: LinkParams, core: LinkParams) -> TopologyGraph:
    """Convert a built mininet.topo.Topo; link options (sdnbench's link keys, or Mininet's bw, delay,
    jitter, loss, max_queue_size) are kept per link."""
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
        values = link_values(info)
        params = checked_params(values, f"link {a}-{b}", default) if values else default
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
