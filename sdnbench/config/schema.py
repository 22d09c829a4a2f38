"""The experiment file format, defined once: validation and JSON Schema come from here."""

from __future__ import annotations

import yaml

from ..controllers import ADAPTERS
from ..topology import KINDS as TOPOLOGY_KINDS
from ..workloads.traffic.registry import ENGINE_MODULES
from .fields import (REQUIRED, Any_, Bool, Context, Field, ListOf, Mapping, Number,
                     Record, Str, Tagged, Type)

# Choices come from the registries: a new controller, engine or topology is a module there.
CONTROLLER_KINDS = tuple(ADAPTERS)
ENGINES = ENGINE_MODULES
OPENFLOW = ("1.0", "1.3")


def _positive(integer=True):
    return Number(integer=integer, minimum=1) if integer else Number(exclusive_minimum=0)


#: Longest name or label: it heads a table column and becomes part of file names in the run directory.
MAX_NAME_CHARS = 100


def _name_problem(name: str) -> str | None:
    """Names and labels become file names (run directory, controller logs): no '/', not empty."""
    if not name.strip() or name in (".", ".."):
        return f"expected a name, got {name!r}"
    if "/" in name:
        return f"{name[:MAX_NAME_CHARS]!r} holds a slash; names become file names in the run directory"
    if len(name) > MAX_NAME_CHARS:
        return f"a name of {len(name):,} characters; at most {MAX_NAME_CHARS} (it heads a table column)"
    return None


NAME = Str(predicate=_name_problem, pattern=f"^[^/]{{1,{MAX_NAME_CHARS}}}$")


LINK = Record("link", {
    "bw_mbps": Field(Number(exclusive_minimum=0), None, "bandwidth limit in Mbit/s (HTB)"),
    "delay_ms": Field(Number(minimum=0), None, "one-way delay in ms (needs the kernel's netem)"),
    "loss_pct": Field(Number(minimum=0, maximum=100), None, "random loss in % (needs netem)"),
}, doc="Shaping of a link; omitted keys leave it unshaped.")


def _topology(kind) -> Record:
    """The experiment-file record of a topology kind: its own parameters plus the shared keys."""
    common = {
        "kind": Field(Str(choices=(kind.name,)), REQUIRED, "topology builder"),
        "label": Field(NAME, None, "name in tables (default: kind and sizes)"),
        "link": Field(LINK, None, "shaping of every link (edge and core)"),
        "edge_link": Field(LINK, None, "shaping of host-switch links (overrides link)"),
        "core_link": Field(LINK, None, "shaping of switch-switch links (overrides link)"),
    }

    def too_large(spec: dict, node, ctx: Context, key: str) -> None:
        problem = kind.size_problem(spec)
        if problem:
            ctx.error(node, key, problem)

    return Record(f"topology '{kind.name}'", {**common, **kind.params}, doc=kind.doc, extra_check=too_large)


TOPOLOGY = Tagged({name: _topology(kind) for name, kind in TOPOLOGY_KINDS.items()})

CONTROLLER = Record("controller", {
    "kind": Field(Str(choices=CONTROLLER_KINDS), REQUIRED, "which adapter runs it"),
    "label": Field(NAME, None, "column name in tables (default: kind)"),
    "openflow": Field(Str(choices=OPENFLOW), None, "OpenFlow version (default: the experiment's)"),
    "app": Field(Str(), None, "adapter-specific application (see docs/controllers.md)"),
    "cpus": Field(_positive(), None, "pin the controller to this many cores"),
    "fail_mode": Field(Str(choices=("secure", "standalone")), None,
                       "switch fail mode with this controller (default: network.fail_mode)"),
    "host": Field(Str(), "127.0.0.1", "address the controller listens on (remote: where it runs)"),
    "port": Field(Number(integer=True, minimum=1, maximum=65535), 6653, "OpenFlow TCP port"),
    "rest_port": Field(Number(integer=True, minimum=1, maximum=65535), None, "northbound REST port"),
    "rest_url": Field(Str(), None, "remote: REST base URL, recorded with results"),
    "options": Field(Any_(), {}, "adapter options passed through"),
})

NETWORK = Record("network", {
    "datapath": Field(Str(choices=("auto", "kernel", "user")), "auto",
                      "OVS datapath: kernel module when present, else userspace netdev"),
    "fail_mode": Field(Str(choices=("secure", "standalone")), "secure",
                       "what switches do without a controller"),
    "link": Field(LINK, None, "default shaping of every link"),
    "connect_timeout_s": Field(Number(exclusive_minimum=0), 60, "how long to wait for every switch to connect"),
})

FLOW = Record("flow", {
    "src": Field(Str(), "first", "sending host: a name like h1, or first / last"),
    "dst": Field(Str(), "last", "receiving host: a name like h8, or first / last"),
    "proto": Field(Str(choices=("udp", "tcp", "icmp")), "udp", "protocol"),
    "size_bytes": Field(Number(integer=True, minimum=1, maximum=65507), None, "payload bytes per packet"),
    "rate_pps": Field(Number(exclusive_minimum=0), None, "constant send rate in packets/s"),
    "rate_bps": Field(Number(exclusive_minimum=0), None, "send rate in bit/s (payload)"),
    "duration_s": Field(Number(exclusive_minimum=0), None, "how long to send"),
    "count": Field(_positive(), None, "exact number of packets to send"),
    "volume_bytes": Field(_positive(), None, "TCP: bytes to transfer"),
    "meter": Field(Str(choices=("owd", "rtt")), "owd", "one-way delay or round-trip meter"),
    "port": Field(Number(integer=True, minimum=1, maximum=65535), None, "destination port"),
    "options": Field(Any_(), {}, "engine-specific options"),
}, extra_check=lambda v, node, ctx, key: _check_flow(v, node, ctx, key))


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


class Sweep(Type):
    """Fields to vary: each key one of `sweepable`, each value a list of that field's values."""

    def __init__(self, fields: dict[str, Field], sweepable: tuple[str, ...]):
        self.fields, self.sweepable = fields, sweepable

    def check(self, node, ctx, key):
        inner = Mapping(ListOf(Any_()), keys=lambda k: None if k in self.sweepable else
                        f"cannot sweep '{k}'; sweepable: {', '.join(self.sweepable)}")
        if inner.check(node, ctx, key) is None:
            return None
        out = {}
        for knode, vnode in node.value:
            ftype = self.fields[knode.value].type
            values = [ftype.check(item, ctx, f"{key}.{knode.value}[{i}]") for i, item in enumerate(vnode.value)]
            if any(v is None for v in values):
                return None
            out[knode.value] = values
        return out

    def jsonschema(self):
        return {"type": "object", "propertyNames": {"enum": list(self.sweepable)},
                "additionalProperties": {"type": "array", "minItems": 1}}


FLOW_SWEEPABLE = ("size_bytes", "rate_pps", "rate_bps", "duration_s", "count", "volume_bytes", "proto", "meter")
ENGINE = Field(Str(choices=ENGINES), ENGINES[0], "traffic engine: " + ", ".join(ENGINES))

TRAFFIC_WORKLOAD = Record("traffic workload", {
    "name": Field(NAME, REQUIRED, "name of the workload in tables"),
    "type": Field(Str(choices=("traffic",)), "traffic", "traffic between emulated hosts (the default)"),
    "engine": ENGINE,
    "flows": Field(ListOf(FLOW), REQUIRED, "flows run at the same time"),
    "sweep": Field(Sweep({**FLOW.fields, "engine": ENGINE}, FLOW_SWEEPABLE + ("engine",)), {},
                   "flow fields (or engine) to vary; every combination is a trial"),
}, doc="Flows between hosts of each topology, measured by a traffic engine.")

SBI_FIELDS = {
    "name": Field(NAME, REQUIRED, "name of the workload in tables"),
    "type": Field(Str(choices=("sbi",)), REQUIRED, "southbound load: emulated switches raise PACKET_INs"),
    "mode": Field(Str(choices=("throughput", "latency")), "throughput",
                  "throughput: a window of PACKET_INs per switch; latency: one at a time"),
    "switches": Field(_positive(), 16, "emulated switches (cbench -s)"),
    "macs_per_switch": Field(_positive(), 1000, "unique source MACs per switch (cbench -M)"),
    "loops": Field(_positive(), 6, "measured loops (cbench -l)"),
    "ms_per_loop": Field(_positive(), 1000, "length of a loop in ms (cbench -m)"),
    "warmup_loops": Field(Number(integer=True, minimum=0), 1, "loops discarded first (cbench -w)"),
    "window": Field(_positive(), None, "outstanding PACKET_INs per switch in throughput mode (default: auto)"),
    "topology_aware": Field(Bool(), False, "emulated switches form each topology of the experiment and "
                                            "answer LLDP, so controllers see the real graph"),
    "paths": Field(Bool(), False, "with topology_aware: each switch's hosts send to the farthest switch, and "
                                  "the multi-hop flow setup (PACKET_IN at ingress to FLOW_MOD at egress) is timed"),
    "options": Field(ListOf(Str(), min_items=0), [], "extra sdnbench-ofload flags"),
}
def _check_sbi(w: dict, node, ctx: Context, key: str) -> None:
    """Paths exist only between the switches of a topology."""
    if w["paths"] and not w["topology_aware"]:
        ctx.error(node, f"{key}.paths" if key else "paths", "needs topology_aware: true (paths run across a topology)")


SBI_WORKLOAD = Record("sbi workload", {
    **SBI_FIELDS,
    "sweep": Field(Sweep(SBI_FIELDS, ("mode", "switches", "macs_per_switch", "window")), {},
                   "parameters to vary; every combination is a trial"),
}, doc="Southbound benchmark (cbench's job, OpenFlow 1.0 and 1.3) with sdnbench-ofload; no network is built.",
   extra_check=_check_sbi)

ATTACK = Record("attack", {
    "kind": Field(Str(choices=("syn", "udp", "icmp", "newflows")), REQUIRED,
                  "flood type; newflows: a fresh source MAC and IP per packet, so each one reaches the controller"),
    "sources": Field(ListOf(Str(), scalar_ok=True), ["first"], "attacking hosts (one: DoS, several: DDoS)"),
    "target": Field(Str(), "last", "attacked host: a host name, first or last (never outside the network)"),
    "rate_pps": Field(Number(exclusive_minimum=0), None, "packets/s per source (default: as fast as possible)"),
    "spoof": Field(Bool(), False, "random source addresses, drawn inside 10.0.0.0/8 only"),
    "size_bytes": Field(_positive(), 64, "payload bytes per packet"),
    "start_s": Field(Number(minimum=0), 0, "seconds after the phase starts"),
    "duration_s": Field(Number(exclusive_minimum=0), None, "how long (default: until the phase ends)"),
}, doc="A flood from emulated hosts to an emulated host, during a northbound phase.")

OVERLOAD = Record("overload", {
    "multiple": Field(Number(exclusive_minimum=0), 1.5, "request rate as a multiple of the load phase's throughput"),
    "duration_s": Field(_positive(integer=False), 60, "how long to hold it"),
}, doc="The stress phase: prolonged load above the measured capacity.")

NBI_WORKLOAD = Record("nbi workload", {
    "name": Field(NAME, REQUIRED, "name of the workload in tables"),
    "type": Field(Str(choices=("nbi",)), REQUIRED, "northbound REST API load, stress and attacks"),
    "preset": Field(Str(), None, "request preset (default: the one for each controller kind)"),
    "variables": Field(Any_(), {}, "values for the preset's ${placeholders} (dpid defaults to the first switch)"),
    "requests": Field(ListOf(Any_(), min_items=0), [], "request templates: method, path, headers, body, weight"),
    "stages": Field(ListOf(Str(predicate=lambda v: _stage_problem(v))), REQUIRED,
                    "load phase schedule, e.g. ['ramp:0rps:1000rps:60s', 'const:1000rps:30s']"),
    "max_in_flight": Field(_positive(), 200, "cap on concurrent requests"),
    "timeout_ms": Field(_positive(), 5000, "request timeout"),
    "keep_alive": Field(Bool(), True, "reuse connections (false: Connection: close)"),
    "overload": Field(OVERLOAD, None, "add a stress phase above the measured throughput"),
    "dos": Field(ATTACK, None, "add a phase with this attack from one host"),
    "ddos": Field(ATTACK, None, "add a phase with this attack from several hosts"),
    "attack_duration_s": Field(_positive(integer=False), 60, "length of the dos and ddos phases"),
    "attack_load_multiple": Field(Number(exclusive_minimum=0), 1.0,
                                  "request rate during attacks, as a multiple of the load phase's throughput"),
}, doc="Northbound API load (open loop), then optional stress (overload), DoS and DDoS phases; "
       "each phase is a row.")

WORKLOAD = Tagged({"traffic": TRAFFIC_WORKLOAD, "sbi": SBI_WORKLOAD, "nbi": NBI_WORKLOAD},
                  tag="type", default="traffic")


def _stage_problem(stage: str) -> str | None:
    from .units import check_stage

    return check_stage(stage)


def _check_experiment(exp: dict, node, ctx: Context, key: str) -> None:
    """Workloads that run on emulated networks need topologies."""
    needs = [w["name"] for w in exp["workloads"] if w["type"] in ("traffic", "nbi")
             or (w["type"] == "sbi" and w["topology_aware"])]
    if needs and not exp["topologies"]:
        ctx.error(node, "topologies", f"required by workloads {', '.join(needs)} (they run on emulated networks)")


EXPERIMENT = Record("experiment", {
    "name": Field(NAME, REQUIRED, "experiment name (part of the run directory's name)"),
    "description": Field(Str(), "", "free text"),
    "repetitions": Field(_positive(), 3, "repetitions of every trial"),
    "openflow": Field(Str(choices=OPENFLOW), "1.3", "default OpenFlow version"),
    "controllers": Field(ListOf(CONTROLLER), REQUIRED, "controllers to compare (columns)"),
    "topologies": Field(ListOf(TOPOLOGY), [], "topologies to build (needed by traffic workloads)"),
    "workloads": Field(ListOf(WORKLOAD), REQUIRED, "what to measure: traffic, sbi, nbi"),
    "network": Field(NETWORK, None, "emulation settings"),
    "restart": Field(Str(choices=("per_group", "per_repetition")), "per_group",
                     "rebuild network and controller once per controller x topology, or every repetition"),
    "cooldown_s": Field(Number(minimum=0), 1, "pause between trials"),
}, doc="An sdnbench experiment: controllers x topologies x workloads x sweep x repetitions.",
   extra_check=lambda v, node, ctx, key: _check_experiment(v, node, ctx, key))


def defaults_of(record: Record) -> dict:
    """A record's default values (used when an optional record is omitted)."""
    ctx = Context()
    return record.check(yaml.compose("{}"), ctx, "") or {}


def experiment_jsonschema() -> dict:
    """The published JSON Schema of experiment files."""
    schema = EXPERIMENT.jsonschema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://sdnbench.dev/schemas/experiment.schema.json"
    schema["title"] = "sdnbench experiment"
    return schema
