"""Expand an experiment into its trial grid and estimate how long it takes.

The grid is controllers x topologies x workloads x sweep points x repetitions.
Trials that share a controller and topology form a group: the network and the
controller are built once per group (or once per repetition with
`restart: per_repetition`) while only the workload changes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..config.limits import MAX_FLOW_RUNS, MAX_TRIALS
from ..config.loader import Experiment
from ..controllers.base import ControllerSpec
from ..errors import ConfigError
from ..media import DEFAULT as WIRED
from ..media import MEDIA, apply_medium
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

__all__ = ["Trial", "expand", "estimate_seconds", "sweep_points", "trial_key", "NO_TOPOLOGY", "switches",
           "incompatible"]


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
    switch: str = "ovs"             # the switch kind its network is built of (network.switch)

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


def check_grid_size(exp: Experiment) -> None:
    """ConfigError naming the workload that gives most trials when the grid passes MAX_TRIALS."""
    per_workload = []   # (trials, index) of each workload
    for i, wl in enumerate(exp.workloads):
        wtype = workload_type(wl["type"])
        networks = len(exp.topologies) * len(media(exp)) * len(switches(exp)) if wtype.needs_topology(wl) else 1
        per_workload.append((len(exp.controllers) * networks * exp.repetitions * len(wtype.points(wl)), i))
    trials = sum(n for n, _ in per_workload)
    if trials > MAX_TRIALS:
        most, i = max(per_workload)
        _too_large(exp, i, f"the experiment expands to {trials:,} trials; at most {MAX_TRIALS:,} (at seconds a "
                           f"trial, more would run for days): {len(exp.controllers)} controllers x "
                           f"{len(exp.topologies)} topologies x {exp.repetitions} repetitions x each workload's "
                           f"sweep points; workload '{exp.workloads[i]['name']}' gives {most:,}")


def _too_large(exp: Experiment, i: int, message: str):
    """Raise a grid-size error at workload i's sweep (or at repetitions when it has none)."""
    key = f"workloads[{i}].sweep" if exp.workloads[i].get("sweep") else "repetitions"
    raise ConfigError(message, path=str(exp.path), key=key,
                      line=exp.line_of(key) or _line_near(exp, f"workloads[{i}].name"))


def _line_near(exp: Experiment, key: str) -> int | None:
    """Line of a key path, or of the nearest enclosing key the file writes out."""
    while key:
        line = exp.line_of(key)
        if line:
            return line
        key = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", key)
    return None


def _placed(exc: ConfigError, exp: Experiment, i: int) -> ConfigError:
    """A workload type's plan-time error with the file, line and key of workload i."""
    key = f"workloads[{i}].{exc.key}" if exc.key else f"workloads[{i}]"
    return ConfigError(exc.detail, path=str(exp.path), line=_line_near(exp, key), key=key)


def media(exp: Experiment) -> list[str]:
    """The media every topology is built on (`network.medium`)."""
    return list(exp.network.get("medium") or [WIRED])


def switches(exp: Experiment) -> list[str]:
    """The switch kinds every topology is built with (`network.switch`, one or a list)."""
    chosen = exp.network.get("switch") or "ovs"
    return [chosen] if isinstance(chosen, str) else list(chosen)


def switch_label(exp: Experiment, label: str, switch: str) -> str:
    """A row's name with its switch kind: unchanged when the experiment names one kind."""
    return label if len(switches(exp)) == 1 else f"{label}-{switch}"


def incompatible(exp: Experiment) -> list[tuple[int, str, str]]:
    """(controller index, switch kind, why) of every controller x switch pair the plan leaves out: the
    controller does not speak the switches' southbound (Ryu on P4Runtime switches)."""
    from ..controllers import ADAPTERS
    from ..emulation.switches import SWITCHES

    return [(i, sw, why) for i, ctrl in enumerate(exp.controllers) for sw in switches(exp)
            if (why := ADAPTERS[ctrl.kind].southbound_refusal(SWITCHES.get(sw)))]


def check_pairs(exp: Experiment) -> None:
    """ConfigError at a controller that no listed switch kind can carry (it would measure nothing)."""
    if not any(workload_type(w["type"]).needs_network(w) for w in exp.workloads):
        return
    refused: dict[int, list[str]] = {}
    for i, _, why in incompatible(exp):
        refused.setdefault(i, []).append(why)
    for i, whys in refused.items():
        if len(whys) == len(switches(exp)):
            key = f"controllers[{i}].kind"
            raise ConfigError(f"{whys[0]}: no switch kind in network.switch carries it",
                              path=str(exp.path), line=_line_near(exp, key), key=key)


def topology_graph(exp: Experiment, i: int, medium: str = WIRED) -> TopologyGraph:
    """Topology i built on medium; a builder's error (a GraphML file it cannot read) or the medium's (a
    station the topology lacks) names the file's line too."""
    try:
        graph = build_topology(exp.topologies[i], exp.network.get("link"), exp.path.parent)
    except ConfigError as exc:
        if exc.path is not None and exc.line is not None:
            raise
        key = f"topologies[{i}]"
        message = str(exc) if exc.path else exc.detail
        raise ConfigError(message, path=str(exp.path), line=_line_near(exp, f"{key}.kind"), key=key) from None
    own = exp.topologies[i].get(medium)
    settings_key = f"topologies[{i}].{medium}" if own else f"network.{medium}"
    try:
        return apply_medium(graph, medium, own or exp.network.get(medium), shared=not own)
    except ConfigError as exc:
        key = f"{settings_key}.{exc.key}" if exc.key else f"topologies[{i}]"
        detail = f"{exc.detail} (topology {topology_label(exp.topologies[i])}, medium {medium})"
        raise ConfigError(detail, path=str(exp.path), line=_line_near(exp, key) or _line_near(exp, settings_key)
                          or _line_near(exp, f"topologies[{i}].kind"), key=key) from None


def check_named(exp: Experiment, graphs: list[TopologyGraph]) -> None:
    """ConfigError at the first name in a medium's network-wide settings that no topology has."""
    nodes = {n for g in graphs for n in g.node_names()}
    for medium in media(exp):
        settings = exp.network.get(medium) or {}
        for section in MEDIA[medium].named:
            for name in settings.get(section) or {}:
                if name not in nodes:
                    key = f"network.{medium}.{section}.{name}"
                    raise ConfigError(f"no {section.rstrip('s').replace('_', ' ')} {name} in any topology",
                                      path=str(exp.path), line=_line_near(exp, key), key=key)


def expand(exp: Experiment) -> list[Trial]:
    """All trials in run order: group by group, repetition-major inside a group."""
    check_grid_size(exp)
    check_pairs(exp)
    graphs = [(spec, MEDIA[m].label(topology_label(spec)), topology_graph(exp, i, m))
              for i, spec in enumerate(exp.topologies) for m in media(exp)]
    check_named(exp, [g for _, _, g in graphs])
    left_out = {(exp.controllers[i].label, sw) for i, sw, _ in incompatible(exp)}
    on_network = [w for w in exp.workloads if workload_type(w["type"]).needs_network(w)]
    on_topology = [w for w in exp.workloads if workload_type(w["type"]).needs_topology(w) and w not in on_network]
    standalone = [w for w in exp.workloads if not workload_type(w["type"]).needs_topology(w)]
    trials: list[Trial] = []
    flow_runs = 0
    index = {id(w): i for i, w in enumerate(exp.workloads)}

    def add(ctrl, spec, label, graph, workloads, switch=switches(exp)[0]):
        nonlocal flow_runs
        for rep in range(1, exp.repetitions + 1):
            for wl in workloads:
                for point in workload_type(wl["type"]).points(wl):
                    t = Trial(len(trials), ctrl, spec, label, graph, wl, point, rep, switch=switch)
                    try:
                        t.wtype.prepare(t)
                    except ConfigError as exc:
                        raise (_placed(exc, exp, index[id(wl)]) if exc.path is None else exc) from None
                    flow_runs += len(t.flows)
                    if flow_runs > MAX_FLOW_RUNS:
                        _too_large(exp, index[id(wl)], f"the experiment has more than {MAX_FLOW_RUNS:,} "
                                                       f"flows over all its trials (each trial's flows count)")
                    trials.append(t)

    for ctrl in exp.controllers:
        for spec, label, graph in graphs:
            # Each switch kind is a row of its own; pairs the controller cannot drive are left out.
            for sw in switches(exp):
                if (ctrl.label, sw) not in left_out:
                    add(ctrl, spec, switch_label(exp, label, sw), graph, on_network, sw)
            # Workloads that emulate their own switches build no network: one row, whatever network.switch.
            add(ctrl, spec, label, graph, on_topology)
        add(ctrl, None, NO_TOPOLOGY, None, standalone)
    return trials


def estimate_seconds(trials: list[Trial], restart: str = "per_group", cooldown_s: float = 0.0) -> float:
    """Estimated wall time of running the trials: each group's set-up (its controller's typical
    start-up included), then every trial."""
    from ..controllers import ADAPTERS

    groups = {(t.group, t.repetition if restart == "per_repetition" else 0): t.controller.kind for t in trials}
    setup = sum(GROUP_SETUP_S + getattr(ADAPTERS.get(kind), "typical_start_s", 0.0) for kind in groups.values())
    return setup + sum(t.expected_seconds() + TRIAL_OVERHEAD_S + cooldown_s for t in trials)
