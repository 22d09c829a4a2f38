"""A run being written: trials stored one by one through the ResultStore API, with known series values,
and the campaign's observer told of each start and end as a real campaign does."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

from sdnbench.results.store import ResultStore, TrialRecord
from sdnbench.workloads.base import FlowResult

EXPERIMENT = """\
name: live
repetitions: 2
controllers: [{kind: osken}, {kind: ryu}]
topologies: [{kind: single, hosts: 2}]
workloads:
  - name: udp-cbr
    flows: [{src: first, dst: last, proto: udp, rate_pps: 1000, duration_s: 3}]
"""
PLAN = [("osken", 1), ("ryu", 1), ("osken", 2), ("ryu", 2)]
SECONDS = 3


def throughput(ctrl: str, rep: int, t: int) -> float:
    """The known throughput point of a trial at second t."""
    return (1e6 if ctrl == "osken" else 2e6) + 1000 * rep + 10 * t


def plan_trial(ctrl: str, rep: int, seq: int):
    """What the observer is told about (the fields of runner.plan.Trial it reads)."""
    return SimpleNamespace(key=f"{ctrl}|single-2|udp-cbr||{rep}", controller=SimpleNamespace(label=ctrl),
                           topology="single-2", workload={"name": "udp-cbr"}, sweep_point={}, repetition=rep,
                           seq=seq, expected_seconds=lambda: float(SECONDS))


def start_run(rundir: Path) -> ResultStore:
    """The store of a new run with its experiment (open it in the thread that writes trials)."""
    rundir.mkdir(parents=True, exist_ok=True)
    store = ResultStore.in_rundir(rundir)
    store.save_campaign("live", str(rundir / "live.yaml"), EXPERIMENT, "0.1.0")
    return store


def write_trial(store: ResultStore, seq: int, observer=None, run_s: float = 0.0) -> None:
    """Run (pretend) and store trial seq of PLAN, telling observer as the campaign would."""
    ctrl, rep = PLAN[seq]
    trial = plan_trial(ctrl, rep, seq)
    if observer:
        observer.trial_started(trial)
    started = time.time()
    time.sleep(run_s)
    series = [{"t_s": float(t), "throughput_bps": throughput(ctrl, rep, t), "owd_mean_ms": 0.1 * (t + 1)}
              for t in range(SECONDS)]
    metrics = {"throughput_bps": sum(p["throughput_bps"] for p in series) / SECONDS, "owd_mean_ms": 0.2,
               "loss_pct": 0.0}
    store.save_trial(TrialRecord(trial.key, ctrl, "single-2", "udp-cbr", {"openflow": "1.3"}, rep, seq, "ok", None,
                                 started, max(time.time(), started + SECONDS), {"host_cpu_max_pct": 30.0},
                                 {"controller": ctrl}),
                     [FlowResult("f0:h1->h2", "native", metrics, series)])
    if observer:
        observer.trial_ended(trial, "ok", time.time() - started, "throughput 1 Mbit/s")
