"""The experiment file format, defined once: validation and JSON Schema come from here."""

from __future__ import annotations

import yaml

from ..controllers import ADAPTERS
from ..emulation.links import link_choices
from ..emulation.switches import SWITCHES
from ..media import DEFAULT as DEFAULT_MEDIUM
from ..media import MEDIA
from ..topology import KINDS as TOPOLOGY_KINDS
from ..workloads.types import DEFAULT_TYPE, WORKLOAD_TYPES
from .cluster import CLUSTER, check_cluster_experiment
from .fields import (NAME, REQUIRED, Any_, Bool, Context, Field, ListOf, Number, Record, Str, Tagged,
                     positive)
from .limits import MAX_CONTROLLERS, MAX_REPETITIONS, MAX_TOPOLOGIES, MAX_WAIT_S, MAX_WORKLOADS

# Choices come from the registries: a new controller, topology or workload type is a module there.
CONTROLLER_KINDS = tuple(ADAPTERS)
OPENFLOW = ("1.0", "1.3")
#: Link bounds: 100 Gbit/s is beyond any veth pair; 10 s one way is beyond any real
#: path (a geostationary hop is 0.25 s).
MAX_LINK_MBPS = 100_000
MAX_DELAY_MS = 10_000
#: Cores a controller may be pinned to: more than any machine sdnbench runs on.
MAX_CPUS = 1_024


PCT = Number(minimum=0, maximum=100)
#: Loss parameters that belong to each loss model (netem's `loss random | gemodel | state`).
LOSS_MODEL_KEYS = {
    "bernoulli": ("loss_pct", "loss_correlation_pct"),
    "gilbert_elliott": ("loss_p_pct", "loss_r_pct", "loss_bad_pct", "loss_good_pct"),
    "4state": ("loss_p13_pct", "loss_p31_pct", "loss_p32_pct", "loss_p23_pct", "loss_p14_pct"),
}


#: Link keys that mean nothing without another one.
_NEEDS = {"delay_correlation_pct": "jitter_ms", "reorder_gap": "reorder_pct", "reorder_correlation_pct": "reorder_pct",
          "duplicate_correlation_pct": "duplicate_pct", "corrupt_correlation_pct": "corrupt_pct",
          "rate_overhead_bytes": "rate_mbps"}


def _link_consistent(link: dict, node, ctx: Context, key: str) -> None:
    """Loss parameters of the chosen model only, and the combinations netem accepts."""
    def where(k: str) -> str:
        return f"{key}.{k}" if key else k

    model = link["loss_model"] or "bernoulli"
    for other, keys in LOSS_MODEL_KEYS.items():
        for k in keys:
            if other != model and link[k] is not None:
                ctx.error(node, where(k), f"belongs to loss_model {other}, not {model}")
    first = LOSS_MODEL_KEYS[model][0]
    if link["loss_model"] and link[first] is None:
        ctx.error(node, where(first), f"required by loss_model {model}")
    if (link["loss_p13_pct"] or 0) + (link["loss_p14_pct"] or 0) > 100:
        ctx.error(node, where("loss_p14_pct"), "loss_p13_pct + loss_p14_pct exceed 100")
    if (link["loss_p31_pct"] if link["loss_p31_pct"] is not None else 100) + (link["loss_p32_pct"] or 0) > 100:
        ctx.error(node, where("loss_p32_pct"), "loss_p31_pct + loss_p32_pct exceed 100")
    if link["reorder_pct"] and not link["delay_ms"]:
        ctx.error(node, where("reorder_pct"), "needs delay_ms (nothing to overtake without a delay)")
    if link["reorder_pct"] and link["keep_order"]:
        ctx.error(node, where("keep_order"), "contradicts reorder_pct")
    if link["delay_distribution"] not in (None, "uniform") and not link["jitter_ms"]:
        ctx.error(node, where("delay_distribution"), "needs jitter_ms (the distribution shapes the jitter)")
    for k, base in _NEEDS.items():
        if link[k] and not link[base]:
            ctx.error(node, where(k), f"needs {base}")


LINK = Record("link", {
    "bw_mbps": Field(positive(integer=False, maximum=MAX_LINK_MBPS), None,
                     "bandwidth limit in Mbit/s (HTB token bucket on both ends)"),
    "delay_ms": Field(Number(minimum=0, maximum=MAX_DELAY_MS), None,
                      "one-way delay in ms, each direction (netem delay)"),
    "jitter_ms": Field(Number(minimum=0, maximum=MAX_DELAY_MS), None,
                       "delay variation in ms: half-width (uniform) or standard deviation (normal); "
                       "jitter reorders frames, as in netem, unless keep_order"),
    "delay_distribution": Field(Str(choices=("uniform", "normal", "pareto", "paretonormal")), None,
                                "shape of the jitter (netem's distribution tables; default uniform)"),
    "delay_correlation_pct": Field(PCT, None, "correlation of successive delays in %"),
    "keep_order": Field(Bool(), False, "jitter without reordering: a frame never overtakes the one ahead"),
    "reorder_pct": Field(PCT, None, "frames sent at once, ahead of delayed ones, in % (netem reorder)"),
    "reorder_gap": Field(positive(maximum=1_000_000), None,
                         "reorder only every reorder_gap-th frame (netem's gap; default 1)"),
    "reorder_correlation_pct": Field(PCT, None, "correlation of successive reorder decisions in %"),
    "loss_model": Field(Str(choices=tuple(LOSS_MODEL_KEYS)), None,
                        "bernoulli (default, loss_pct), gilbert_elliott (loss_p/r/bad/good_pct) or "
                        "4state (loss_p13/p31/p32/p23/p14_pct)"),
    "loss_pct": Field(PCT, None, "random loss in % (Bernoulli)"),
    "loss_correlation_pct": Field(PCT, None, "correlation of successive loss decisions in % (netem's; it "
                                             "also changes the mean loss)"),
    "loss_p_pct": Field(PCT, None, "Gilbert-Elliott: good to bad transition probability in % (netem p)"),
    "loss_r_pct": Field(PCT, None, "Gilbert-Elliott: bad to good in % (netem r; default 100; mean burst 1/r)"),
    "loss_bad_pct": Field(PCT, None, "Gilbert-Elliott: loss in the bad state in % (netem 1-h; default 100)"),
    "loss_good_pct": Field(PCT, None, "Gilbert-Elliott: loss in the good state in % (netem 1-k; default 0)"),
    "loss_p13_pct": Field(PCT, None, "4-state: gap to burst-loss in % (netem p13)"),
    "loss_p31_pct": Field(PCT, None, "4-state: burst-loss to gap in % (netem p31; default 100)"),
    "loss_p32_pct": Field(PCT, None, "4-state: burst-loss to burst-received in % (netem p32; default 0)"),
    "loss_p23_pct": Field(PCT, None, "4-state: burst-received to burst-loss in % (netem p23; default 100)"),
    "loss_p14_pct": Field(PCT, None, "4-state: gap to isolated loss in % (netem p14; default 0)"),
    "duplicate_pct": Field(PCT, None, "frames sent twice in %"),
    "duplicate_correlation_pct": Field(PCT, None, "correlation of successive duplication decisions in %"),
    "corrupt_pct": Field(PCT, None, "frames with one bit flipped in %"),
    "corrupt_correlation_pct": Field(PCT, None, "correlation of successive corruption decisions in %"),
    "rate_mbps": Field(positive(integer=False, maximum=MAX_LINK_MBPS), None,
                       "serialisation rate in Mbit/s per direction (netem rate: each frame waits for the one "
                       "ahead, (length + rate_overhead_bytes) x 8 / rate)"),
    "rate_overhead_bytes": Field(Number(integer=True, minimum=-64, maximum=1_000), None,
                                 "bytes added to every frame's length for rate_mbps (e.g. 24 for Ethernet's "
                                 "preamble, FCS and gap)"),
    "queue_pkts": Field(positive(maximum=10_000_000), None,
                        "frames a direction holds at most, delayed ones included (netem limit; default 1000)"),
    "queue_bytes": Field(positive(maximum=10_000_000_000), None, "bytes a direction holds at most"),
}, doc="Shaping and impairment of a link, per direction, with netem's meanings; omitted keys leave it "
       "unshaped. bw_mbps is realised by HTB; everything else by netem (network.links: veth_tc, where the "
       "kernel has it) or by the userspace emulator (network.links: linkemu).",
    extra_check=_link_consistent)


def _topology(kind) -> Record:
    """The experiment-file record of a topology kind: its own parameters plus the shared keys."""
    common = {
        "kind": Field(Str(choices=(kind.name,)), REQUIRED, "topology builder"),
        "label": Field(NAME, None, "name in tables (default: kind and sizes)"),
        "link": Field(LINK, None, "shaping of every link (edge and core)"),
        "edge_link": Field(LINK, None, "shaping of host-switch links (overrides link)"),
        "core_link": Field(LINK, None, "shaping of switch-switch links (overrides link)"),
        **{name: Field(m.record, None, f"{name} settings for this topology alone (replace network.{name})")
           for name, m in MEDIA.items() if m.record},
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
    "cpus": Field(positive(maximum=MAX_CPUS), None, "pin the controller to this many cores"),
    "fail_mode": Field(Str(choices=("secure", "standalone")), None,
                       "switch fail mode with this controller (default: network.fail_mode)"),
    "host": Field(Str(), "127.0.0.1", "address the controller listens on (remote: where it runs)"),
    "port": Field(Number(integer=True, minimum=1, maximum=65535), 6653, "OpenFlow TCP port"),
    "rest_port": Field(Number(integer=True, minimum=1, maximum=65535), None, "northbound REST port"),
    "rest_url": Field(Str(), None, "remote: REST base URL, recorded with results"),
    "options": Field(Any_(), {}, "adapter options passed through"),
})

def _medium_links(network: dict, node, ctx: Context, key: str) -> None:
    """A medium only some link realisations carry (wireless: the link emulator's shared media)."""
    for medium in network["medium"]:
        need = MEDIA[medium].links
        if need and network["links"] not in ("auto", *need):
            ctx.error_at(node, f"{key}.links", f"medium {medium} needs links {' or '.join(need)} (or auto), "
                                            f"not {network['links']}")


NETWORK = Record("network", {
    "switch": Field(ListOf(Str(choices=SWITCHES.names()), keep_scalar=True, max_items=len(SWITCHES.names())),
                    "ovs",
                    "switch implementation, one or a list compared side by side (every topology is built with "
                    "each: rows named like spine-leaf-2x4-ovs and spine-leaf-2x4-p4; a controller runs only on "
                    "the switches whose southbound it speaks): ovs = Open vSwitch bridges (on the datapath "
                    "below); ovs_fast = the same with patch ports on unshaped switch links and AF_XDP host "
                    "ports where they work (docs/dataplane.md); p4 = bmv2 simple_switch_grpc processes "
                    "programmed over P4Runtime (docs/p4.md)"),
    "datapath": Field(Str(choices=("auto", "kernel", "user")), "auto",
                      "OVS datapath: kernel module when present, else userspace netdev"),
    "links": Field(Str(choices=link_choices()), "auto",
                   "link realisation: veth_tc = veth pairs shaped by tc (HTB; netem for delay, jitter, loss); "
                   "linkemu = impaired links through the userspace emulator sdnbench-linkemu (every netem "
                   "option, any kernel); auto = veth_tc where it can give every link, else linkemu"),
    "fail_mode": Field(Str(choices=("secure", "standalone")), "secure",
                       "what switches do without a controller"),
    "link": Field(LINK, None, "default shaping of every link"),
    "medium": Field(ListOf(Str(choices=tuple(MEDIA)), scalar_ok=True, max_items=len(MEDIA)), [DEFAULT_MEDIUM],
                    "how hosts reach their switches, one or a list compared side by side (every topology is "
                    "built on each: rows named like linear-7 and linear-7-wireless): " +
                    "; ".join(f"{n} = {m.doc}" for n, m in MEDIA.items())),
    **{name: Field(m.record, None, f"{name} settings of every topology (docs/wireless.md)")
       for name, m in MEDIA.items() if m.record},
    "connect_timeout_s": Field(positive(integer=False, maximum=MAX_WAIT_S), 60,
                               "how long to wait for every switch to connect"),
}, extra_check=_medium_links)

WORKLOAD = Tagged({name: t.record for name, t in WORKLOAD_TYPES.items()}, tag="type", default=DEFAULT_TYPE)


def _check_experiment(exp: dict, node, ctx: Context, key: str) -> None:
    """Workloads that run on emulated networks need topologies."""
    needs = [w["name"] for w in exp["workloads"] if WORKLOAD_TYPES[w["type"]].needs_topology(w)]
    if needs and not exp["topologies"]:
        ctx.error(node, "topologies", f"required by workloads {', '.join(needs)} (they run on emulated networks)")
    check_cluster_experiment(exp, node, ctx)


EXPERIMENT = Record("experiment", {
    "name": Field(NAME, REQUIRED, "experiment name (part of the run directory's name)"),
    "description": Field(Str(), "", "free text"),
    "repetitions": Field(positive(maximum=MAX_REPETITIONS), 3, "repetitions of every trial"),
    "openflow": Field(Str(choices=OPENFLOW), "1.3", "default OpenFlow version"),
    "controllers": Field(ListOf(CONTROLLER, max_items=MAX_CONTROLLERS, why="each is a column and a process"),
                         REQUIRED, "controllers to compare (columns)"),
    "topologies": Field(ListOf(TOPOLOGY, max_items=MAX_TOPOLOGIES, why="each is built when the file is checked"),
                        [], "topologies to build (needed by traffic workloads)"),
    "workloads": Field(ListOf(WORKLOAD, max_items=MAX_WORKLOADS), REQUIRED, "what to measure: traffic, sbi, nbi"),
    "network": Field(NETWORK, None, "emulation settings"),
    "restart": Field(Str(choices=("per_group", "per_repetition")), "per_group",
                     "rebuild network and controller once per controller x topology, or every repetition"),
    "cooldown_s": Field(Number(minimum=0, maximum=MAX_WAIT_S), 1, "pause between trials"),
    "on_failure": Field(Str(choices=("restart", "skip_group", "stop")), "restart",
                        "when the controller dies or switches drop during a trial (the trial is stored as "
                        "failed either way): restart what broke and go on, skip the rest of the controller x "
                        "topology group, or stop the campaign"),
    "cluster": Field(CLUSTER, None, "experimental: spread each topology over several machines (docs/scale-out.md)"),
}, doc="An sdnbench experiment: controllers x topologies x workloads x sweep x repetitions.",
   extra_check=lambda v, node, ctx, key: _check_experiment(v, node, ctx, key))


def defaults_of(record: Record) -> dict:
    """A record's default values (used when an optional record is omitted)."""
    ctx = Context()
    return record.check(yaml.compose("{}"), ctx, "") or {}


def _hoist(node, shared: dict, ref: str):
    """node with every copy of shared (whatever its description) replaced by a $ref to it."""
    if isinstance(node, dict):
        if {k: v for k, v in node.items() if k != "description"} == shared:
            return {"$ref": ref, **({"description": node["description"]} if "description" in node else {})}
        return {k: _hoist(v, shared, ref) for k, v in node.items()}
    if isinstance(node, list):
        return [_hoist(v, shared, ref) for v in node]
    return node


def experiment_jsonschema() -> dict:
    """The published JSON Schema of experiment files (the link and medium records, used everywhere, once
    in $defs)."""
    shared = {"link": LINK, **{name: m.record for name, m in MEDIA.items() if m.record}}
    schema = EXPERIMENT.jsonschema()
    for name, record in shared.items():
        plain = {k: v for k, v in record.jsonschema().items() if k != "description"}
        schema = _hoist(schema, plain, f"#/$defs/{name}")
    schema["$defs"] = {name: record.jsonschema() for name, record in shared.items()}
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://sdnbench.dev/schemas/experiment.schema.json"
    schema["title"] = "sdnbench experiment"
    return schema
