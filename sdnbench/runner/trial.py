"""Run one trial: its workload, with the testbed's health watched and its faults injected.

The trial is stored the moment it ends. It is `ok` only if the controller
lived through it, its port listened and every switch stayed connected (outside
the outages its own fault schedule planned); otherwise it is stored as failed
with what broke, when, and the tail of the controller's log, and the caller
decides from `TrialOutcome.broken` how to go on.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..emulation.links.base import LinkWindow
from ..errors import SdnbenchError
from ..faults import FaultInjector, FaultRun, flow_fault_metrics
from ..results.store import ResultStore, TrialRecord, UncataloguedMetric
from ..workloads.base import FlowResult, TrialContext
from .health import HealthWatch, testbed_problems
from .monitor import CpuMonitor
from .plan import Trial
from .saturation import invalid_reasons

#: Seconds after a planned outage ends during which problems still count as part of it
#: (switch sessions come back within OVS's 1 s reconnect backoff).
OUTAGE_GRACE_S = 3.0


@dataclass
class Testbed:
    """What a group's trials run on."""

    net: object | None          # EmulatedNetwork, or None for workloads without a network
    adapter: object             # the controller's ControllerAdapter
    rundir: Path
    store: ResultStore
    env: dict                   # the environment record every trial of the group starts from
    controller_dir: Path        # where the controller writes its logs (also on restarts)
    data_plane: str | None = None   # calibration.data_plane_key of the network, for its envelopes


@dataclass
class TrialOutcome:
    """How a trial ended, and whether the testbed needs mending before the next one."""

    status: str                  # ok | failed
    broken: str | None = None    # what is wrong with the controller or switches now
    planned: bool = False        # broken by the trial's own fault schedule (always mended)


def record(trial: Trial, status: str, error: str | None, env: dict, timings: dict,
           started: float | None = None) -> TrialRecord:
    """The store's record of a trial."""
    return TrialRecord(trial.key, trial.controller.label, trial.topology, trial.workload["name"],
                       trial.params(), trial.repetition, trial.seq, status, error, started, time.time(),
                       timings, env)


def _northbound(trial: Trial, adapter) -> str | None:
    """host:port of the REST endpoint a northbound workload needs answering, else None."""
    if not trial.wtype.uses_northbound:
        return None
    url = adapter.endpoints().get("rest") or adapter.endpoints().get("prometheus")
    parts = urlsplit(url) if url else None
    return f"{parts.hostname}:{parts.port or 80}" if parts and parts.hostname else None


def run_trial(trial: Trial, bed: Testbed, progress, setup_s: float) -> TrialOutcome:
    """Run, judge and store one trial."""
    workdir = bed.rundir / "trials" / f"{trial.seq:05d}"
    workdir.mkdir(parents=True, exist_ok=True)
    started, t0 = time.time(), time.monotonic()
    progress.start(trial)
    adapter, net, store = bed.adapter, bed.net, bed.store
    before = testbed_problems(adapter, net, northbound=_northbound(trial, adapter))
    if before:
        why = "testbed not ready: " + "; ".join(before)
        store.save_trial(record(trial, "failed", why, bed.env, {"setup_s": setup_s}, started),
                         raw=_log(adapter))
        progress.trial(trial, "failed", 0.0, why[:100])
        return TrialOutcome("failed", broken=why)
    faults = FaultInjector(trial.workload.get("faults") or [], net, adapter, bed.controller_dir)
    links = net.link_window() if net else LinkWindow()   # e.g. the link emulator's lateness
    try:
        with CpuMonitor(adapter.pids) as mon, links, faults, \
                HealthWatch(adapter, net, expected=lambda t: faults.run.in_outage(t, OUTAGE_GRACE_S)) as watch:
            t_measure = time.monotonic()
            results, tool_env = trial.wtype.run(trial, TrialContext(net, adapter, workdir, store))
            measure_s = time.monotonic() - t_measure
    except SdnbenchError as exc:
        return _failed(trial, bed, str(exc), started, t0, setup_s, progress, faults.run)
    except Exception as exc:  # a bug, not a measurement: keep it with the trial and go on
        return _failed(trial, bed, f"internal error: {exc!r}", started, t0, setup_s, progress, faults.run,
                       {"traceback": traceback.format_exc()})
    finally:
        for host in (net.hosts.values() if net else ()):
            host.reap()
    timings = {"setup_s": setup_s, "traffic_s": measure_s, "trial_s": time.monotonic() - t0,
               "expected_traffic_s": trial.expected_seconds(), **mon.result()}
    results += _fault_results(faults.run, results) + _link_results(links)
    left_down = any(end is None for _, end in faults.run.outages)   # e.g. killed and never restarted
    after = [] if left_down else testbed_problems(adapter, net, identity=watch.identity)
    broken = watch.unexpected() + [f"after the trial: {p}" for p in after] + faults.run.errors
    if broken:
        return _failed(trial, bed, "testbed failed during the trial: " + "; ".join(broken), started, t0,
                       setup_s, progress, faults.run, timings=timings)
    errors = [e for r in results for e in r.errors]
    ok = record(trial, "ok", "; ".join(errors) or None, {**bed.env, **tool_env}, timings, started)
    ok.invalid = invalid_reasons(trial, results, timings, bed.data_plane)
    try:
        store.save_trial(ok, results, events=faults.run.events)
    except UncataloguedMetric as exc:   # a bug: keep the trial as failed and go on
        return _failed(trial, bed, f"internal error: {exc}", started, t0, setup_s, progress, faults.run)
    mark = f" [not valid: {ok.invalid[0]}]" if ok.invalid else ""
    progress.trial(trial, "ok", timings["trial_s"], trial.wtype.headline(results) + mark)
    if left_down:
        return TrialOutcome("ok", broken="the fault schedule left the controller down", planned=True)
    return TrialOutcome("ok")


def _failed(trial: Trial, bed: Testbed, why: str, started: float, t0: float, setup_s: float, progress,
            run: FaultRun, raw: dict | None = None, timings: dict | None = None) -> TrialOutcome:
    """Store trial as failed with why, the controller's log tail and the events so far."""
    bed.store.save_trial(record(trial, "failed", why, bed.env, timings or {"setup_s": setup_s}, started),
                         raw={**_log(bed.adapter), **(raw or {})}, events=run.events)
    progress.trial(trial, "failed", time.monotonic() - t0, why.splitlines()[0][:120])
    problems = testbed_problems(bed.adapter, bed.net)
    return TrialOutcome("failed", broken="; ".join(problems) or None)


def _log(adapter) -> dict[str, str]:
    tail = adapter.log_tail()
    return {"controller.log.tail": tail} if tail else {}


def _link_results(window: LinkWindow) -> list[FlowResult]:
    """The link realisation's own measurements as one result; its problems become the trial's error note."""
    if not (window.metrics or window.problems):
        return []
    return [FlowResult("links", window.engine, window.metrics, raw=dict(window.raw), clock="",
                       errors=list(window.problems))]


def _fault_results(run: FaultRun, results: list[FlowResult]) -> list[FlowResult]:
    """Recovery metrics on each flow, and one result with the trial's reconnection time."""
    if run.first_fault is None:
        return []
    for r in results:
        gap_end = r.timestamps.get("longest_gap_end")
        r.metrics.update(flow_fault_metrics(run, r.metrics.get("longest_gap_ms"), gap_end))
    if not run.reconnect_ms:
        return []
    return [FlowResult("faults", "sdnbench", {"reconnect_ms": max(run.reconnect_ms)}, clock="")]
