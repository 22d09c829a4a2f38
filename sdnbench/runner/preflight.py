"""Checks of an experiment against this machine, each naming the file line it concerns."""

from __future__ import annotations

import os

from ..config.loader import Experiment
from ..emulation import capabilities
from ..topology import build_topology
from ..workloads.types import workload_type


def preflight(exp: Experiment, for_run: bool = False) -> list[str]:
    """Problems that would stop the experiment here (empty when it can run)."""
    from ..controllers import ADAPTERS

    problems = []
    for i, spec in enumerate(exp.controllers):
        cls = ADAPTERS[spec.kind]
        avail = cls.availability()
        if not avail.ok:
            fix = f"; fix: {avail.fix}" if avail.fix else ""
            problems.append(exp.at(f"controllers[{i}].kind", f"{spec.kind} is not usable here: {avail.detail}{fix}"))
        if spec.openflow not in cls.openflow_versions:
            key = f"controllers[{i}].openflow" if exp.line_of(f"controllers[{i}].openflow") else "openflow"
            problems.append(exp.at(key, f"{spec.kind} speaks OpenFlow {', '.join(cls.openflow_versions)} only, "
                                          f"not {spec.openflow}"))
    for i, wl in enumerate(exp.workloads):
        problems += workload_type(wl["type"]).preflight(exp, i)
    netem = capabilities.qdisc_available("netem")
    for i, spec in enumerate(exp.topologies):
        graph = build_topology(spec, exp.network.get("link"), exp.path.parent)
        if any(link.params.needs_netem() for link in graph.links) and not netem.ok:
            problems.append(exp.at(f"topologies[{i}]", f"links ask for delay_ms/loss_pct but {netem.detail}; "
                                                         f"needs {netem.fix}"))
    if exp.network.get("link") and (exp.network["link"].get("delay_ms") or exp.network["link"].get("loss_pct")) \
            and not netem.ok:
        problems.append(exp.at("network.link", f"delay_ms/loss_pct need netem: {netem.detail}"))
    if for_run and os.geteuid() != 0:
        problems.append(f"{exp.path}: running an experiment needs root (network namespaces)")
    return problems
