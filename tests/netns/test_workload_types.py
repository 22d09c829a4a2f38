"""Southbound and northbound workloads through the command line, against real controllers."""

from __future__ import annotations

import json
import sqlite3

import pytest

from sdnbench.controllers import ADAPTERS
from sdnbench.paths import native_tool

from .helpers import free_port
from .test_cli_run import sdnbench

pytestmark = pytest.mark.netns


def need(*kinds_and_tools):
    for name in kinds_and_tools:
        if name in ADAPTERS:
            if not ADAPTERS[name].availability().ok:
                pytest.skip(f"{name} not installed (make controllers)")
        elif native_tool(name) is None:
            pytest.skip(f"{name} not built (make build)")


def run_experiment(tmp_path, text: str):
    """Write an experiment, run it through the CLI into tmp_path/run; returns (rundir, result)."""
    exp = tmp_path / "exp.yaml"
    exp.write_text(text)
    rundir = tmp_path / "run"
    res = sdnbench("run", str(exp), "--out", str(rundir))
    assert res.returncode == 0, res.stderr
    return rundir, res


def rows(rundir, metric):
    return {(r["controller"], r["params"]): r for r in json.loads((rundir / "summary.json").read_text())
            if r["metric"] == metric}


def test_southbound_load_on_osken_reference_app(tmp_path):
    """16 emulated switches against os-ken's L2 app: a steady, non-zero rate, every PACKET_IN answered."""
    need("osken", "sdnbench-ofload")
    rundir, res = run_experiment(tmp_path, f"""\
name: sbi
repetitions: 2
openflow: "1.3"
controllers: [{{kind: osken, port: {free_port()}, app: l2_flow_every_packet_in}}]
workloads:
  - {{name: setup, type: sbi, switches: 16, macs_per_switch: 100, loops: 3, ms_per_loop: 1000}}
cooldown_s: 0
""")
    rate = rows(rundir, "responses_per_s_mean")[("osken", "")]
    assert rate["n"] == 2 and rate["min"] > 100
    assert rate["sd"] < 0.5 * rate["mean"]                       # stable across repetitions
    matched = rows(rundir, "matched_per_s_mean")[("osken", "")]
    assert matched["mean"] > 0
    for metric in ("unmatched", "decode_errors"):
        assert rows(rundir, metric)[("osken", "")]["max"] == 0
    assert rows(rundir, "switches_connected")[("osken", "")]["min"] == 16


def test_southbound_load_on_faucet_uses_its_pipeline_profile(tmp_path):
    """Faucet answers emulated switches once its adapter's profile shapes the PACKET_INs, in both modes."""
    need("faucet", "sdnbench-ofload")
    rundir, res = run_experiment(tmp_path, f"""\
name: sbi-faucet
repetitions: 1
openflow: "1.3"
controllers: [{{kind: faucet, port: {free_port()}}}]
workloads:
  - name: setup
    type: sbi
    switches: 4
    macs_per_switch: 100
    loops: 3
    ms_per_loop: 1000
    sweep: {{mode: [throughput, latency]}}
cooldown_s: 0
""")
    for mode in ("mode=throughput", "mode=latency"):
        assert rows(rundir, "matched_per_s_mean")[("faucet", mode)]["mean"] > 20
        for metric in ("unmatched", "timeouts", "decode_errors"):
            assert rows(rundir, metric)[("faucet", mode)]["max"] == 0, (mode, metric)
        assert rows(rundir, "switches_connected")[("faucet", mode)]["min"] == 4
    config = next((rundir / "controllers").glob("*/faucet-faucet.yaml")).read_text()
    assert "ignore_learn_ins: 0" in config and "# Southbound load" in config
    with sqlite3.connect(rundir / "results.db") as db:
        argv = [json.loads(r[0]) for r in db.execute("SELECT environment FROM trial")]
    assert argv and all("--vlan" in e["engine_argv"] and "1000000" in e["engine_argv"] for e in argv)


def test_topology_aware_southbound_load_sets_up_paths_on_osken_shortest_path(tmp_path):
    """Emulated switches wired as a 2x3 grid (with loops): os-ken's LLDP discovery sees it, and
    the shortest_path app installs flows along multi-hop paths that ofload times (--paths)."""
    need("osken", "sdnbench-ofload")
    rundir, res = run_experiment(tmp_path, f"""\
name: sbi-paths
repetitions: 1
openflow: "1.3"
controllers: [{{kind: osken, port: {free_port()}, app: shortest_path}}]
topologies: [{{kind: grid, rows: 2, columns: 3}}]
workloads:
  - {{name: paths, type: sbi, topology_aware: true, mode: latency, macs_per_switch: 100, loops: 3,
      ms_per_loop: 1000, paths: true}}
cooldown_s: 0
""")
    [(key, completed)] = rows(rundir, "paths_completed").items()
    assert completed["min"] > 0
    setup = rows(rundir, "path_setup_p50_us")[key]
    assert setup["min"] > 0 and rows(rundir, "path_setup_p99_us")[key]["min"] >= setup["min"]
    assert rows(rundir, "switches_connected")[key]["min"] == 6
    assert rows(rundir, "unmatched")[key]["max"] == 0


def test_northbound_load_then_overload_reads_the_load_result(tmp_path):
    """The overload phase runs at 2x the throughput the load phase measured, per controller."""
    need("ryu", "faucet", "sdnbench-apiload")
    rundir, res = run_experiment(tmp_path, f"""\
name: nbi
repetitions: 1
controllers:
  - {{kind: ryu, port: {free_port()}, rest_port: {free_port()}}}
  - {{kind: faucet, port: {free_port()}}}
topologies: [{{kind: linear, switches: 2}}]
workloads:
  - name: api
    type: nbi
    stages: ["const:50rps:3s"]
    overload: {{multiple: 2, duration_s: 3}}
cooldown_s: 0
""")
    target = rows(rundir, "target_rps")
    thr = rows(rundir, "throughput_rps")
    for ctrl in ("ryu", "faucet"):
        load = thr[(ctrl, "phase=load")]["mean"]
        assert 45 <= load <= 50.5                                 # 150 requests in 3 s, all answered
        assert target[(ctrl, "phase=overload")]["mean"] == pytest.approx(2 * load, rel=0.05)
    with sqlite3.connect(rundir / "results.db") as db:
        assert db.execute("SELECT count(*) FROM series WHERE name = 'throughput_rps'").fetchone()[0] >= 4 * 3


def test_dos_phase_floods_inside_the_network_and_gets_an_outcome(tmp_path):
    """A DoS phase: the flood is counted, the API keeps being measured, and an outcome is derived."""
    need("ryu", "sdnbench-apiload")
    rundir, res = run_experiment(tmp_path, f"""\
name: dos
repetitions: 1
controllers: [{{kind: ryu, port: {free_port()}, rest_port: {free_port()}}}]
topologies: [{{kind: single, hosts: 3}}]
workloads:
  - name: api
    type: nbi
    stages: ["const:50rps:3s"]
    dos: {{kind: newflows, sources: [h1], target: h3, rate_pps: 1000}}
    attack_duration_s: 4
cooldown_s: 0
""")
    sent = rows(rundir, "attack_pkts_sent")[("ryu", "phase=dos")]["mean"]
    assert 3000 <= sent <= 4100                                 # 1,000 packets/s for 4 s
    assert rows(rundir, "target_rps")[("ryu", "phase=dos")]["mean"] == pytest.approx(
        rows(rundir, "throughput_rps")[("ryu", "phase=load")]["mean"], rel=0.05)
    assert "stress outcomes" in res.stdout and "DoS" in res.stdout
