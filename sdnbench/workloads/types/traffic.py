"""The `traffic` workload type: flows between emulated hosts, measured by a traffic engine."""

from __future__ import annotations

from ...config.fields import REQUIRED, Any_, Context, Field, ListOf, Number, Record, Str, positive
from ...config.sweep import Sweep
from ...config.limits import (MAX_DURATION_S, MAX_FLOWS, MAX_PACKETS, MAX_PAYLOAD_BYTES, MAX_RATE_BPS,
                              MAX_RATE_PPS, MAX_VOLUME_BYTES)
from ...errors import ConfigError, ToolError
from ..base import FlowResult, TrialContext, WorkloadType, workload_record
from ..traffic.base import METRICS, FlowSpec
from ..traffic.registry import ENGINE_MODULES, engine_class, make_engine
from ..traffic.runner import nominal_duration_s

#: TCP flows given by volume alone are estimated at this rate (plans and deadlines only).
ASSUMED_TCP_MBPS = 100.0


def _check_flow(flow: dict, node, ctx: Context, key: str) -> None:
    proto = flow["proto"]
    if flow["rate_pps"] and flow["rate_bps"]:
        ctx.error(node, key, "give rate_pps or rate_bps, not both")
    if proto == "tcp":
        if not (flow["duration_s"] or flow["volume_bytes"]):
            ctx.error(node, key, "a TCP flow needs duration_s or volume_bytes")
    elif not (flow["duration_s"] or flow["count"]):
        ctx.error(node, key, f"a {proto.upper()} flow needs duration_s or count")
    if flow["volume_bytes"] and proto != "tcp":
        ctx.error(node, key, "volume_bytes applies to TCP flows only")


FLOW = Record("flow", {
    "src": Field(Str(), "first", "sending host: a name like h1, or first / last"),
    "dst": Field(Str(), "last", "receiving host: a name like h8, or first / last"),
    "proto": Field(Str(choices=("udp", "tcp", "icmp")), "udp", "protocol"),
    "size_bytes": Field(positive(maximum=MAX_PAYLOAD_BYTES), None, "payload bytes per packet"),
    "rate_pps": Field(positive(integer=False, maximum=MAX_RATE_PPS), None, "constant send rate in packets/s"),
    "rate_bps": Field(positive(integer=False, maximum=MAX_RATE_BPS), None, "send rate in bit/s (payload)"),
    "duration_s": Field(positive(integer=False, maximum=MAX_DURATION_S), None, "how long to send"),
    "count": Field(positive(maximum=MAX_PACKETS), None, "exact number of packets to send"),
    "volume_bytes": Field(positive(maximum=MAX_VOLUME_BYTES), None, "TCP: bytes to transfer"),
    "meter": Field(Str(choices=("owd", "rtt")), "owd", "one-way delay or round-trip meter"),
    "port": Field(Number(integer=True, minimum=1, maximum=65535), None, "destination port"),
    "options": Field(Any_(max_values=100), {}, "engine-specific options (at most 100 values)"),
}, extra_check=_check_flow)

FLOW_SWEEPABLE = ("size_bytes", "rate_pps", "rate_bps", "duration_s", "count", "volume_bytes", "proto", "meter")
ENGINE = Field(Str(choices=ENGINE_MODULES), ENGINE_MODULES[0], "traffic engine: " + ", ".join(ENGINE_MODULES))


def resolve_host(name: str, graph, where: str, key: str | None = None) -> str:
    """'first' / 'last' / a host name -> a host of this topology (ConfigError at `key` otherwise)."""
    if name == "first":
        return graph.hosts[0].name
    if name == "last":
        return graph.hosts[-1].name
    try:
        return graph.host(name).name
    except KeyError:
        names = [h.name for h in graph.hosts]
        shown = ", ".join(names[:8]) + (f", ... {names[-1]} ({len(names):,} hosts)" if len(names) > 8 else "")
        raise ConfigError(f"{where}: no host {name!r}; hosts are {shown}", key=key) from None


def make_flows(workload: dict, point: dict, graph, topology: str) -> list[FlowSpec]:
    """The workload's flows with the sweep point applied and hosts resolved."""
    flows = []
    for i, f in enumerate(workload["flows"]):
        merged = {**f, **point}
        where = f"flow {i} on topology '{topology}'"
        src = resolve_host(merged["src"], graph, where, f"flows[{i}].src")
        dst = resolve_host(merged["dst"], graph, where, f"flows[{i}].dst")
        if src == dst:
            raise ConfigError(f"{where}: source and destination are both {src}", key=f"flows[{i}]")
        fields = {k: merged[k] for k in ("proto", "size_bytes", "rate_pps", "rate_bps", "duration_s",
                                         "count", "volume_bytes", "meter", "port")}
        flows.append(FlowSpec(flow_id=f"f{i}:{src}->{dst}", src=src, dst=dst,
                              options=dict(merged.get("options") or {}), **fields))
    return flows


def flow_seconds(f: FlowSpec) -> float:
    """How long a flow should run; TCP by volume without a rate assumes ASSUMED_TCP_MBPS."""
    if f.volume_bytes and not f.duration_s and not f.rate_bps:
        return f.volume_bytes * 8 / (ASSUMED_TCP_MBPS * 1e6)
    return nominal_duration_s(f)


class TrafficWorkload(WorkloadType):
    """Flows between hosts of each topology, all at once, measured by one engine."""

    name = "traffic"
    record = workload_record("traffic", "traffic between emulated hosts (the default)", {
        "engine": ENGINE,
        "flows": Field(ListOf(FLOW, max_items=MAX_FLOWS, why="each is a sender and a receiver process"),
                       REQUIRED, "flows run at the same time"),
        "sweep": Field(Sweep({**FLOW.fields, "engine": ENGINE}, FLOW_SWEEPABLE + ("engine",)), {},
                       "flow fields (or engine) to vary; every combination is a trial"),
    }, doc="Flows between hosts of each topology, measured by a traffic engine.", is_default=True)
    doc_records = (("workloads[].flows[]", FLOW),)
    sweep_doc = ("Traffic workloads sweep flow fields: " + ", ".join(f"`{k}`" for k in FLOW_SWEEPABLE)
                 + ", and `engine` (to compare engines on the same flows).")
    metrics = METRICS
    headline_formats = (("loss_pct", "loss {:.2f}%"), ("owd_mean_ms", "owd {:.3f} ms"),
                        ("rtt_mean_ms", "rtt {:.3f} ms"), ("throughput_bps", "{:.3g} bit/s"))

    def prepare(self, trial) -> None:
        trial.flows = make_flows(trial.workload, trial.sweep_point, trial.graph, trial.topology)

    def expected_seconds(self, trial) -> float:
        return max((flow_seconds(f) for f in trial.flows), default=0.0)

    def reachability_pairs(self, trial) -> list[tuple[str, str]]:
        return [(f.src, f.dst) for f in trial.flows]

    def preflight(self, exp, index: int) -> list[str]:
        wl = exp.workloads[index]
        problems = []
        for name in sorted({wl["engine"], *wl["sweep"].get("engine", [])}):
            problems += _engine_problems(exp, index, wl, name)
        return problems

    def run(self, trial, ctx: TrialContext) -> tuple[list[FlowResult], dict]:
        engine = make_engine(trial.setting("engine"))
        env = {"engine": engine.name, "engine_version": engine.version()}
        return engine.run(trial.flows, ctx.net.hosts, ctx.workdir), env


def _engine_problems(exp, i: int, wl: dict, name: str) -> list[str]:
    """The engine must be installed and able to send every protocol the workload's flows use."""
    try:
        engine = engine_class(name)
    except ToolError as exc:
        return [exp.at(f"workloads[{i}].engine", str(exc))]
    problems = []
    avail = engine.availability()
    if not avail.ok:
        problems.append(exp.at(f"workloads[{i}].engine", f"{name}: {avail.detail}; fix: {avail.fix}"))
    for j, flow in enumerate(wl["flows"]):
        protos = set(wl["sweep"].get("proto", [])) | {flow["proto"]}
        unsupported = protos - set(engine.protocols)
        if unsupported:
            problems.append(exp.at(f"workloads[{i}].flows[{j}].proto",
                                   f"engine {name} cannot send {', '.join(sorted(unsupported))} "
                                   f"(it sends {', '.join(engine.protocols)})"))
    return problems


WORKLOAD = TrafficWorkload()
