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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import __version__, calibration
from ..config.loader import Experiment
from ..controllers import make_adapter
from ..emulation.lock import NetworkLock
from ..emulation.network import EmulatedNetwork
from ..errors import SdnbenchError
from ..manifest import Manifest
from ..procs import ProcessTracker
from ..results.shards import refuse_unsharded_resume
from ..results.store import ResultStore
from . import registry
from .environment import fingerprint
from .observer import CampaignObserver, Observers
from .plan import Trial, estimate_seconds, expand
from .shard import Shard, claim
from .trial import Testbed, record, run_trial


@dataclass
class Progress:
    """One line per trial with counts and the time left; on a terminal, also a progress bar below them.

    The bar (tqdm) is drawn only when stderr is a terminal and lines go to the default output, so logs,
    pipes and tests keep exactly the lines.
    """

    total: int
    out: Callable[[str], None] | None = None
    done: int = 0
    started: float = field(default_factory=time.monotonic)
    stream: Any = None      # where the bar and default lines go (sys.stderr)
    observer: CampaignObserver = field(default_factory=CampaignObserver)   # told of each trial's start and end
    bar: Any = field(default=None, init=False, repr=False)

    def __post_init__(self):
        self.stream = self.stream or sys.stderr
        if self.out is None:
            if self.stream.isatty() and self.total:
                from tqdm import tqdm

                # smoothing=0: time left from the mean trial time so far, as the lines say it
                self.bar = tqdm(total=self.total, file=self.stream, unit="trial", smoothing=0, dynamic_ncols=True,
                                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} trials [{elapsed} elapsed, "
                                           "{remaining} left]")
                self.out = lambda line: self.bar.write(line, file=self.stream)   # above the bar
            else:
                self.out = self._print

    def start(self, trial: Trial) -> None:
        """A trial begins (only observers hear of it)."""
        self.observer.trial_started(trial)

    def trial(self, trial: Trial, status: str, seconds: float, summary: str = "") -> None:
        """Report a finished trial."""
        self.done += 1
        self.observer.trial_ended(trial, status, seconds, summary)
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done)
        point = " ".join(f"{k}={v}" for k, v in trial.sweep_point.items())
        self.out(f"[{self.done}/{self.total}] {trial.controller.label} {trial.topology} "
                 f"{trial.workload['name']} {point} rep {trial.repetition}: {status} "
                 f"({seconds:.1f} s{', ' + summary if summary else ''}) ~{left:.0f} s left")
        if self.bar is not None:
            self.bar.update(1)
            if self.done >= self.total:
                self.bar.close()
                self.bar, self.out = None, self._print

    def note(self, message: str) -> None:
        """A line about setup or teardown."""
        self.out(f"  {message}")

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)


class CampaignStopped(SdnbenchError):
    """The testbed broke and the experiment says `on_failure: stop`."""


class Terminated(BaseException):
    """SIGTERM, turned into an exception so cleanup runs (BaseException, like KeyboardInterrupt,
    so that no handler of ordinary errors mistakes it for a failed trial)."""


def run_campaign(exp: Experiment, rundir: Path, resume: bool = False,
                 progress_out: Callable[[str], None] | None = None,
                 after_group: Callable[[list[Trial]], None] | None = None,
                 observer: CampaignObserver | None = None, shard: Shard | None = None) -> ResultStore:
    """Run (or resume) every trial of exp into rundir; returns the open store.

    after_group is called with each group's trials once its network and controller are gone
    (the soak checks for leaks there); observer hears of each trial's start and end (the dashboard);
    shard limits the run to the groups dealt to it (and is recorded in the store)."""
    rundir.mkdir(parents=True, exist_ok=True)
    store = ResultStore.in_rundir(rundir)
    store.save_campaign(exp.name, str(exp.path), exp.path.read_text(), __version__)
    trials = expand(exp)
    if shard is not None:
        trials = claim(store, exp, trials, shard, resume, rundir, progress_out)
    elif resume:
        refuse_unsharded_resume(store.conn, rundir)
    done = store.done_keys() if resume else set()
    todo = [t for t in trials if t.key not in done]
    observer = Observers(observer)
    progress = Progress(len(todo), progress_out, observer=observer)
    progress.note(f"{len(trials)} trials, {len(trials) - len(todo)} already stored, "
                  f"~{estimate_seconds(todo, exp.restart, exp.cooldown_s):.0f} s estimated; results in {rundir}")
    manifest = Manifest(rundir)
    registry.register(rundir)
    old_term = signal.signal(signal.SIGTERM, raise_terminated)
    # Ctrl-C must clean up even when started from a shell that left SIGINT ignored (`cmd &`).
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    # One campaign at a time per machine: networks share interface names, controllers ports.
    lock = NetworkLock()
    observer.campaign_started(rundir, len(todo), len(trials) - len(todo))
    try:
        lock.acquire(say=progress.note)
        for group in _groups(todo, exp.restart):
            _run_group(exp, group, rundir, manifest, store, progress)
            if after_group is not None:
                after_group(group)
    finally:
        observer.campaign_ended()
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
        net = _network(exp, first.graph, manifest, spec.openflow, fail_mode, first.switch)
        spec.options["datapaths"] = net.ports()
    else:
        spec.options["datapaths"] = _emulated_switches(trials)
    # Emulated switches: adapters that write their own config (Faucet) make it benchmark-suitable.
    spec.options["southbound"] = not first.needs_network
    env = fingerprint(net.datapath if net else "none (emulated switches)")
    env.update(net.describe() if net else {})
    missing = net.switch_availability() if net else None
    if missing is not None and not missing.ok:   # its rows only: the other switch kinds still run
        adapter.stop()
        _skip(trials, store, env, progress, f"skipped: {first.switch} switches: {missing.detail}; fix: {missing.fix}")
        return
    setup_t0 = time.monotonic()
    try:
        env["controller"] = spec.kind
        env["controller_version"] = adapter.version()
        controller_dir = rundir / "controllers" / f"{spec.label}-{first.topology}"
        if not adapter.standalone:
            adapter.start(controller_dir)
        if net is not None:
            net.start()
            env.update(net.describe())      # again: parts that fell back while starting say why
            if not adapter.standalone:
                adapter.connect(net, exp.network["connect_timeout_s"])
                env.update(adapter.network_ready(net))
            _check_reachable(net, trials)
        env["controller_endpoints"] = adapter.endpoints()
        setup_s = time.monotonic() - setup_t0
        what = f"{first.graph.summary()}, {net.datapath} datapath" if net else "southbound load"
        progress.note(f"{spec.label} on {first.topology}: {what}, ready in {setup_s:.1f} s")
        bed = Testbed(net, adapter, rundir, store, env, controller_dir,
                      calibration.data_plane_key(net.describe()) if net else None)
        for i, trial in enumerate(trials):
            outcome = run_trial(trial, bed, progress, setup_s if i == 0 else 0.0)
            if outcome.broken and i + 1 < len(trials):
                if not outcome.planned and exp.on_failure == "stop":
                    raise CampaignStopped(f"{spec.label} on {first.topology}: {outcome.broken} "
                                          f"(on_failure: stop)")
                if not outcome.planned and exp.on_failure == "skip_group":
                    _skip(trials[i + 1:], store, env, progress, f"skipped: {outcome.broken} in trial {trial.seq + 1}")
                    break
                progress.note(f"restoring the testbed: {outcome.broken}")
                mend(bed, exp.network["connect_timeout_s"])
            if exp.cooldown_s and i + 1 < len(trials):
                time.sleep(exp.cooldown_s)
    except (KeyboardInterrupt, Terminated):
        progress.note("interrupted: cleaning up the network and controller")
        raise KeyboardInterrupt from None
    except CampaignStopped:
        raise
    except SdnbenchError as exc:
        progress.note(f"{spec.label} on {first.topology} failed: {exc}")
        stored = {t.key for t in store.trials()}
        _skip([t for t in trials if t.key not in stored], store, env, progress, str(exc))
    finally:
        if net is not None:
            net.stop()
        adapter.stop()
        tracker.stop_all()


def _network(exp: Experiment, graph, manifest: Manifest, openflow: str, fail_mode: str, switch: str):
    """The group's network: on this machine, or spread over the cluster's workers (experimental)."""
    if exp.cluster:
        from ..emulation.cluster.network import ClusterNetwork

        return ClusterNetwork(graph, manifest, exp.cluster, exp.network["datapath"], openflow, fail_mode, lock=False)
    return EmulatedNetwork(graph, manifest, exp.network["datapath"], openflow, fail_mode,
                           lock=False, switch=switch, links=exp.network["links"])


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


def _skip(trials: list[Trial], store: ResultStore, env: dict, progress: Progress, why: str) -> None:
    """Store trials that will not run as failed, with why."""
    for trial in trials:
        store.save_trial(record(trial, "failed", why, env, {}))
        progress.trial(trial, "failed", 0.0, why.splitlines()[0][:80])


def mend(bed: Testbed, connect_timeout_s: float) -> None:
    """Bring a broken testbed back: restart a dead or deaf controller, reconnect every switch."""
    adapter, net = bed.adapter, bed.net
    if adapter.standalone:
        return
    restarted = bool(adapter.health())
    if restarted:
        adapter.stop()
        adapter.start(bed.controller_dir)
    # After a restart, point every switch at the controller afresh rather than trust sessions that
    # OVS may have opened while the new process was still starting up.
    if net is not None and (restarted or {s.name for s in net.graph.switches} - net.connected_switches()):
        adapter.connect(net, connect_timeout_s)
        if restarted:   # a proactive controller programs its network again (OpenDaylight)
            adapter.network_ready(net)
