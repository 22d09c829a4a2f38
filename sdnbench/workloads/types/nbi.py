"""The `nbi` workload type: northbound API load, then optional overload, DoS and DDoS phases.

A workload's sweep points are its phases. The load phase runs the
experiment's stages. The later phases take their rate from the load phase of
the same repetition, read back from the store (so a resumed campaign finds it
too): overload at `multiple` x the measured throughput, attacks at
`attack_load_multiple` x it while floods run inside the emulated network.
"""

from __future__ import annotations

import json

from ...config.fields import REQUIRED, Any_, Bool, Field, ListOf, Number, Record, Str, positive
from ...config.limits import MAX_DURATION_S, MAX_MULTIPLE, MAX_PAYLOAD_BYTES, MAX_RATE_PPS
from ...config.units import check_stage, stage_seconds
from ...errors import ConfigError, ToolError
from ...metrics import HIGHER, LOWER, Metric, by_name
from ..base import FlowResult, TrialContext, WorkloadType, workload_record
from ..nbi import NbiSpec, headline, overload_stage, run_nbi
from ..nbi_presets import PRESETS

#: Bounds of the northbound load. Each request in flight holds a connection (a
#: process has about 64k ports towards one address); a request that takes ten
#: minutes has failed; stages and request templates are written by hand.
MAX_IN_FLIGHT = 65_535
MAX_TIMEOUT_MS = 600_000
MAX_STAGES = 100
MAX_REQUESTS = 1_000
#: Attacking hosts of one phase: each runs its own sender process.
MAX_SOURCES = 1_000

ATTACK = Record("attack", {
    "kind": Field(Str(choices=("syn", "udp", "icmp", "newflows")), REQUIRED,
                  "flood type; newflows: a fresh source MAC and IP per packet, so each one reaches the controller"),
    "sources": Field(ListOf(Str(), scalar_ok=True, max_items=MAX_SOURCES, why="each runs a sender process"),
                     ["first"], "attacking hosts (one: DoS, several: DDoS)"),
    "target": Field(Str(), "last", "attacked host: a host name, first or last (never outside the network)"),
    "rate_pps": Field(positive(integer=False, maximum=MAX_RATE_PPS), None,
                      "packets/s per source (default: as fast as possible)"),
    "spoof": Field(Bool(), False, "random source addresses, drawn inside 10.0.0.0/8 only"),
    "size_bytes": Field(positive(maximum=MAX_PAYLOAD_BYTES), 64, "payload bytes per packet"),
    "start_s": Field(Number(minimum=0, maximum=MAX_DURATION_S), 0, "seconds after the phase starts"),
    "duration_s": Field(positive(integer=False, maximum=MAX_DURATION_S), None,
                        "how long (default: until the phase ends)"),
}, doc="A flood from emulated hosts to an emulated host, during a northbound phase.")

OVERLOAD = Record("overload", {
    "multiple": Field(positive(integer=False, maximum=MAX_MULTIPLE), 1.5,
                      "request rate as a multiple of the load phase's throughput"),
    "duration_s": Field(positive(integer=False, maximum=MAX_DURATION_S), 60, "how long to hold it"),
}, doc="The stress phase: prolonged load above the measured capacity.")

#: Per-phase metrics of northbound load.
METRICS: dict[str, Metric] = by_name(
    Metric("throughput_rps", "requests/s", "successful responses per second", HIGHER, shown=True),
    Metric("achieved_rps", "requests/s", "mean rate at which requests were actually sent", HIGHER, shown=True),
    Metric("error_rate_pct", "%", "failed requests as a percentage of requests sent", LOWER, shown=True),
    Metric("latency_p50_ms", "ms", "median latency from the intended send time", LOWER, shown=True),
    Metric("failure_pattern_code", "0/1/2", "failure pattern: 0 none, 1 partial, 2 continuous", LOWER, shown=True),
    Metric("target_rps", "requests/s", "mean intended request rate"),
    Metric("latency_p99_ms", "ms", "99th percentile latency from the intended send time", LOWER),
    Metric("longest_failure_run", "requests", "longest run of consecutive failed requests", LOWER),
    Metric("attack_pkts_sent", "packets", "attack packets sent during the phase"),
)
PATTERN_CODE = {"none": 0.0, "partial": 1.0, "continuous": 2.0}
ATTACK_PHASES = ("dos", "ddos")


def phases(workload: dict) -> list[str]:
    """The phases of a northbound workload, in run order: load first, its result sets the others' rates."""
    return ["load"] + [p for p in ("overload", *ATTACK_PHASES) if workload.get(p)]


def phase_seconds(workload: dict, phase: str) -> float:
    """How long a northbound phase lasts."""
    if phase == "load":
        return sum(stage_seconds(s) for s in workload["stages"])
    if phase == "overload":
        return float(workload["overload"]["duration_s"])
    return float(workload["attack_duration_s"])


def default_preset(kind: str) -> str | None:
    """The request preset made for a controller kind (first that lists it)."""
    for name, preset in PRESETS.items():
        if kind in preset.get("controllers", []):
            return name
    return None


def rest_base(adapter) -> str:
    """Base URL of the controller's northbound API (REST, or Faucet's Prometheus endpoint)."""
    ends = adapter.endpoints()
    if "rest" in ends:
        return ends["rest"].rstrip("/")
    if "prometheus" in ends:
        return ends["prometheus"].rsplit("/", 1)[0]
    raise ConfigError(f"controller {adapter.spec.label} has no northbound API here "
                      f"(set rest_port for Ryu; os-ken 4.x has no REST app)")


class NorthboundWorkload(WorkloadType):
    """sdnbench-apiload against the controller's REST API; attacks from emulated hosts."""

    name = "nbi"
    record = workload_record("nbi", "northbound REST API load, stress and attacks", {
        "preset": Field(Str(), None, "request preset (default: the one for each controller kind)"),
        "variables": Field(Any_(), {}, "values for the preset's ${placeholders} (dpid defaults to the first "
                                       "switch)"),
        "requests": Field(ListOf(Any_(), min_items=0, max_items=MAX_REQUESTS), [],
                          "request templates: method, path, headers, body, weight"),
        "stages": Field(ListOf(Str(predicate=check_stage), max_items=MAX_STAGES), REQUIRED,
                        "load phase schedule, e.g. ['ramp:0rps:1000rps:60s', 'const:1000rps:30s']; "
                        "rates up to 1,000,000 rps, each stage (or step) up to a day"),
        "max_in_flight": Field(positive(maximum=MAX_IN_FLIGHT), 200, "cap on concurrent requests"),
        "timeout_ms": Field(positive(maximum=MAX_TIMEOUT_MS), 5000, "request timeout"),
        "keep_alive": Field(Bool(), True, "reuse connections (false: Connection: close)"),
        "overload": Field(OVERLOAD, None, "add a stress phase above the measured throughput"),
        "dos": Field(ATTACK, None, "add a phase with this attack from one host"),
        "ddos": Field(ATTACK, None, "add a phase with this attack from several hosts"),
        "attack_duration_s": Field(positive(integer=False, maximum=MAX_DURATION_S), 60,
                                   "length of the dos and ddos phases"),
        "attack_load_multiple": Field(positive(integer=False, maximum=MAX_MULTIPLE), 1.0,
                                      "request rate during attacks, as a multiple of the load phase's throughput"),
    }, doc="Northbound API load (open loop), then optional stress (overload), DoS and DDoS phases; "
           "each phase is a row.")
    doc_records = (("nbi overload", OVERLOAD), ("nbi dos, ddos", ATTACK))
    sweep_doc = "nbi workloads have no sweep: their rows are their phases (load, overload, dos, ddos)."
    metrics = METRICS
    uses_northbound = True
    headline_formats = (("throughput_rps", "{:.0f} req/s"), ("error_rate_pct", "errors {:.2f}%"))

    def points(self, workload: dict) -> list[dict]:
        return [{"phase": p} for p in phases(workload)]

    def expected_seconds(self, trial) -> float:
        return phase_seconds(trial.workload, trial.sweep_point["phase"])

    def preflight(self, exp, index: int) -> list[str]:
        """nbi needs apiload and controllers with a northbound endpoint and a request preset."""
        from ...controllers import ADAPTERS
        from ...paths import build_hint, native_tool

        wl = exp.workloads[index]
        problems = []
        if native_tool("sdnbench-apiload") is None:
            problems.append(exp.at(f"workloads[{index}].type",
                                   f"sdnbench-apiload is not built; fix: {build_hint('sdnbench-apiload')}"))
        for j, spec in enumerate(exp.controllers):
            problem = ADAPTERS[spec.kind].northbound_problem(spec)
            if problem:
                problems.append(exp.at(f"controllers[{j}].kind", f"{problem}; needed by workload {wl['name']}"))
            elif not (wl["preset"] or wl["requests"] or default_preset(spec.kind)):
                problems.append(exp.at(f"workloads[{index}].preset",
                                       f"no request preset for {spec.kind}: give preset or requests"))
        return problems

    def run(self, trial, ctx: TrialContext) -> tuple[list[FlowResult], dict]:
        wl, adapter = trial.workload, ctx.adapter
        phase = trial.sweep_point["phase"]
        preset = wl["preset"] or default_preset(adapter.spec.kind)
        if preset is None and not wl["requests"]:
            raise ConfigError(f"no request preset for {adapter.spec.kind}; give workload {wl['name']} "
                              f"a preset or requests")
        variables = {"dpid": trial.graph.switches[0].dpid, "probe_ip": trial.graph.hosts[-1].ip,
                     **(wl["variables"] or {})}
        spec = NbiSpec(url=rest_base(adapter), stages=tuple(_stages(trial, ctx.store)), preset=preset,
                       variables=variables, requests=tuple(wl["requests"]), max_in_flight=wl["max_in_flight"],
                       timeout=f"{wl['timeout_ms']}ms", keep_alive=wl["keep_alive"])
        attack = _attack(trial, ctx.net, ctx.workdir)
        try:
            res = run_nbi(spec, ctx.workdir, timeout_s=phase_seconds(wl, phase) + 60)
        finally:
            if attack is not None:
                attack.stop()
        head = headline(res.summary)
        metrics = {k: float(v) for k, v in head.items() if isinstance(v, (int, float)) and k in METRICS}
        metrics["failure_pattern_code"] = PATTERN_CODE.get(head["failure_pattern"])
        api = FlowResult("api", "sdnbench-apiload", metrics, res.series,
                         {"nbi.jsonl": res.raw_path.read_text(), "nbi.summary.json": json.dumps(res.summary)},
                         clock="")
        results = [api]
        if attack is not None:
            for i, outcome in enumerate(attack.results()):
                results.append(FlowResult(f"attack{i}", "attack", {"attack_pkts_sent": outcome.get("packets_sent")},
                                          raw={f"attack{i}.json": json.dumps(outcome)}, clock=""))
        return results, {"engine": "sdnbench-apiload", "nbi_preset": preset, "nbi_url": spec.url}


def _stages(trial, store) -> list[str]:
    """The load phase's own stages, or one constant stage at a multiple of its measured throughput."""
    wl, phase = trial.workload, trial.sweep_point["phase"]
    if phase == "load":
        return list(wl["stages"])
    raw = store.raw(trial.key_at({"phase": "load"}))
    if "nbi.summary.json" not in raw:
        raise ToolError(f"phase {phase} needs the load phase of repetition {trial.repetition}, which has no result")
    multiple = wl["overload"]["multiple"] if phase == "overload" else wl["attack_load_multiple"]
    return [overload_stage(json.loads(raw["nbi.summary.json"]), multiple, f"{phase_seconds(wl, phase):g}s")]


def _attack(trial, net, workdir):
    """Start the phase's attack, if it has one."""
    phase = trial.sweep_point["phase"]
    if phase not in ATTACK_PHASES:
        return None
    from ..attack import AttackSpec, start_attacks

    a = trial.workload[phase]
    spec = AttackSpec(kind=a["kind"], sources=list(a["sources"]), target=a["target"], rate_pps=a["rate_pps"],
                      spoof=a["spoof"], size_bytes=a["size_bytes"], start_s=a["start_s"],
                      duration_s=a["duration_s"] or phase_seconds(trial.workload, phase) - a["start_s"])
    return start_attacks([spec], net.hosts, trial.graph, workdir)


WORKLOAD = NorthboundWorkload()
