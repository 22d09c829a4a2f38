"""Checks of an experiment against this machine, each naming the file line it concerns."""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor

from ..config.loader import Experiment
from ..emulation import capabilities
from ..topology import build_topology


def _at(exp: Experiment, key: str, message: str) -> str:
    line = exp.line_of(key)
    return f"{exp.path}:{line}: {key}: {message}" if line else f"{exp.path}: {key}: {message}"


def _engine_problems(exp: Experiment, i: int, wl: dict, name: str) -> list[str]:
    """The engine must be installed and able to send every protocol the workload's flows use."""
    from ..errors import ToolError
    from ..workloads.traffic.registry import engine_class

    try:
        engine = engine_class(name)
    except ToolError as exc:
        return [_at(exp, f"workloads[{i}].engine", str(exc))]
    problems = []
    avail = engine.availability()
    if not avail.ok:
        problems.append(_at(exp, f"workloads[{i}].engine", f"{name}: {avail.detail}; fix: {avail.fix}"))
    for j, flow in enumerate(wl["flows"]):
        protos = set(wl["sweep"].get("proto", [])) | {flow["proto"]}
        unsupported = protos - set(engine.protocols)
        if unsupported:
            problems.append(_at(exp, f"workloads[{i}].flows[{j}].proto",
                                f"engine {name} cannot send {', '.join(sorted(unsupported))} "
                                f"(it sends {', '.join(engine.protocols)})"))
    return problems


def _southbound_problems(exp: Experiment, i: int) -> list[str]:
    """sbi needs the ofload binary and controllers that take OpenFlow connections."""
    from ..paths import build_hint, native_tool

    problems = []
    if native_tool("sdnbench-ofload") is None:
        problems.append(_at(exp, f"workloads[{i}].type",
                            f"sdnbench-ofload is not built; fix: {build_hint('sdnbench-ofload')}"))
    for j, spec in enumerate(exp.controllers):
        if spec.kind == "none":
            problems.append(_at(exp, f"controllers[{j}].kind", f"'none' has no controller to load; workload "
                                                               f"{exp.workloads[i]['name']} needs one"))
    return problems


def _northbound_problems(exp: Experiment, i: int) -> list[str]:
    """nbi needs apiload and controllers with a northbound endpoint and a request preset."""
    from ..paths import build_hint, native_tool
    from .northbound import default_preset

    wl = exp.workloads[i]
    problems = []
    if native_tool("sdnbench-apiload") is None:
        problems.append(_at(exp, f"workloads[{i}].type",
                            f"sdnbench-apiload is not built; fix: {build_hint('sdnbench-apiload')}"))
    for j, spec in enumerate(exp.controllers):
        where = f"controllers[{j}].kind"
        if spec.kind in ("none", "testcontroller") or (spec.kind == "osken" and not spec.rest_port):
            problems.append(_at(exp, where, f"{spec.kind} has no northbound API for workload {wl['name']}"))
        elif spec.kind == "ryu" and not spec.rest_port:
            problems.append(_at(exp, where, f"ryu serves ofctl_rest only with rest_port (e.g. rest_port: 8080), "
                                            f"needed by workload {wl['name']}"))
        elif spec.kind == "remote" and not spec.rest_url:
            problems.append(_at(exp, where, f"remote controllers need rest_url for workload {wl['name']}"))
        elif not (wl["preset"] or wl["requests"] or default_preset(spec.kind)):
            problems.append(_at(exp, f"workloads[{i}].preset", f"no request preset for {spec.kind}: give "
                                                                 f"preset or requests"))
    return problems


@functools.cache
def _availability(cls):
    """A controller adapter's availability, probed once per process (a probe starts its Python, ~0.3 s)."""
    return cls.availability()


def _availabilities(classes: list) -> dict:
    """Availability of each adapter class, the distinct probes run side by side."""
    unique = list(dict.fromkeys(classes))
    with ThreadPoolExecutor(max_workers=max(1, len(unique))) as pool:
        return dict(zip(unique, pool.map(_availability, unique)))


def preflight(exp: Experiment, for_run: bool = False) -> list[str]:
    """Problems that would stop the experiment here (empty when it can run)."""
    from ..controllers import ADAPTERS

    problems = []
    available = _availabilities([ADAPTERS[spec.kind] for spec in exp.controllers])
    for i, spec in enumerate(exp.controllers):
        cls = ADAPTERS[spec.kind]
        avail = available[cls]
        if not avail.ok:
            fix = f"; fix: {avail.fix}" if avail.fix else ""
            problems.append(_at(exp, f"controllers[{i}].kind", f"{spec.kind} is not usable here: {avail.detail}{fix}"))
        if spec.openflow not in cls.openflow_versions:
            key = f"controllers[{i}].openflow" if exp.line_of(f"controllers[{i}].openflow") else "openflow"
            problems.append(_at(exp, key, f"{spec.kind} speaks OpenFlow {', '.join(cls.openflow_versions)} only, "
                                          f"not {spec.openflow}"))
    for i, wl in enumerate(exp.workloads):
        if wl["type"] == "sbi":
            problems += _southbound_problems(exp, i)
            continue
        if wl["type"] == "nbi":
            problems += _northbound_problems(exp, i)
            continue
        for name in sorted({wl["engine"], *wl["sweep"].get("engine", [])}):
            problems += _engine_problems(exp, i, wl, name)
    netem = capabilities.qdisc_available("netem")
    for i, spec in enumerate(exp.topologies):
        graph = build_topology(spec, exp.network.get("link"), exp.path.parent)
        if any(link.params.needs_netem() for link in graph.links) and not netem.ok:
            problems.append(_at(exp, f"topologies[{i}]", f"links ask for delay_ms/loss_pct but {netem.detail}; "
                                                         f"needs {netem.fix}"))
    if exp.network.get("link") and (exp.network["link"].get("delay_ms") or exp.network["link"].get("loss_pct")) \
            and not netem.ok:
        problems.append(_at(exp, "network.link", f"delay_ms/loss_pct need netem: {netem.detail}"))
    if for_run and os.geteuid() != 0:
        problems.append(f"{exp.path}: running an experiment needs root (network namespaces)")
    return problems
