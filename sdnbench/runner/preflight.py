"""Checks of an experiment against this machine, each naming the file line it concerns."""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor

from ..config.loader import Experiment
from ..emulation.links import LINKS, resolve
from ..emulation.switches import SWITCHES
from ..workloads.types import workload_type
from .plan import incompatible, switches, topology_graph


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
            problems.append(exp.at(f"controllers[{i}].kind", f"{spec.kind} is not usable here: {avail.detail}{fix}"))
        refusal = cls.refusal(spec.openflow)
        if refusal:
            key = f"controllers[{i}].openflow" if exp.line_of(f"controllers[{i}].openflow") else "openflow"
            problems.append(exp.at(key, refusal))
    for i, wl in enumerate(exp.workloads):
        problems += workload_type(wl["type"]).preflight(exp, i)
    problems += _data_plane_problems(exp)
    if for_run and os.geteuid() != 0:
        problems.append(f"{exp.path}: running an experiment needs root (network namespaces)")
    return problems


def _data_plane_problems(exp: Experiment) -> list[str]:
    """The chosen switch kind must run here, and the chosen links must realise every topology's links."""
    if not any(workload_type(w["type"]).needs_network(w) for w in exp.workloads):
        return []
    problems = []
    missing = _missing_switches(exp)
    if len(missing) == len(switches(exp)):   # one missing kind among others only skips its rows
        problems += [exp.at("network.switch", f"{name}: {why}") for name, why in missing.items()]
    for i, spec in enumerate(exp.topologies):
        graph_links = topology_graph(exp, i).links
        cap = LINKS.get(resolve(exp.network["links"], graph_links)).availability(graph_links)
        if not cap.ok:
            problems.append(exp.at(f"topologies[{i}]", f"{cap.detail}; needs {cap.fix}"))
    return problems


def _missing_switches(exp: Experiment) -> dict[str, str]:
    """switch kind -> why it cannot run here (with the fix), for the kinds network.switch names."""
    out = {}
    for name in switches(exp):
        cap = SWITCHES.get(name).availability()
        if not cap.ok:
            out[name] = f"{cap.detail}; fix: {cap.fix}" if cap.fix else cap.detail
    return out


def notes(exp: Experiment, offline: bool = False) -> list[str]:
    """What will not run without stopping the rest: controller x switch pairs the plan leaves out, and
    (unless offline) switch kinds missing here beside others that run (their rows are stored as skipped)."""
    out = [exp.at(f"controllers[{i}].kind", f"{exp.controllers[i].label} is not run on {sw} switches: {why}")
           for i, sw, why in incompatible(exp)]
    if not offline and any(workload_type(w["type"]).needs_network(w) for w in exp.workloads):
        missing = _missing_switches(exp)
        if len(missing) < len(switches(exp)):
            out += [exp.at("network.switch", f"{name} rows will be skipped: {why}") for name, why in missing.items()]
    return out
