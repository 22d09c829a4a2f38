"""Stores written through the ResultStore API, shaped like real runs, with known values and known faults.

traffic rows (3 controllers x 2 topologies x 2 packet sizes, 5 repetitions) with
metrics drawn from normal distributions of known mean and 3 % spread; one cell
whose every repetition failed, one with a failed repetition, one whose tools
reported an error; per-second series and stored delay percentiles. Optional
northbound phases (load, dos with an attack window) and southbound rows.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from sdnbench.results.store import ResultStore, TrialRecord
from sdnbench.workloads.base import FlowResult

EXPERIMENT = """\
name: crafted
description: a store written by the tests, shaped like the quickstart
repetitions: 5
controllers: [{kind: osken}, {kind: ryu}, {kind: none, label: no-sdn}]
topologies: [{kind: single, hosts: 8}, {kind: linear, switches: 7, hosts: 8}]
workloads:
  - name: udp-cbr
    flows: [{src: first, dst: last, proto: udp, rate_pps: 5000, duration_s: 2}]
    sweep: {size_bytes: [128, 1024]}
"""

CONTROLLERS = ("osken", "ryu", "no-sdn")
TOPOLOGIES = ("single-8", "linear-7")
SIZES = (128, 1024)
REPETITIONS = 5
SPREAD = 0.03            # relative standard deviation of every metric
SECONDS = 5

ALL_FAILED = ("ryu", "linear-7", 1024)        # every repetition failed
ONE_FAILED = ("osken", "single-8", 128)       # repetition 1 failed
FLAGGED = ("no-sdn", "linear-7", 128)         # ok, but the sender missed its rate in repetition 2
FAULTED = ("osken", "single-8", 1024)         # the controller killed at 2 s, switches back at about 3 s


def means(ctrl: str, topology: str, size: int) -> dict[str, float]:
    """The true mean of each metric in one cell."""
    hops = 1 if topology == "single-8" else 7
    slow = {"osken": 1.3, "ryu": 1.2, "no-sdn": 1.0}[ctrl]
    return {"owd_mean_ms": 0.05 * hops * slow * (1 + size / 2048), "jitter_ms": 0.02 * hops * slow,
            "loss_pct": 0.5 * hops * slow, "throughput_bps": 5000 * size * 8 * (1 - 0.005 * hops * slow),
            "tx_rate_ratio": 0.99, "owd_p50_ms": 0.045 * hops * slow, "owd_p99_ms": 0.2 * hops * slow}


def craft(path: Path, seed: int = 1, planted: dict | None = None, nbi: bool = False, sbi: bool = False) -> Path:
    """Write a run directory at path; planted maps (controller, topology, size, metric) to a factor on its mean."""
    rng = random.Random(seed)
    path.mkdir(parents=True, exist_ok=True)
    store = ResultStore.in_rundir(path)
    store.save_campaign("crafted", str(path / "crafted.yaml"), EXPERIMENT, "0.1.0")
    seq = 0
    for ctrl in CONTROLLERS:
        for topology in TOPOLOGIES:
            for size in SIZES:
                for rep in range(1, REPETITIONS + 1):
                    params = {"size_bytes": size, "openflow": "1.0", "controller_kind": ctrl}
                    key = f"{ctrl}|{topology}|udp-cbr|{size}|{rep}"
                    env = {"kernel": "6.1.0-test", "datapath": "netdev", "controller": ctrl, "switch": "ovs"}
                    if (ctrl, topology, size) == ALL_FAILED or ((ctrl, topology, size) == ONE_FAILED and rep == 1):
                        store.save_trial(TrialRecord(key, ctrl, topology, "udp-cbr", params, rep, seq, "failed",
                                                     "controller did not start", environment=env))
                        seq += 1
                        continue
                    error = "sender could not hold the requested rate" if (
                        (ctrl, topology, size) == FLAGGED and rep == 2) else None
                    truth = means(ctrl, topology, size)
                    for m in truth:
                        truth[m] *= (planted or {}).get((ctrl, topology, size, m), 1.0)
                    metrics = {m: rng.gauss(v, v * SPREAD) for m, v in truth.items()}
                    metrics["owd_min_ms"], metrics["owd_max_ms"] = metrics["owd_p50_ms"] * 0.5, metrics["owd_p99_ms"] * 2
                    metrics["owd_p90_ms"] = (metrics["owd_p50_ms"] + metrics["owd_p99_ms"]) / 2
                    series = [{"t_s": float(t), "throughput_bps": rng.gauss(truth["throughput_bps"], 1000),
                               "owd_mean_ms": rng.gauss(truth["owd_mean_ms"], truth["owd_mean_ms"] * 0.1)}
                              for t in range(SECONDS)]
                    events = [{"t_unix": 0.0, "t_s": 2.0, "kind": "kill_controller"},
                              {"t_unix": 1.0, "t_s": 2.9 + 0.1 * rep, "kind": "switches_reconnected"}] \
                        if (ctrl, topology, size) == FAULTED else []
                    store.save_trial(TrialRecord(key, ctrl, topology, "udp-cbr", params, rep, seq, "ok", error,
                                                 timings={"host_cpu_max_pct": rng.gauss(40, 1.2)}, environment=env),
                                     [FlowResult("f0:h1->h8", "native", metrics, series)], events=events)
                    seq += 1
    if nbi:
        seq = _northbound(store, rng, seq)
    if sbi:
        _southbound(store, rng, seq)
    store.close()
    return path


def _northbound(store: ResultStore, rng: random.Random, seq: int) -> int:
    """A load phase and a DoS phase whose attack runs from 2 s to 6 s, for two controllers, 2 repetitions."""
    for ctrl in ("ryu", "osken"):
        for phase in ("load", "dos"):
            for rep in (1, 2):
                rate = 100.0 if phase == "load" else 40.0
                series = [{"t_s": float(t), "throughput_rps": rng.gauss(rate, 2), "failed": 0.0 if t < 2 else 5.0,
                           "latency_p50_ms": rng.gauss(5, 0.2)} for t in range(8)]
                metrics = {"throughput_rps": rate, "error_rate_pct": 0.0 if phase == "load" else 10.0,
                           "latency_p50_ms": 5.0}
                raw = {"attack0.json": json.dumps({"planned_start_s": 2.0, "planned_stop_s": 6.0})} if phase == "dos" \
                    else {}
                store.save_trial(TrialRecord(f"{ctrl}|linear-2|api|{phase}|{rep}", ctrl, "linear-2", "api",
                                             {"phase": phase, "openflow": "1.3"}, rep, seq, "ok"),
                                 [FlowResult("api", "sdnbench-apiload", metrics, series, raw)])
                seq += 1
    return seq


def _southbound(store: ResultStore, rng: random.Random, seq: int) -> None:
    """Southbound rates and latency percentiles at 1 and 8 emulated switches, OpenFlow 1.0 and 1.3."""
    for ctrl, of in (("osken", "1.3"), ("pox", "1.0")):
        for switches in (1, 8):
            for rep in (1, 2, 3):
                rate = (15000 if ctrl == "osken" else 23000) * (1 + 0.02 * switches)
                metrics = {"responses_per_s_mean": rng.gauss(rate, rate * SPREAD), "latency_p50_us": 500.0,
                           "latency_p90_us": 900.0, "latency_p99_us": 4000.0, "valid": 1.0}
                series = [{"t_s": float(t), "responses_per_s": rng.gauss(rate, 300)} for t in range(3)]
                store.save_trial(TrialRecord(f"{ctrl}|-|setup|{switches}|{rep}", ctrl, "-", "setup",
                                             {"switches": switches, "openflow": of}, rep, seq, "ok"),
                                 [FlowResult("ofload", "sdnbench-ofload", metrics, series)])
                seq += 1
