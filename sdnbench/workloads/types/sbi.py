"""The `sbi` workload type: southbound load, emulated switches raising PACKET_INs (cbench's job).

No network is built: sdnbench-ofload emulates the switches. With
`topology_aware` they form each topology of the experiment (and answer LLDP),
so the workload runs once per topology.
"""

from __future__ import annotations

import json

from ...config.fields import Bool, Context, Field, ListOf, Number, Str, positive
from ...config.sweep import Sweep
from ...procs import cpus_left_over
from ..base import FlowResult, TrialContext, WorkloadType, workload_record
from ..sbi import (METRICS, OFLOAD_DEFAULT_PORTS, OFLOAD_FIRST_DPID, OfloadOptions, apply_profile, run_ofload,
                   topology_links)

#: sdnbench-ofload's own limits: one TCP connection per switch, 65,535 at most; host
#: MACs are numbered in 24 bits; a loop shorter than 10 ms measures nothing.
MAX_SWITCHES = 65_535
MAX_MACS = 16_777_214
MIN_LOOP_MS = 10
#: A loop of ten minutes, ten thousand loops: far beyond cbench's seconds-long runs.
MAX_LOOP_MS = 600_000
MAX_LOOPS = 10_000
#: Outstanding PACKET_INs per switch; ofload keeps two slots for each (auto: at most 4,096).
MAX_WINDOW = 1_048_576

FIELDS = {
    "mode": Field(Str(choices=("throughput", "latency")), "throughput",
                  "throughput: a window of PACKET_INs per switch; latency: one at a time"),
    "switches": Field(positive(maximum=MAX_SWITCHES), 16, "emulated switches (cbench -s)"),
    "macs_per_switch": Field(positive(maximum=MAX_MACS), 1000, "unique source MACs per switch (cbench -M)"),
    "loops": Field(positive(maximum=MAX_LOOPS), 6, "measured loops (cbench -l)"),
    "ms_per_loop": Field(Number(integer=True, minimum=MIN_LOOP_MS, maximum=MAX_LOOP_MS), 1000,
                         "length of a loop in ms (cbench -m)"),
    "warmup_loops": Field(Number(integer=True, minimum=0, maximum=MAX_LOOPS), 1, "loops discarded first (cbench -w)"),
    "window": Field(positive(maximum=MAX_WINDOW), None,
                    "outstanding PACKET_INs per switch in throughput mode (default: auto)"),
    "topology_aware": Field(Bool(), False, "emulated switches form each topology of the experiment and "
                                            "answer LLDP, so controllers see the real graph"),
    "paths": Field(Bool(), False, "with topology_aware: each switch's hosts send to the farthest switch, and "
                                  "the multi-hop flow setup (PACKET_IN at ingress to FLOW_MOD at egress) is timed"),
    "options": Field(ListOf(Str(), min_items=0, max_items=100), [], "extra sdnbench-ofload flags"),
}
SWEEPABLE = ("mode", "switches", "macs_per_switch", "window")


def _check(w: dict, node, ctx: Context, key: str) -> None:
    """Paths exist only between the switches of a topology; sdnbench-ofload needs a loop after warm-up."""
    if w["paths"] and not w["topology_aware"]:
        ctx.error(node, f"{key}.paths" if key else "paths", "needs topology_aware: true (paths run across a topology)")
    if w["warmup_loops"] >= w["loops"]:
        ctx.error(node, f"{key}.warmup_loops" if key else "warmup_loops",
                  f"{w['warmup_loops']} warm-up loops leave none of {w['loops']} loops measured; give fewer")


def ofload_preflight(exp, index: int, verb: str) -> list[str]:
    """Problems of a workload run by sdnbench-ofload: the binary is missing, or a controller is none at all."""
    from ...controllers import ADAPTERS
    from ...paths import build_hint, native_tool

    problems = []
    if native_tool("sdnbench-ofload") is None:
        problems.append(exp.at(f"workloads[{index}].type",
                               f"sdnbench-ofload is not built; fix: {build_hint('sdnbench-ofload')}"))
    for j, spec in enumerate(exp.controllers):
        if ADAPTERS[spec.kind].standalone:
            problems.append(exp.at(f"controllers[{j}].kind", f"'{spec.kind}' has no controller to {verb}; "
                                                              f"workload {exp.workloads[index]['name']} needs one"))
    return problems


class SouthboundWorkload(WorkloadType):
    """sdnbench-ofload against the controller's OpenFlow port."""

    name = "sbi"
    record = workload_record("sbi", "southbound load: emulated switches raise PACKET_INs", {
        **FIELDS,
        "sweep": Field(Sweep(FIELDS, SWEEPABLE), {}, "parameters to vary; every combination is a trial"),
    }, doc="Southbound benchmark (cbench's job, OpenFlow 1.0 and 1.3) with sdnbench-ofload; no network is built.",
        extra_check=_check, on_network=False)
    sweep_doc = "sbi workloads sweep " + ", ".join(f"`{k}`" for k in SWEEPABLE) + "."
    metrics = METRICS
    headline_formats = (("responses_per_s_mean", "{:.0f} responses/s"), ("latency_p50_us", "p50 {:.0f} us"))

    def needs_network(self, workload: dict) -> bool:
        return False

    def needs_topology(self, workload: dict) -> bool:
        return workload["topology_aware"]

    def expected_seconds(self, trial) -> float:
        loops = trial.workload["loops"] + trial.workload["warmup_loops"]
        return loops * trial.workload["ms_per_loop"] / 1000.0

    def emulated_switches(self, trials: list) -> dict[int, int]:
        switches, ports = 0, OFLOAD_DEFAULT_PORTS
        for t in trials:
            if t.workload["topology_aware"]:
                names = {s.name for s in t.graph.switches}
                degree = max((sum(1 for link in t.graph.links if n in (link.a, link.b) and link.a in names
                                  and link.b in names) for n in names), default=0)
                switches, ports = max(switches, len(names)), max(ports, 2 + degree)
            else:
                switches = max(switches, t.setting("switches"))
        return {OFLOAD_FIRST_DPID + i: ports for i in range(switches)}

    def preflight(self, exp, index: int) -> list[str]:
        """sbi needs the ofload binary and controllers that take OpenFlow connections."""
        return ofload_preflight(exp, index, "load")

    def run(self, trial, ctx: TrialContext) -> tuple[list[FlowResult], dict]:
        wl, adapter = trial.workload, ctx.adapter
        opts = OfloadOptions(
            switches=trial.setting("switches"), macs_per_switch=trial.setting("macs_per_switch"),
            loops=wl["loops"], ms_per_loop=wl["ms_per_loop"], warmup_loops=wl["warmup_loops"],
            throughput=trial.setting("mode") == "throughput", window=trial.setting("window"),
            extra_args=list(wl["options"]))
        if wl["topology_aware"]:
            topo_file = ctx.workdir / "ofload-topology.json"
            topo_file.write_text(json.dumps(topology_links(trial.graph)))
            opts.topology_file = topo_file
            opts.switches = len(trial.graph.switches)
            opts.paths = wl["paths"]
        # The controller says how its PACKET_INs must look (Faucet: its pipeline's cookie, VLAN, ...).
        profile = adapter.southbound_profile()
        if not profile.reactive:
            # A rate of zero would read as a slow controller; say why there is no number instead.
            return [FlowResult("ofload", "sdnbench-ofload", errors=[profile.why or "not applicable"], clock="")], \
                {"southbound_profile": profile.why}
        opts = apply_profile(opts, profile)
        spec = adapter.spec
        # A pinned controller gets its cores to itself: the generator runs on the others. Unpinned, a
        # multi-threaded Python controller's threads convoy on the GIL across both cores whenever the
        # generator leaves one idle, and its rate swings with the scheduler (docs/ofload.md).
        # There it also busy-polls, as cbench does: a sleeping generator is woken by every send of
        # the controller, and the controller's core pays for the wake-up.
        generator_cpus = cpus_left_over(spec.cpus) if spec.host in ("127.0.0.1", "localhost") else None
        if generator_cpus:
            opts.busy_poll = True
        res = run_ofload(spec.host, spec.port, spec.openflow, opts, cpus=generator_cpus)
        metrics = {k: (float(v) if isinstance(v, (bool, int, float)) else None) for k, v in res.metrics.items()}
        series = [{"t_s": iv["t_s"], "responses_per_s": iv["responses_per_s"], "matched_per_s": iv["matched_per_s"]}
                  for iv in res.intervals if not iv.get("warmup")]
        result = FlowResult("ofload", "sdnbench-ofload", metrics, series,
                            {"ofload.jsonl": res.raw, "ofload.stderr": res.stderr}, clock="")
        if not res.metrics.get("valid"):
            reasons = res.summary.get("invalid_reasons") or ["the generator saturated or switches failed to connect"]
            result.errors.append("not valid: " + "; ".join(reasons))
        env = {"engine": "sdnbench-ofload", "engine_argv": res.argv, "generator_cpus": generator_cpus}
        if profile.why:
            env["southbound_profile"] = profile.why
        return [result], env


WORKLOAD = SouthboundWorkload()
