"""The experiment file format, defined once: validation and JSON Schema come from here."""

from __future__ import annotations

import yaml

from ..controllers import ADAPTERS
from ..emulation.links import LINKS
from ..emulation.switches import SWITCHES
from ..topology import KINDS as TOPOLOGY_KINDS
from ..workloads.types import DEFAULT_TYPE, WORKLOAD_TYPES
from .fields import (NAME, REQUIRED, Any_, Context, Field, ListOf, Number, Record, Str, Tagged,
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


LINK = Record("link", {
    "bw_mbps": Field(positive(integer=False, maximum=MAX_LINK_MBPS), None, "bandwidth limit in Mbit/s (HTB)"),
    "delay_ms": Field(Number(minimum=0, maximum=MAX_DELAY_MS), None, "one-way delay in ms (needs the kernel's netem)"),
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
    "cpus": Field(positive(maximum=MAX_CPUS), None, "pin the controller to this many cores"),
    "fail_mode": Field(Str(choices=("secure", "standalone")), None,
                       "switch fail mode with this controller (default: network.fail_mode)"),
    "host": Field(Str(), "127.0.0.1", "address the controller listens on (remote: where it runs)"),
    "port": Field(Number(integer=True, minimum=1, maximum=65535), 6653, "OpenFlow TCP port"),
    "rest_port": Field(Number(integer=True, minimum=1, maximum=65535), None, "northbound REST port"),
    "rest_url": Field(Str(), None, "remote: REST base URL, recorded with results"),
    "options": Field(Any_(), {}, "adapter options passed through"),
})

NETWORK = Record("network", {
    "switch": Field(Str(choices=SWITCHES.names()), "ovs",
                    "switch implementation: ovs = Open vSwitch bridges (on the datapath below); ovs_fast = "
                    "the same with patch ports on unshaped switch links and AF_XDP host ports where they "
                    "work (docs/dataplane.md)"),
    "datapath": Field(Str(choices=("auto", "kernel", "user")), "auto",
                      "OVS datapath: kernel module when present, else userspace netdev"),
    "links": Field(Str(choices=LINKS.names()), "veth_tc",
                   "link realisation: veth_tc = veth pairs shaped by tc (HTB; netem for delay/loss)"),
    "fail_mode": Field(Str(choices=("secure", "standalone")), "secure",
                       "what switches do without a controller"),
    "link": Field(LINK, None, "default shaping of every link"),
    "connect_timeout_s": Field(positive(integer=False, maximum=MAX_WAIT_S), 60,
                               "how long to wait for every switch to connect"),
})

WORKLOAD = Tagged({name: t.record for name, t in WORKLOAD_TYPES.items()}, tag="type", default=DEFAULT_TYPE)


def _check_experiment(exp: dict, node, ctx: Context, key: str) -> None:
    """Workloads that run on emulated networks need topologies."""
    needs = [w["name"] for w in exp["workloads"] if WORKLOAD_TYPES[w["type"]].needs_topology(w)]
    if needs and not exp["topologies"]:
        ctx.error(node, "topologies", f"required by workloads {', '.join(needs)} (they run on emulated networks)")


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
