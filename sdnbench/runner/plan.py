"""Expand an experiment into its trial grid and estimate how long it takes.

The grid is controllers x topologies x workloads x sweep points x repetitions.
Trials that share a controller and topology form a group: the network and the
controller are built once per group (or once per repetition with
`restart: per_repetition`) while only the workload changes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..config.loader import Experiment
from ..controllers.base import ControllerSpec
from ..topology import build_topology, topology_label
from ..topology.graph import TopologyGraph
from ..workloads.base import WorkloadType, sweep_points
from ..workloads.traffic.base import FlowSpec
from ..workloads.types import workload_type

# Seconds a group spends starting and stopping a controller and a network, and a
# trial outside its traffic (receiver start, result parsing, storage), as measured
# on a 2-core machine with the native engine (D-ITG adds about 1 s per trial).
GROUP_SETUP_S = 4.0
TRIAL_OVERHEAD_S = 0.5

__all__ = ["Trial", "expand", "estimate_seconds", "sweep_points", "trial_key", "NO_TOPOLOGY"]


@dataclass
class Trial:
    """One measurement: a workload at one sweep point on one network, one repetition."""

    seq: int
    controller: ControllerSpec
    topology_spec: dict | None
    topology: str                   # NO_TOPOLOGY for southbound load without a topology
    graph: TopologyGraph | None
    workload: dict
    sweep_point: dict
    repetition: int
    flows: list[FlowSpec] = field(default_factory=list)   # traffic: resolved by its workload type

    @property
    def key(self) -> str:
        """Stable identity in the store, so a resumed campaign skips what is done."""
        return self.key_at(self.sweep_point)

    def key_at(self, point: dict) -> str:
        """The key of this trial's sibling at another sweep point (e.g. the load phase of a stress phase)."""
        return trial_key(self.controller.label, self.topology, self.workload["name"], point, self.repetition)

    @property
    def group(self) -> tuple[str, str, bool]:
        """(controller, topology, needs a network): trials that share a controller and network."""
        return (self.controller.label, self.topology, self.needs_network)

    @property
    def wtype(self) -> WorkloadType:
        """The workload's type, which knows how to plan, check and run it."""
        return workload_type(self.workload["type"])

    @property
    def needs_network(self) -> bool:
        """True when the trial runs on an emulated network (the workload type decides)."""
        return self.wtype.needs_network(self.workload)

    def setting(self, name: str):
        """A workload parameter with the sweep point applied."""
        return self.sweep_point.get(name, self.workload.get(name))

    def params(self) -> dict:
        """Parameters stored with the trial."""
        # The tool is in the trial's environment record; it is a row parameter only when swept.
        return {**self.sweep_point,
                "openflow": self.controller.openflow, "controller_kind": self.controller.kind,
                "fail_mode": self.controller.fail_mode}

    def expected_seconds(self) -> float:
        """Expected measuring time, as the workload type estimates it."""
        return self.wtype.expected_seconds(self)


def trial_key(controller: str, topology: str, workload: str, point: dict, repetition: int) -> str:
    """A trial's identity in the store."""
    return f"{controller}|{topology}|{workload}|{json.dumps(point, sort_keys=True)}|{repetition}"


NO_TOPOLOGY = "-"


def expand(exp: Experiment) -> list[Trial]:
    """All trials in run order: group by group, repetition-major inside a group."""
    base = exp.path.parent
    graphs = [(spec, topology_label(spec), build_topology(spec, exp.network.get("link"), base))
              for spec in exp.topologies]
    on_network = [w for w in exp.workloads if workload_type(w["type"]).needs_network(w)]
    on_topology = [w for w in exp.workloads if workload_type(w["type"]).needs_topology(w) and w not in on_network]
    standalone = [w for w in exp.workloads if not workload_type(w["type"]).needs_topology(w)]
    trials: list[Trial] = []

    def add(ctrl, spec, label, graph, workloads):
        for rep in range(1, exp.repetitions + 1):
            for wl in workloads:
                for point in workload_type(wl["type"]).points(wl):
                    t = Trial(len(trials), ctrl, spec, label, graph, wl, point, rep)
                    t.wtype.prepare(t)
                    trials.append(t)

    for ctrl in exp.controllers:
        for spec, label, graph in graphs:
            add(ctrl, spec, label, graph, on_network)
            add(ctrl, spec, label, graph, on_topology)
        add(ctrl, None, NO_TOPOLOGY, None, standalone)
    return trials


def estimate_seconds(trials: list[Trial], restart: str = "per_group", cooldown_s: float = 0.0) -> float:
    """Estimated wall time of running the trials."""
    groups = {(t.group, t.repetition if restart == "per_repetition" else 0) for t in trials}
    return len(groups) * GROUP_SETUP_S + sum(t.expected_seconds() + TRIAL_OVERHEAD_S + cooldown_s
                                             for t in trials)
