"""A trial is ok only if its testbed lived through it; faults injected on purpose are measured.

Real controllers and Open vSwitch: the controller is SIGKILLed, a switch is cut off and a
traffic tool hangs, each behind sdnbench's back, and the campaign must store that trial as
failed with the reason, mend the testbed and measure the next trial as usual.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from sdnbench.config.loader import parse_experiment
from sdnbench.controllers import ADAPTERS
from sdnbench.manifest import Manifest
from sdnbench.runner.campaign import CampaignStopped, run_campaign

from .helpers import free_port, leftovers

pytestmark = pytest.mark.netns

EXPERIMENT = """\
name: faults
repetitions: {reps}
openflow: "1.3"
controllers: [{{kind: {controller}, port: {port}}}]
topologies: [{{kind: linear, switches: 2}}]
workloads:
{workloads}
cooldown_s: 0
{extra}
"""
FLOW = "      - {proto: udp, rate_pps: 500, size_bytes: 128, duration_s: 4}\n"


def experiment(tmp_path: Path, controller="osken", reps=2, workloads=None, extra=""):
    if not ADAPTERS[controller].availability().ok:
        pytest.skip(f"{controller} not installed (make controllers)")
    workloads = workloads or "  - name: udp\n    flows:\n" + FLOW
    text = EXPERIMENT.format(reps=reps, controller=controller, workloads=workloads, extra=extra, port=free_port())
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    return parse_experiment(text, path)


class AfterReady(threading.Thread):
    """Does `act` once, `delay_s` after the campaign's first group is ready (its progress note)."""

    def __init__(self, delay_s: float, act):
        super().__init__(daemon=True)
        self.delay_s, self.act, self.ready = delay_s, act, threading.Event()
        self.lines: list[str] = []
        self.error: Exception | None = None

    def progress(self, line: str) -> None:
        self.lines.append(line)
        if "ready in" in line:
            self.ready.set()

    def run(self) -> None:
        if self.ready.wait(900):   # another run may hold the machine's network lock for a while
            time.sleep(self.delay_s)
            try:
                self.act()
            except Exception as exc:   # reported by the test
                self.error = exc


def controller_pid(rundir: Path) -> int:
    [rec] = [r for r in Manifest(rundir).outstanding() if str(r.get("role", "")).startswith("controller:")]
    return int(rec["name"])


def run(exp, rundir: Path, actor: AfterReady):
    actor.start()
    store = run_campaign(exp, rundir, progress_out=actor.progress)
    actor.join(5)
    assert actor.error is None, actor.error
    return store, store.trials()


def assert_clean(exp, rundir: Path):
    from sdnbench.runner.plan import expand

    assert Manifest(rundir).outstanding() == []
    assert leftovers(expand(exp)[0].graph) == []


@pytest.mark.parametrize("controller", ["osken", "ryu"])
def test_sigkill_mid_trial_fails_that_trial_and_the_next_runs_on_a_restarted_controller(tmp_path, controller):
    exp = experiment(tmp_path, controller)
    rundir = tmp_path / "run"
    killed = {}
    actor = AfterReady(1.5, lambda: killed.update(pid=controller_pid(rundir)) or os.kill(killed["pid"], signal.SIGKILL))
    store, trials = run(exp, rundir, actor)
    assert [t.status for t in trials] == ["failed", "ok"], [t.error for t in trials]
    assert "was killed by SIGKILL" in trials[0].error and f"PID {killed['pid']}" in trials[0].error
    assert "controller.log.tail" in store.raw(trials[0].key)
    assert any("restoring the testbed" in line for line in actor.lines)
    [flow] = store.metrics(trials[1].key).values()
    assert flow["rx_pkts"] == 2000 and flow["loss_pct"] == 0.0    # a whole, healthy second trial
    assert_clean(exp, rundir)


def test_switch_cut_off_mid_trial_is_detected_and_reconnected(tmp_path):
    exp = experiment(tmp_path)
    rundir = tmp_path / "run"
    actor = AfterReady(1.5, lambda: subprocess.run(["ovs-vsctl", "del-controller", "s2"], check=True))
    store, trials = run(exp, rundir, actor)
    assert [t.status for t in trials] == ["failed", "ok"], [t.error for t in trials]
    assert "switches not connected to the controller: s2" in trials[0].error
    assert_clean(exp, rundir)


def test_a_hung_tool_is_stopped_at_its_deadline_and_fails_its_trial_only(tmp_path):
    workloads = ("  - name: hangs\n    engine: ditg\n    flows:\n"
                 "      - {proto: udp, rate_pps: 500, duration_s: 6, options: {timeout_s: 1}}\n"
                 "  - name: udp\n    flows:\n" + FLOW)
    exp = experiment(tmp_path, reps=1, workloads=workloads)
    rundir = tmp_path / "run"
    t0 = time.monotonic()
    store = run_campaign(exp, rundir, progress_out=lambda line: None)
    statuses = {t.workload: (t.status, t.error) for t in store.trials()}
    assert statuses["hangs"][0] == "failed" and "still running after 1.0 s (killed)" in statuses["hangs"][1]
    assert statuses["udp"] == ("ok", None)
    assert time.monotonic() - t0 < 60
    assert_clean(exp, rundir)


def test_on_failure_stop_ends_the_campaign(tmp_path):
    exp = experiment(tmp_path, reps=3, extra="on_failure: stop")
    rundir = tmp_path / "run"
    actor = AfterReady(1.5, lambda: os.kill(controller_pid(rundir), signal.SIGKILL))
    with pytest.raises(CampaignStopped, match="on_failure: stop"):
        run(exp, rundir, actor)
    from sdnbench.results.store import ResultStore

    assert [t.status for t in ResultStore.in_rundir(rundir).trials()] == ["failed"]
    assert_clean(exp, rundir)


def test_injected_restart_is_measured_not_failed(tmp_path):
    workloads = ("  - name: restart\n    flows:\n"
                 "      - {proto: udp, rate_pps: 500, size_bytes: 128, duration_s: 5}\n"
                 "    faults:\n"
                 "      - {at_s: 1.5, action: kill_controller}\n"
                 "      - {at_s: 2.5, action: restart_controller}\n"
                 "      - {at_s: 3, action: link_down, link: [s1, s2]}\n"
                 "      - {at_s: 3.5, action: link_up, link: [s1, s2]}\n")
    exp = experiment(tmp_path, reps=1, workloads=workloads)
    rundir = tmp_path / "run"
    store = run_campaign(exp, rundir, progress_out=lambda line: None)
    [trial] = store.trials()
    assert trial.status == "ok", trial.error
    kinds = [e["kind"] for e in store.events(trial.key)]
    assert kinds == ["kill_controller", "restart_controller", "switches_reconnected", "link_down", "link_up"]
    metrics = store.metrics(trial.key)
    assert 0 < metrics["faults"]["reconnect_ms"] < 10_000
    [flow] = [m for k, m in metrics.items() if k != "faults"]
    # The link was down for about 0.5 s (each `ip link` call takes its own time): some 250 packets of
    # 2,500 lost, and a silence about that long.
    assert flow["longest_gap_ms"] >= 300 and 100 <= flow["loss_pkts"] <= 600
    assert "recovery_ms" in flow and "forwarded_during_fault" in flow
    events = {e["kind"]: e["t_s"] for e in store.events(trial.key)}
    assert 1.4 < events["kill_controller"] < 2.0 and events["restart_controller"] > events["kill_controller"]
    assert json.loads(json.dumps(store.events(trial.key)))   # plain data
    assert_clean(exp, rundir)
