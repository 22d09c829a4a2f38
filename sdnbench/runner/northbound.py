"""One phase of a northbound workload: load, overload (stress), DoS or DDoS.

The load phase runs the experiment's stages. The later phases take their rate
from the load phase of the same repetition, read back from the store (so a
resumed campaign finds it too): overload at `multiple` x the measured
throughput, attacks at `attack_load_multiple` x it while floods run inside the
emulated network.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ConfigError, ToolError
from ..workloads.traffic.base import FlowResult
from .plan import Trial, nbi_phase_seconds

#: Per-phase metrics of northbound load: name -> (unit, description).
NBI_METRICS: dict[str, tuple[str, str]] = {
    "target_rps": ("requests/s", "mean intended request rate"),
    "achieved_rps": ("requests/s", "mean rate at which requests were actually sent"),
    "throughput_rps": ("requests/s", "successful responses per second"),
    "error_rate_pct": ("%", "failed requests as a percentage of requests sent"),
    "latency_p50_ms": ("ms", "median latency from the intended send time"),
    "latency_p99_ms": ("ms", "99th percentile latency from the intended send time"),
    "failure_pattern_code": ("0/1/2", "failure pattern: 0 none, 1 partial, 2 continuous"),
    "longest_failure_run": ("requests", "longest run of consecutive failed requests"),
    "attack_pkts_sent": ("packets", "attack packets sent during the phase"),
}
PATTERN_CODE = {"none": 0.0, "partial": 1.0, "continuous": 2.0}


def default_preset(kind: str) -> str | None:
    """The request preset made for a controller kind (first that lists it)."""
    from ..workloads.nbi_presets import PRESETS

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


def _stages(trial: Trial, store) -> list[str]:
    from ..workloads.nbi import overload_stage

    wl, phase = trial.workload, trial.sweep_point["phase"]
    if phase == "load":
        return list(wl["stages"])
    raw = store.raw(trial.key_at({"phase": "load"}))
    if "nbi.summary.json" not in raw:
        raise ToolError(f"phase {phase} needs the load phase of repetition {trial.repetition}, which has no result")
    multiple = wl["overload"]["multiple"] if phase == "overload" else wl["attack_load_multiple"]
    seconds = nbi_phase_seconds(wl, phase)
    return [overload_stage(json.loads(raw["nbi.summary.json"]), multiple, f"{seconds:g}s")]


def _attack(trial: Trial, net, workdir: Path):
    """Start the phase's attack, if it has one."""
    phase = trial.sweep_point["phase"]
    if phase not in ("dos", "ddos"):
        return None
    from ..workloads.attack import AttackSpec, start_attacks

    a = trial.workload[phase]
    spec = AttackSpec(kind=a["kind"], sources=list(a["sources"]), target=a["target"], rate_pps=a["rate_pps"],
                      spoof=a["spoof"], size_bytes=a["size_bytes"], start_s=a["start_s"],
                      duration_s=a["duration_s"] or nbi_phase_seconds(trial.workload, phase) - a["start_s"])
    return start_attacks([spec], net.hosts, trial.graph, workdir)


def run_phase(trial: Trial, net, adapter, workdir: Path, store) -> tuple[list[FlowResult], dict]:
    """Run one northbound phase; returns the API result (and the attack's, in attack phases)."""
    from ..workloads.nbi import NbiSpec, headline, run_nbi

    wl = trial.workload
    preset = wl["preset"] or default_preset(adapter.spec.kind)
    if preset is None and not wl["requests"]:
        raise ConfigError(f"no request preset for {adapter.spec.kind}; give workload {wl['name']} "
                          f"a preset or requests")
    variables = {"dpid": trial.graph.switches[0].dpid, "probe_ip": trial.graph.hosts[-1].ip,
                 **(wl["variables"] or {})}
    spec = NbiSpec(url=rest_base(adapter), stages=tuple(_stages(trial, store)), preset=preset,
                   variables=variables, requests=tuple(wl["requests"]), max_in_flight=wl["max_in_flight"],
                   timeout=f"{wl['timeout_ms']}ms", keep_alive=wl["keep_alive"])
    attack = _attack(trial, net, workdir)
    try:
        res = run_nbi(spec, workdir, timeout_s=nbi_phase_seconds(wl, trial.sweep_point["phase"]) + 60)
    finally:
        if attack is not None:
            attack.stop()
    head = headline(res.summary)
    metrics = {k: float(v) for k, v in head.items() if isinstance(v, (int, float)) and k in NBI_METRICS}
    metrics["failure_pattern_code"] = PATTERN_CODE.get(head["failure_pattern"])
    api = FlowResult("api", "sdnbench-apiload", metrics, res.series,
                     {"nbi.jsonl": res.raw_path.read_text(), "nbi.summary.json": json.dumps(res.summary)}, clock="")
    results = [api]
    if attack is not None:
        for i, outcome in enumerate(attack.results()):
            results.append(FlowResult(f"attack{i}", "attack", {"attack_pkts_sent": outcome.get("packets_sent")},
                                      raw={f"attack{i}.json": json.dumps(outcome)}, clock=""))
    return results, {"engine": "sdnbench-apiload", "nbi_preset": preset, "nbi_url": spec.url}
