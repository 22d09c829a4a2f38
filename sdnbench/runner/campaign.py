"""Run a campaign: for each group, start controller and network, run its trials, store each.

Nothing measured is lost: every trial is committed to the store as soon as it
ends; a failed trial is stored as failed with its error, and `--resume` runs
only what is not stored as ok. Ctrl-C or SIGTERM stop the current trial,
clean up the network and controller, and leave the store consistent.
"""

from __future__ import annotations

import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import __version__
from ..config.loader import Experiment
from ..controllers import make_adapter
from ..emulation.lock import NetworkLock
from ..emulation.network import EmulatedNetwork
from ..errors import SdnbenchError
from ..manifest import Manifest
from ..procs import ProcessTracker
from ..results.store import ResultStore, TrialRecord, UncataloguedMetric
from ..workloads.base import TrialContext
from . import registry
from .environment import fingerprint
from .monitor import CpuMonitor
from .plan import Trial, estimate_seconds, expand


@dataclass
class Progress:
    """Prints one line per trial with counts and the time left."""

    total: int
    out: Callable[[str], None] = field(default=lambda m: print(m, file=sys.stderr, flush=True))
    done: int = 0
    started: float = field(default_factory=time.monotonic)

    def trial(self, trial: Trial, status: str, seconds: float, summary: str = "") -> None:
        """Report a finished trial."""
        self.done += 1
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done)
        point = " ".join(f"{k}={v}" for k, v in trial.sweep_point.items())
        self.out(f"[{self.done}/{self.total}] {trial.controller.label} {trial.topology} "
                 f"{trial.workload['name']} {point} rep {trial.repetition}: {status} "
                 f"({seconds:.1f} s{', ' + summary if summary else ''}) ~{left:.0f} s left")

    def note(self, message: str) -> None:
        """A line about setup or teardown."""
        self.out(f"  {message}")


class Terminated(BaseException):
    """SIGTERM, turned into an exception so cleanup runs (BaseException, like KeyboardInterrupt,
    so that no handler of ordinary errors mistakes it for a failed trial)."""


def run_campaign(exp: Experiment, rundir: Path, resume: bool = False,
                 progress_out: Callable[[str], None] | None = None) -> ResultStore:
    """Run (or resume) every trial of exp into rundir; returns the open store."""
    rundir.mkdir(parents=True, exist_ok=True)
    store = ResultStore.in_rundir(rundir)
    store.save_campaign(exp.name, str(exp.path), exp.path.read_text(), __version__)
    trials = expand(exp)
    done = store.done_keys() if resume else set()
    todo = [t for t in trials if t.key not in done]
    progress = Progress(len(todo)) if progress_out is None else Progress(len(todo), progress_out)
    progress.note(f"{len(trials)} trials, {len(trials) - len(todo)} already stored, "
                  f"~{estimate_seconds(todo, exp.restart, exp.cooldown_s):.0f} s estimated; results in {rundir}")
    manifest = Manifest(rundir)
    registry.register(rundir)
    old_term = signal.signal(signal.SIGTERM, raise_terminated)
    # Ctrl-C must clean up even when started from a shell that left SIGINT ignored (`cmd &`).
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    # One campaign at a time per machine: networks share interface names, controllers ports.
    lock = NetworkLock()
    lock.acquire(say=progress.note)
    try:
        for group in _groups(todo, exp.restart):
            _run_group(exp, group, rundir, manifest, store, progress)
    finally:
        lock.release()
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGINT, old_int)
        if not manifest.outstanding():
            registry.unregister(rundir)
    return store


def raise_terminated(signum, frame):
    """SIGTERM handler: raise Terminated so cleanup runs."""
    raise Terminated()


def _groups(trials: list[Trial], restart: str) -> list[list[Trial]]:
    """Consecutive trials that share one network and controller instance."""
    def key(t: Trial):
        return (t.group, t.repetition if restart == "per_repetition" else 0)


    groups: list[list[Trial]] = []
    for t in trials:
        if groups and key(groups[-1][0]) == key(t):
            groups[-1].append(t)
        else:
            groups.append([t])
    return groups


def _run_group(exp: Experiment, trials: list[Trial], rundir: Path, manifest: Manifest,
               store: ResultStore, progress: Progress) -> None:
    first = trials[0]
    spec = first.controller
    tracker = ProcessTracker(manifest)
    adapter = make_adapter(spec, tracker)
    net = None
    if first.needs_network:
        fail_mode = "standalone" if adapter.standalone else (spec.fail_mode or exp.network["fail_mode"])
        net = EmulatedNetwork(first.graph, manifest, exp.network["datapath"], spec.openflow, fail_mode,
                              lock=False, switch=exp.network["switch"], links=exp.network["links"])
        spec.options["datapaths"] = net.ports()
    else:
        spec.options["datapaths"] = _emulated_switches(trials)
    # Emulated switches: adapters that write their own config (Faucet) make it benchmark-suitable.
    spec.options["southbound"] = not first.needs_network
    env = fingerprint(net.datapath if net else "none (emulated switches)")
    env.update(net.describe() if net else {})
    setup_t0 = time.monotonic()
    try:
        env["controller"] = spec.kind
        env["controller_version"] = adapter.version()
        if not adapter.standalone:
            adapter.start(rundir / "controllers" / f"{spec.label}-{first.topology}")
        if net is not None:
            net.start()
            if not adapter.standalone:
                net.attach_controller(adapter.endpoints()["openflow"], exp.network["connect_timeout_s"])
                env.update(adapter.network_ready(net))
            _check_reachable(net, trials)
        env["controller_endpoints"] = adapter.endpoints()
        setup_s = time.monotonic() - setup_t0
        what = f"{first.graph.summary()}, {net.datapath} datapath" if net else "southbound load"
        progress.note(f"{spec.label} on {first.topology}: {what}, ready in {setup_s:.1f} s")
        for i, trial in enumerate(trials):
            _run_trial(trial, net, adapter, rundir, store, progress, env, setup_s if i == 0 else 0.0)
            if exp.cooldown_s and i + 1 < len(trials):
                time.sleep(exp.cooldown_s)
    except (KeyboardInterrupt, Terminated):
        progress.note("interrupted: cleaning up the network and controller")
        raise KeyboardInterrupt from None
    except SdnbenchError as exc:
        progress.note(f"{spec.label} on {first.topology} failed: {exc}")
        stored = store.done_keys()
        for trial in trials:
            if trial.key not in stored:
                store.save_trial(_record(trial, "failed", str(exc), env, {}))
                progress.trial(trial, "failed", 0.0, str(exc).splitlines()[0][:80])
    finally:
        if net is not None:
            net.stop()
        adapter.stop()
        tracker.stop_all()


def _emulated_switches(trials: list[Trial]) -> dict[int, int]:
    """dpid -> ports of the switches the group's workloads emulate themselves (no network built)."""
    out: dict[int, int] = {}
    for wtype in {id(t.wtype): t.wtype for t in trials}.values():
        for dpid, ports in wtype.emulated_switches([t for t in trials if t.wtype is wtype]).items():
            out[dpid] = max(ports, out.get(dpid, 0))
    return out


def _check_reachable(net: EmulatedNetwork, trials: list[Trial]) -> None:
    """Host pairs the workloads need (every flow's endpoints) must reach each other before measuring."""
    pairs = sorted({pair for t in trials for pair in t.wtype.reachability_pairs(t)})
    failed = net.reachability(pairs + [(b, a) for a, b in pairs])
    if failed:
        raise SdnbenchError("hosts not reachable: " + ", ".join(f"{a}->{b}" for a, b in failed[:8]))


def _record(trial: Trial, status: str, error: str | None, env: dict, timings: dict,
            started: float | None = None) -> TrialRecord:
    return TrialRecord(trial.key, trial.controller.label, trial.topology, trial.workload["name"],
                       trial.params(), trial.repetition, trial.seq, status, error, started, time.time(),
                       timings, env)


def _run_trial(trial: Trial, net: EmulatedNetwork | None, adapter, rundir: Path, store: ResultStore,
               progress: Progress, env: dict, setup_s: float) -> None:
    workdir = rundir / "trials" / f"{trial.seq:05d}"
    workdir.mkdir(parents=True, exist_ok=True)
    started, t0 = time.time(), time.monotonic()
    try:
        with CpuMonitor(adapter.pids()) as mon:
            t_measure = time.monotonic()
            results, tool_env = trial.wtype.run(trial, TrialContext(net, adapter, workdir, store))
            measure_s = time.monotonic() - t_measure
    except SdnbenchError as exc:
        store.save_trial(_record(trial, "failed", str(exc), env, {"setup_s": setup_s}, started))
        progress.trial(trial, "failed", time.monotonic() - t0, str(exc).splitlines()[0][:100])
        return
    except Exception as exc:  # a bug, not a measurement: keep it with the trial and go on
        store.save_trial(_record(trial, "failed", f"internal error: {exc!r}", env, {"setup_s": setup_s}, started),
                         raw={"traceback": traceback.format_exc()})
        progress.trial(trial, "failed", time.monotonic() - t0, f"internal error: {exc!r}"[:100])
        return
    finally:
        for host in (net.hosts.values() if net else ()):
            host.reap()
    timings = {"setup_s": setup_s, "traffic_s": measure_s, "trial_s": time.monotonic() - t0,
               "expected_traffic_s": trial.expected_seconds(), **mon.result()}
    errors = [e for r in results for e in r.errors]
    try:
        store.save_trial(_record(trial, "ok", "; ".join(errors) or None, {**env, **tool_env}, timings, started),
                         results)
    except UncataloguedMetric as exc:   # a bug: keep the trial as failed and go on
        store.save_trial(_record(trial, "failed", f"internal error: {exc}", env, timings, started))
        progress.trial(trial, "failed", timings["trial_s"], f"internal error: {exc}"[:100])
        return
    progress.trial(trial, "ok", timings["trial_s"], trial.wtype.headline(results))
