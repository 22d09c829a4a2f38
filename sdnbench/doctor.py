"""`sdnbench doctor`: what this machine can do, and the exact command for each gap."""

from __future__ import annotations

import importlib.util
import json
import os
import time

from .emulation import capabilities
from .emulation.capabilities import Capability
from .paths import build_hint, native_tool


def _mininet() -> Capability:
    if importlib.util.find_spec("mininet") is None:
        return Capability("mininet", False, "python module not importable",
                          "apt-get install mininet, and run sdnbench from the venv `make setup` creates")
    return capabilities.tool("mn", "mininet", ["--version"])


def _root() -> Capability:
    ok = os.geteuid() == 0
    return Capability("root", ok, "running as root" if ok else "not root: namespaces need it",
                      None if ok else "run as root (sudo)")


def _adapters(prefix: str, registry: dict) -> list[Capability]:
    """Availability of every class in a registry (controllers, engines, switch and link kinds)."""
    out = []
    for name, cls in registry.items():
        a = cls.availability()
        out.append(Capability(f"{prefix} {name}", a.ok, a.detail, a.fix))
    return out


def _controllers() -> list[Capability]:
    from .controllers import ADAPTERS

    return _adapters("controller", ADAPTERS)


def _engines() -> list[Capability]:
    from .workloads.traffic.registry import engine_class, engine_names

    return _adapters("engine", {name: engine_class(name) for name in engine_names()})


def _data_plane() -> list[Capability]:
    from .emulation.links import LINKS
    from .emulation.switches import SWITCHES

    return _adapters("switch", SWITCHES.classes()) + _adapters("links", LINKS.classes()) + [_links_auto()]


def _links_auto() -> Capability:
    """Which realisation `network.links: auto` picks here for links with delay, jitter or loss."""
    from .emulation.links import LINKS, resolve
    from .topology.graph import Link, LinkParams

    impaired = [Link("a", "b", LinkParams(delay_ms=1.0, loss_pct=1.0))]
    name = resolve("auto", impaired)
    cap = LINKS.get(name).availability(impaired)
    netem = "" if capabilities.qdisc_available("netem").ok else " (this kernel has no sch_netem)"
    detail = f"links with delay, jitter or loss: {name}{netem}; bandwidth-only links: veth_tc"
    return Capability("links auto", cap.ok, detail if cap.ok else f"{detail}: {cap.detail}", cap.fix)


def _native() -> list[Capability]:
    out = []
    for name in ("sdnbench-tgen", "sdnbench-ofload", "sdnbench-apiload", "sdnbench-linkemu"):
        path = native_tool(name)
        out.append(Capability(name, path is not None, str(path) if path else "not built", build_hint(name)))
    return out


def checks() -> list[tuple[str, list[Capability]]]:
    """All checks, in sections."""
    return [
        ("system", [_root(), capabilities.ovs_running(), capabilities.kernel_datapath(),
                    capabilities.qdisc_available("htb"), capabilities.qdisc_available("netem"), _mininet(),
                    capabilities.tool("ethtool", "ethtool", ["--version"])]),
        ("data plane (network.switch, network.links)", _data_plane()),
        ("controllers", _controllers()),
        ("traffic engines", _engines()),
        ("native tools", _native()),
    ]


def report(say=print) -> int:
    """Print the report; returns the number of gaps."""
    gaps = 0
    for section, caps in checks():
        say(f"{section}:")
        for c in caps:
            mark = "ok " if c.ok else "-- "
            say(f"  {mark} {c.name:<26} {c.detail}")
            if not c.ok and c.fix:
                say(f"      fix: {c.fix}")
                gaps += 1
    note = ("userspace (netdev) datapath with veth offloads off" if not capabilities.kernel_datapath().ok
            else "kernel datapath")
    say(f"\nnetworks will use the {note}.")
    if not capabilities.qdisc_available("netem").ok:
        say("link delay_ms / loss_pct cannot be emulated here (no netem); bw_mbps works (HTB).")
    _envelopes(say)
    return gaps


def _envelopes(say) -> None:
    """This machine's calibrated zero-loss envelopes (sdnbench calibrate), by data plane."""
    from . import calibration

    mine = [e for e in calibration.load() if e.machine == calibration.machine_key()]
    if not mine:
        say("\nno zero-loss envelope measured on this machine yet: `sdnbench calibrate FILE` (or "
            "`sdnbench run FILE --calibrate`) measures it, so that saturated trials are marked.")
        return
    say("\nzero-loss envelopes on this machine (< 0.1 % loss, first host to last, no controller):")
    for plane in dict.fromkeys(e.data_plane for e in mine):
        described = json.loads(plane)
        say("  " + ", ".join(f"{k} {v}" for k, v in described.items() if k in ("switch", "datapath", "links", "ports",
                                                                           "switch_links")))
        for e in sorted((e for e in mine if e.data_plane == plane), key=lambda e: (e.topology, e.size_bytes)):
            say(f"    {e.topology:<16} {e.size_bytes:>6} B  {e.zero_loss_pps:>12,.0f} packets/s  "
                f"(measured {time.strftime('%Y-%m-%d', time.localtime(e.measured_at))})")
