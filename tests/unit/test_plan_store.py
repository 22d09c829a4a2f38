"""Grid expansion, trial identity, and the store's one-transaction-per-trial contract."""

from pathlib import Path

import pytest

from sdnbench.config.loader import parse_experiment
from sdnbench.errors import ConfigError
from sdnbench.manifest import Manifest, outstanding
from sdnbench.results.store import ResultStore, TrialRecord
from sdnbench.runner.plan import estimate_seconds, expand, sweep_points
from sdnbench.workloads.traffic.base import FlowResult

EXP = """\
name: grid
repetitions: 3
controllers: [{kind: osken}, {kind: testcontroller}]
topologies: [{kind: single, hosts: 4}, {kind: linear, switches: 3}]
workloads:
  - name: udp
    flows: [{src: first, dst: last, proto: udp, rate_pps: 100, count: 500}]
    sweep: {size_bytes: [128, 1024]}
"""


def exp(text=EXP):
    return parse_experiment(text, Path("e.yaml"))


def test_grid_size_and_order():
    trials = expand(exp())
    assert len(trials) == 2 * 2 * 2 * 3
    assert len({t.key for t in trials}) == len(trials)
    # network reused: all trials of one controller x topology are consecutive
    groups = [t.group for t in trials]
    assert groups == sorted(groups, key=groups.index)
    first = trials[0]
    assert first.flows[0].src == "h1" and first.flows[0].dst == "h4"
    assert trials[6].topology == "linear-3" and trials[6].flows[0].dst == "h3"


def test_southbound_trials_need_no_network():
    text = EXP + "  - {name: sb, type: sbi, loops: 3, ms_per_loop: 500, warmup_loops: 1, sweep: {switches: [1, 8]}}\n"
    trials = expand(exp(text))
    sb = [t for t in trials if t.workload["type"] == "sbi"]
    assert len(sb) == 2 * 2 * 3                       # controllers x switch counts x repetitions
    assert {t.topology for t in sb} == {"-"} and not any(t.needs_network for t in sb)
    assert sb[0].expected_seconds() == 2.0 and sb[1].setting("switches") == 8


def test_sweep_points_cartesian():
    assert sweep_points({"a": [1, 2], "b": ["x", "y", "z"]})[4] == {"a": 2, "b": "y"}
    assert sweep_points({}) == [{}]


def test_estimate_counts_traffic_and_overheads():
    trials = expand(exp())
    # 24 trials x 5 s of traffic (500 packets at 100/s) dominate the estimate
    assert estimate_seconds(trials) >= 24 * 5


def test_estimate_includes_a_slow_controllers_start_up():
    """OpenDaylight's 45-100 s boot counts once per group it starts in, not the 4 s of a Python one."""
    fast = estimate_seconds(expand(exp()))
    slow = estimate_seconds(expand(exp(EXP.replace("{kind: testcontroller}", "{kind: odl, openflow: '1.3'}"))))
    assert slow - fast >= 2 * 60          # two OpenDaylight groups (single-4, linear-3)


def test_unknown_host_is_a_config_error():
    with pytest.raises(ConfigError, match="no host 'h9'"):
        expand(exp(EXP.replace("dst: last", "dst: h9")))


def test_store_is_atomic_per_trial_and_resumable(tmp_path):
    store = ResultStore.in_rundir(tmp_path)
    rec = TrialRecord("k1", "osken", "single-4", "udp", {"size_bytes": 128}, 1, 0, "ok")
    flow = FlowResult("f0", "ditg", {"loss_pct": 0.0, "owd_mean_ms": 0.5},
                      [{"t_s": 1.0, "throughput_bps": 1e6}], {"f0.log": "raw"})
    store.save_trial(rec, [flow])
    bad = FlowResult("f0", "ditg", {"loss_pct": 1.0}, [], {"f0.log": "x"})
    bad.raw = None  # makes the insert fail halfway
    with pytest.raises(Exception):
        store.save_trial(TrialRecord("k2", "osken", "single-4", "udp", {}, 2, 1, "ok"), [bad])
    reopened = ResultStore.in_rundir(tmp_path)
    assert reopened.done_keys() == {"k1"}
    assert reopened.metrics("k1") == {"f0": {"loss_pct": 0.0, "owd_mean_ms": 0.5}}
    assert reopened.series("k1", "f0") == [(1.0, "throughput_bps", 1e6)]
    assert reopened.raw("k1") == {"f0.log": "raw"}


def test_manifest_outstanding_survives_a_cut_line(tmp_path):
    m = Manifest(tmp_path)
    m.created("bridge", "s1")
    m.created("bridge", "s2")
    m.released("bridge", "s1")
    with open(m.path, "a") as f:
        f.write('{"event": "created", "kind": "brid')   # SIGKILL mid-write
    assert [r["name"] for r in outstanding(m.path)] == ["s2"]


def test_series_export_names_each_point(tmp_path):
    from sdnbench.cli import main

    store = ResultStore.in_rundir(tmp_path)
    store.save_trial(TrialRecord("k1", "osken", "single-4", "udp", {"size_bytes": 128, "openflow": "1.3"}, 1, 0, "ok"),
                     [FlowResult("f0", "native", {}, [{"t_s": 0.1, "throughput_bps": 5.0, "jitter_ms": 0.2}])])
    out = tmp_path / "series.csv"
    assert main(["results", str(tmp_path), "--series", str(out), "--metric", "throughput_bps"]) == 0
    assert out.read_text().splitlines()[1:] == ["osken,single-4,udp,size_bytes=128,1,f0,0.1,throughput_bps,bit/s,5.0"]


def test_southbound_datapaths_cover_every_emulated_switch():
    from sdnbench.workloads.types.sbi import WORKLOAD as sbi

    text = EXP + ("  - {name: sb, type: sbi, sweep: {switches: [1, 8]}}\n"
                  "  - {name: topo, type: sbi, topology_aware: true}\n")
    trials = expand(exp(text))
    plain = [t for t in trials if t.workload["type"] == "sbi" and not t.workload["topology_aware"]]
    assert sbi.emulated_switches(plain) == {i: 4 for i in range(1, 9)}
    linear = [t for t in trials if t.workload["name"] == "topo" and t.topology == "linear-3"]
    assert sbi.emulated_switches(linear) == {1: 4, 2: 4, 3: 4}   # middle switch: 2 host ports + 2 links
