"""Expand an experiment into its trial grid and estimate how long it takes.

The grid is controllers x topologies x workloads x sweep points x repetitions.
Trials that share a controller and topology form a group: the network and the
controller are built once per group (or once per repetition with
`restart: per_repetition`) while only the workload changes.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field

from ..config.loader import Experiment
from ..controllers.base import ControllerSpec
from ..config.units import stage_seconds
from ..errors import ConfigError
from ..topology import build_topology, topology_label
from ..topology.graph import TopologyGraph
from ..workloads.traffic.base import FlowSpec
from ..workloads.traffic.runner import nominal_duration_s

# Seconds a group spends starting and stopping a controller and a network, and a
# trial outside its traffic (receiver start, result parsing, storage), as measured
# on a 2-core machine with the native engine (D-ITG adds about 1 s per trial).
GROUP_SETUP_S = 4.0
TRIAL_OVERHEAD_S = 0.5
ASSUMED_TCP_MBPS = 100.0

#: Largest trial grid. A trial takes seconds, so 100,000 of them run for days; a
#: sweep or repetitions typo (10^20 combinations) is refused before anything is built.
MAX_TRIALS = 100_000
#: Flows over all trials: each is built here (plan, check) and runs as a sender and a receiver.
MAX_FLOW_RUNS = 200_000


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
    flows: list[FlowSpec] = field(default_factory=list)

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
    def kind(self) -> str:
        """The workload type: traffic or sbi."""
        return self.workload["type"]

    @property
    def needs_network(self) -> bool:
        """Traffic and northbound load run on an emulated network; sbi emulates its own switches."""
        return self.kind in ("traffic", "nbi")

    def setting(self, name: str):
        """A workload parameter with the sweep point applied."""
        return self.sweep_point.get(name, self.workload.get(name))

    def params(self) -> dict:
        """Parameters stored with the trial."""
        # The tool is in the trial's environment record; it is a row parameter only when swept.
        return {**self.sweep_point,
                "openflow": self.controller.openflow, "controller_kind": self.controller.kind,
                "fail_mode": self.controller.fail_mode}

    def traffic_seconds(self) -> float:
        """Expected measuring time: the longest flow, or the southbound loops."""
        if self.kind == "sbi":
            loops = self.workload["loops"] + self.workload["warmup_loops"]
            return loops * self.workload["ms_per_loop"] / 1000.0
        if self.kind == "nbi":
            return nbi_phase_seconds(self.workload, self.sweep_point["phase"])
        return max((flow_seconds(f) for f in self.flows), default=0.0)


def trial_key(controller: str, topology: str, workload: str, point: dict, repetition: int) -> str:
    """A trial's identity in the store."""
    return f"{controller}|{topology}|{workload}|{json.dumps(point, sort_keys=True)}|{repetition}"


def flow_seconds(f: FlowSpec) -> float:
    """How long a flow should run; TCP by volume without a rate assumes ASSUMED_TCP_MBPS."""
    if f.volume_bytes and not f.duration_s and not f.rate_bps:
        return f.volume_bytes * 8 / (ASSUMED_TCP_MBPS * 1e6)
    return nominal_duration_s(f)


def nbi_phases(workload: dict) -> list[str]:
    """The phases of a northbound workload, in run order: load first, its result sets the others' rates."""
    return ["load"] + [p for p in ("overload", "dos", "ddos") if workload.get(p)]


def nbi_phase_seconds(workload: dict, phase: str) -> float:
    """How long a northbound phase lasts."""
    if phase == "load":
        return sum(stage_seconds(s) for s in workload["stages"])
    if phase == "overload":
        return float(workload["overload"]["duration_s"])
    return float(workload["attack_duration_s"])


def workload_points(workload: dict) -> list[dict]:
    """The sweep points of a workload; a northbound workload's points are its phases."""
    if workload["type"] == "nbi":
        return [{"phase": p} for p in nbi_phases(workload)]
    return sweep_points(workload["sweep"])


def sweep_points(sweep: dict) -> list[dict]:
    """Every combination of the sweep's values (one empty point without a sweep)."""
    if not sweep:
        return [{}]
    keys = list(sweep)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(sweep[k] for k in keys))]


def resolve_host(name: str, graph: TopologyGraph, where: str, known: set[str] | None = None,
                 key: str | None = None) -> str:
    """'first' / 'last' / a host name -> a host of this topology (`known`: its host names, for speed)."""
    if name == "first":
        return graph.hosts[0].name
    if name == "last":
        return graph.hosts[-1].name
    if known is not None and name in known:
        return name
    try:
        return graph.host(name).name
    except KeyError:
        names = [h.name for h in graph.hosts]
        shown = ", ".join(names[:8]) + (f", ... {names[-1]} ({len(names):,} hosts)" if len(names) > 8 else "")
        raise ConfigError(f"{where}: no host {name!r}; hosts are {shown}", key=key) from None


def make_flows(workload: dict, point: dict, graph: TopologyGraph, topology: str,
               known: set[str] | None = None) -> list[FlowSpec]:
    """The workload's flows with the sweep point applied and hosts resolved."""
    flows = []
    for i, f in enumerate(workload["flows"]):
        merged = {**f, **point}
        where = f"workload '{workload['name']}' flow {i} on topology '{topology}'"
        src = resolve_host(merged["src"], graph, where, known, f"flows[{i}].src")
        dst = resolve_host(merged["dst"], graph, where, known, f"flows[{i}].dst")
        if src == dst:
            raise ConfigError(f"{where}: source and destination are both {src}", key=f"flows[{i}]")
        fields = {k: merged[k] for k in ("proto", "size_bytes", "rate_pps", "rate_bps", "duration_s",
                                         "count", "volume_bytes", "meter", "port")}
        flows.append(FlowSpec(flow_id=f"f{i}:{src}->{dst}", src=src, dst=dst,
                              options=dict(merged.get("options") or {}), **fields))
    return flows


NO_TOPOLOGY = "-"


def _points_count(workload: dict) -> int:
    """How many sweep points a workload has, without listing them."""
    if workload["type"] == "nbi":
        return len(nbi_phases(workload))
    return math.prod(len(values) for values in workload["sweep"].values())


def check_grid_size(exp: Experiment) -> None:
    """ConfigError naming the largest workload when the grid passes MAX_TRIALS or MAX_FLOW_RUNS."""
    per_workload = []   # (trials, flow runs, index) of each workload
    for i, wl in enumerate(exp.workloads):
        networks = len(exp.topologies) if wl["type"] != "sbi" or wl["topology_aware"] else 1
        trials = len(exp.controllers) * networks * exp.repetitions * _points_count(wl)
        per_workload.append((trials, trials * len(wl.get("flows") or ()), i))
    trials, flow_runs = sum(t for t, _, _ in per_workload), sum(f for _, f, _ in per_workload)
    if trials <= MAX_TRIALS and flow_runs <= MAX_FLOW_RUNS:
        return
    _, _, i = max(per_workload)
    key = f"workloads[{i}].sweep" if exp.workloads[i].get("sweep") else "repetitions"
    what = (f"{trials:,} trials; at most {MAX_TRIALS:,} (at seconds a trial, more would run for days)"
            if trials > MAX_TRIALS else
            f"{flow_runs:,} flows over all trials; at most {MAX_FLOW_RUNS:,}")
    raise ConfigError(f"the experiment expands to {what}: {len(exp.controllers)} controllers x "
                      f"{len(exp.topologies)} topologies x {exp.repetitions} repetitions x each workload's sweep "
                      f"points; workload '{exp.workloads[i]['name']}' gives {per_workload[i][0]:,} trials",
                      path=str(exp.path), line=exp.line_of(key) or exp.line_of(f"workloads[{i}].name"), key=key)


def expand(exp: Experiment) -> list[Trial]:
    """All trials in run order: group by group, repetition-major inside a group."""
    check_grid_size(exp)
    base = exp.path.parent
    graphs = [(spec, topology_label(spec), build_topology(spec, exp.network.get("link"), base))
              for spec in exp.topologies]
    on_network = [w for w in exp.workloads if w["type"] in ("traffic", "nbi")]
    on_topology = [w for w in exp.workloads if w["type"] == "sbi" and w["topology_aware"]]
    standalone = [w for w in exp.workloads if w["type"] == "sbi" and not w["topology_aware"]]
    trials: list[Trial] = []

    def add(ctrl, spec, label, graph, workloads):
        known = {h.name for h in graph.hosts} if graph else None   # a name lookup per flow, not a scan
        for rep in range(1, exp.repetitions + 1):
            for wl in workloads:
                for point in workload_points(wl):
                    t = Trial(len(trials), ctrl, spec, label, graph, wl, point, rep)
                    if wl["type"] == "traffic":
                        try:
                            t.flows = make_flows(wl, point, graph, label, known)
                        except ConfigError as exc:   # say where in the file the flow is
                            i = exp.workloads.index(wl)
                            key, line = f"workloads[{i}].{exc.key}", exp.line_of(f"workloads[{i}].flows")
                            raise ConfigError(exc.detail, path=str(exp.path), line=exp.line_of(key) or line,
                                              key=key) from None
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
    return len(groups) * GROUP_SETUP_S + sum(t.traffic_seconds() + TRIAL_OVERHEAD_S + cooldown_s
                                             for t in trials)
