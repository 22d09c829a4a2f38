"""bmv2 P4 switches on real emulated networks, controlled by sdnbench's P4Runtime controller: every host
pair reachable on topologies with loops, a known packet count arriving exactly, and the same flow through
Open vSwitch and P4 in one table. Skips with the install advice where simple_switch_grpc is absent."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sdnbench.controllers import ADAPTERS
from sdnbench.controllers.base import ControllerSpec
from sdnbench.emulation.switches import SWITCHES
from sdnbench.topology import build_topology
from sdnbench.workloads.traffic.base import FlowSpec
from sdnbench.workloads.traffic.registry import make_engine

from .helpers import all_pairs, controlled_network, skip_unless_built

pytestmark = pytest.mark.netns

LOOPS = [{"kind": "spine_leaf", "spines": 2, "leaves": 4, "hosts_per_leaf": 2},
         {"kind": "grid", "rows": 3, "columns": 3, "hosts": 8}]


@pytest.fixture(autouse=True)
def bmv2():
    """Skip (with how to install it) where bmv2 or the P4Runtime client is missing."""
    cap = SWITCHES.get("p4").availability()
    if not cap.ok:
        pytest.skip(f"{cap.detail}; {cap.fix}")
    avail = ADAPTERS["p4rt"].availability()
    if not avail.ok:
        pytest.skip(f"{avail.detail}; {avail.fix}")


def p4rt(mode: str) -> ControllerSpec:
    return ControllerSpec(kind="p4rt", label=f"p4rt-{mode}", app=mode)


@pytest.mark.parametrize("mode", ["learning", "proactive"])
@pytest.mark.parametrize("spec", LOOPS, ids=lambda s: s["kind"])
def test_every_host_pair_is_reachable_through_p4_switches(spec, mode, tmp_path):
    graph = build_topology(spec)
    with controlled_network(p4rt(mode), graph, tmp_path, switch="p4") as (net, adapter):
        assert net.connected_switches() == {s.name for s in graph.switches}
        assert net.reachability(all_pairs(graph), timeout_s=60) == []
        facts = adapter.network_ready(net)
        assert facts["p4rt_mode"] == mode and facts["p4rt_programming_s"] > 0
        assert net.describe()["switch"] == "p4" and net.describe()["bmv2_version"] != "?"


def test_a_known_packet_count_arrives_exactly(tmp_path):
    skip_unless_built("sdnbench-tgen")
    graph = build_topology(LOOPS[0])
    with controlled_network(p4rt("proactive"), graph, tmp_path, switch="p4") as (net, _):
        assert net.reachability([("h1", "h8"), ("h8", "h1")], timeout_s=30) == []
        flow = FlowSpec("f0", "h1", "h8", "udp", size_bytes=256, rate_pps=500, count=2000)
        [res] = make_engine("native").run([flow], net.hosts, tmp_path / "flow")
        assert res.metrics["tx_pkts"] == 2000 and res.metrics["rx_pkts"] == 2000
        assert res.metrics["loss_pct"] == 0


EXPERIMENT = """\
name: ovs-vs-p4
repetitions: 1
controllers:
  - kind: osken
    app: shortest_path          # loops: l2_learning would storm
  - kind: p4rt
    app: proactive
topologies:
  - {kind: spine_leaf, spines: 2, leaves: 2, hosts_per_leaf: 1}
network:
  switch: [ovs, p4]
workloads:
  - name: udp
    flows:
      - {src: first, dst: last, proto: udp, rate_pps: 200, count: 400, size_bytes: 256}
cooldown_s: 0
"""


def test_the_same_flow_through_ovs_and_p4_lands_in_one_table(tmp_path):
    skip_unless_built("sdnbench-tgen")
    if not ADAPTERS["osken"].availability().ok:
        pytest.skip("osken not installed (make controllers)")
    path = tmp_path / "exp.yaml"
    path.write_text(EXPERIMENT)
    rundir = tmp_path / "run"
    res = subprocess.run([sys.executable, "-m", "sdnbench", "run", str(path), "--out", str(rundir)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    rows = json.loads((rundir / "summary.json").read_text())
    rx = {(r["controller"], r["topology"]): r["mean"] for r in rows if r["metric"] == "rx_pkts"}
    assert rx == {("osken", "spine_leaf-2x2-ovs"): 400, ("p4rt", "spine_leaf-2x2-p4"): 400}
    assert "spine_leaf-2x2-ovs" in res.stdout and "spine_leaf-2x2-p4" in res.stdout
