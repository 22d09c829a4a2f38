"""The ovs_fast data plane on real Open vSwitch: what controllers see and what arrives is what the
`ovs` kind gives, shaping still holds, and nothing outlives the network (not even after SIGKILL)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from sdnbench.controllers import ADAPTERS
from sdnbench.controllers.base import ControllerSpec
from sdnbench.emulation import ovs
from sdnbench.emulation.network import EmulatedNetwork, port_plan
from sdnbench.manifest import Manifest
from sdnbench.topology import build_topology
from sdnbench.workloads.traffic.base import FlowSpec
from sdnbench.workloads.traffic.registry import engine_class, make_engine

from .helpers import all_pairs, controlled_network, free_port, leftovers

pytestmark = pytest.mark.netns

CASES = [("osken", "1.3"), ("ryu", "1.3"), ("faucet", "1.3"), ("testcontroller", "1.0"), ("pox", "1.0"),
         ("odl", "1.3")]


def _engine_or_skip(name):
    avail = engine_class(name).availability()
    if not avail.ok:
        pytest.skip(f"{name}: {avail.detail}")
    return make_engine(name)


def _ofports(graph) -> dict[str, int]:
    """Interface name -> OpenFlow port number, as Open vSwitch has them."""
    names = [f"{node}-eth{port}" for (a, b), ports in port_plan(graph).items()
             for node, port in zip((a, b), ports) if node.startswith("s")]
    return {name: row["ofport"] for name, row in ovs.interface_columns(names, ["ofport"]).items()}


def _expected_ports(graph) -> dict[str, int]:
    return {f"{node}-eth{port}": port for (a, b), ports in port_plan(graph).items()
            for node, port in zip((a, b), ports) if node.startswith("s")}


@pytest.fixture
def standalone(request, tmp_path):
    """A started standalone ovs_fast network from the test's topology spec."""
    graph = build_topology(request.param)
    net = EmulatedNetwork(graph, Manifest(tmp_path / "run"), fail_mode="standalone", switch="ovs_fast")
    try:
        net.start()
        yield net
    finally:
        net.stop()
    assert leftovers(graph) == [] and Manifest(tmp_path / "run").outstanding() == []


@pytest.mark.parametrize("kind,openflow", CASES, ids=[f"{k}-of{v}" for k, v in CASES])
def test_controller_sees_the_same_switches_and_every_packet_arrives(kind, openflow, tmp_path):
    """Same dpids and port numbers as `ovs`; every host pair reachable; 2,000 UDP packets, all there."""
    avail = ADAPTERS[kind].availability()
    if not avail.ok:
        pytest.skip(f"{kind}: {avail.detail}")
    engine = _engine_or_skip("native")
    graph = build_topology({"kind": "tree", "depth": 2, "fanout": 2})
    spec = ControllerSpec(kind=kind, label=kind, openflow=openflow, port=free_port(),
                          rest_port=free_port() if kind == "odl" else None)
    with controlled_network(spec, graph, tmp_path, switch="ovs_fast") as (net, adapter):
        adapter.network_ready(net)      # OpenDaylight: proactive forwarding; the others: nothing to do
        desc = net.describe()
        assert desc["switch_links"] == "patch 2/2" and "dataplane_fallbacks" not in desc, desc
        assert _ofports(graph) == _expected_ports(graph)
        assert {s.name: int(ovs.vsctl(["get", "bridge", s.name, "other_config:datapath-id"]).strip('"\n'), 16)
                for s in graph.switches} == {s.name: s.dpid for s in graph.switches}
        assert net.reachability(all_pairs(graph), timeout_s=30) == []
        flow = FlowSpec("f0", "h1", "h4", "udp", size_bytes=512, rate_pps=1000, count=2000)
        [res] = engine.run([flow], net.hosts, tmp_path / "traffic")
        assert (res.metrics["tx_pkts"], res.metrics["rx_pkts"], res.metrics["loss_pkts"]) == (2000, 2000, 0)


@pytest.mark.parametrize("standalone", [{"kind": "spine_leaf", "spines": 2, "leaves": 3, "hosts_per_leaf": 1},
                                        {"kind": "grid", "rows": 2, "columns": 3, "hosts_per_switch": 1}],
                         indirect=True, ids=["spine_leaf", "grid"])
def test_standalone_switches_on_loops_are_built_as_ovs_builds_them(standalone):
    """RSTP over patch ports aborts ovs-vswitchd 3.1: loops of standalone switches keep veths and
    system ports (and say so), and RSTP blocks the loop: every pair answers, no storm."""
    desc = standalone.describe()
    assert (desc["switch_links"], desc["host_ports"]) == ("veth", "system") and "RSTP" in desc["dataplane_fallbacks"]
    assert standalone.reachability(all_pairs(standalone.graph), timeout_s=40) == []
    assert _ofports(standalone.graph) == _expected_ports(standalone.graph)


@pytest.mark.parametrize("standalone", [{"kind": "linear", "switches": 3, "hosts_per_switch": 1}], indirect=True)
def test_tcp_does_not_stall_and_a_patch_link_goes_down_and_up(standalone, tmp_path):
    engine = _engine_or_skip("native")
    net = standalone
    assert net.reachability([("h1", "h3"), ("h3", "h1")]) == []
    [res] = engine.run([FlowSpec("t0", "h1", "h3", "tcp", duration_s=2)], net.hosts, tmp_path / "tcp")
    assert res.metrics["throughput_bps"] > 50e6, res.metrics
    net.set_link("s1", "s2", up=False)
    assert net.reachability([("h1", "h3")], timeout_s=2) == [("h1", "h3")]
    net.set_link("s1", "s2", up=True)
    assert net.reachability([("h1", "h3")], timeout_s=20) == []
    assert _ofports(net.graph) == _expected_ports(net.graph)


@pytest.mark.parametrize("standalone", [{"kind": "linear", "switches": 2, "hosts_per_switch": 1,
                                         "core_link": {"bw_mbps": 10}}], indirect=True)
def test_shaped_link_still_bounds_tcp(standalone, tmp_path):
    """The shaped core link stays a veth with HTB: 10 Mbit/s holds within 10 %."""
    assert standalone.describe()["switch_links"] == "veth"
    engine = _engine_or_skip("iperf3")
    assert standalone.reachability([("h1", "h2"), ("h2", "h1")]) == []
    [res] = engine.run([FlowSpec("f0", "h1", "h2", "tcp", duration_s=5)], standalone.hosts, tmp_path)
    assert res.metrics["throughput_bps"] == pytest.approx(10e6, rel=0.10)


KILLED = """
import sys, time
from pathlib import Path
from sdnbench.emulation.network import EmulatedNetwork
from sdnbench.manifest import Manifest
from sdnbench.topology import build_topology
graph = build_topology({"kind": "tree", "depth": 2, "fanout": 2})
EmulatedNetwork(graph, Manifest(Path(sys.argv[1])), fail_mode="standalone", switch="ovs_fast").start()
print("up", flush=True)
time.sleep(600)
"""


def test_sigkill_then_clean_removes_bridges_interfaces_and_settings(tmp_path):
    """A run killed mid-network leaves bridges, AF_XDP ports and the pinned poll-mode thread;
    `sdnbench clean` removes every one and puts Open vSwitch's settings back."""
    graph = build_topology({"kind": "tree", "depth": 2, "fanout": 2})
    before = {key: ovs.other_config(key) for key in ("pmd-cpu-mask", "pmd-maxsleep")}
    rundir = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(rundir)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "up"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    held = {r["kind"] for r in Manifest(rundir).outstanding()}
    assert {"bridge", "ovs_setting"} <= held
    res = subprocess.run([sys.executable, "-m", "sdnbench", "clean", str(rundir)], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert leftovers(graph) == [] and Manifest(rundir).outstanding() == []
    assert {key: ovs.other_config(key) for key in before} == before
    links = json.loads(subprocess.run(["ip", "-j", "link"], capture_output=True, text=True).stdout)
    assert not [ln["ifname"] for ln in links if "xdp" in ln and ln["ifname"].split("-eth")[0] in ("s1", "s2", "s3")]
