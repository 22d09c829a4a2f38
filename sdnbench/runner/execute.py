"""Run one trial's workload and return its measurements as FlowResults.

Every workload type reports through the same record the store keeps: traffic
engines return one FlowResult per flow; southbound load returns one for the
generator's run (metrics, per-loop series, raw JSON Lines).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..procs import cpus_left_over
from ..workloads.traffic.base import FlowResult
from ..workloads.traffic.registry import make_engine
from .plan import Trial


def execute(trial: Trial, net, adapter, workdir: Path, store=None) -> tuple[list[FlowResult], dict]:
    """Run trial; returns (results, what to add to the trial's environment record)."""
    if trial.kind == "traffic":
        engine = make_engine(trial.setting("engine"))
        env = {"engine": engine.name, "engine_version": engine.version()}
        return engine.run(trial.flows, net.hosts, workdir), env
    if trial.kind == "sbi":
        return _southbound(trial, adapter, workdir)
    if trial.kind == "nbi":
        from .northbound import run_phase

        return run_phase(trial, net, adapter, workdir, store)
    raise ValueError(f"unknown workload type {trial.kind!r}")


# sdnbench-ofload numbers its switches from dpid 1 and gives each 4 ports, or in
# topology mode ports 1-2 for hosts plus one per switch link from port 3.
OFLOAD_FIRST_DPID = 1
OFLOAD_DEFAULT_PORTS = 4


def southbound_datapaths(trials: list[Trial]) -> dict[int, int]:
    """dpid -> port count of every switch sdnbench-ofload will emulate in these trials
    (for controllers that must know their switches in advance, such as Faucet)."""
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


def _southbound(trial: Trial, adapter, workdir: Path) -> tuple[list[FlowResult], dict]:
    from ..workloads.sbi import OfloadOptions, apply_profile, run_ofload

    opts = OfloadOptions(
        switches=trial.setting("switches"), macs_per_switch=trial.setting("macs_per_switch"),
        loops=trial.workload["loops"], ms_per_loop=trial.workload["ms_per_loop"],
        warmup_loops=trial.workload["warmup_loops"], throughput=trial.setting("mode") == "throughput",
        window=trial.setting("window"), extra_args=list(trial.workload["options"]))
    if trial.workload["topology_aware"]:
        from ..workloads.sbi import topology_links

        topo_file = workdir / "ofload-topology.json"
        topo_file.write_text(json.dumps(topology_links(trial.graph)))
        opts.topology_file = topo_file
        opts.switches = len(trial.graph.switches)
        opts.paths = trial.workload["paths"]
    # The controller says how its PACKET_INs must look (Faucet: its pipeline's cookie, VLAN, ...).
    profile = adapter.southbound_profile()
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
