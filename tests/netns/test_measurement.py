"""Measurements through real emulated networks, checked against ground truth."""

from __future__ import annotations

import pytest

from sdnbench.emulation.network import EmulatedNetwork
from sdnbench.manifest import Manifest
from sdnbench.topology import build_topology
from sdnbench.workloads.traffic.base import FlowSpec
from sdnbench.workloads.traffic.registry import engine_class, make_engine

from .helpers import leftovers

pytestmark = pytest.mark.netns


def _engine_or_skip(name):
    avail = engine_class(name).availability()
    if not avail.ok:
        pytest.skip(f"{name}: {avail.detail}")
    return make_engine(name)


@pytest.fixture
def network(request, tmp_path):
    """A started standalone network from the test's topology spec."""
    graph = build_topology(request.param)
    net = EmulatedNetwork(graph, Manifest(tmp_path / "run"), fail_mode="standalone")
    try:
        net.start()
        hosts = [h.name for h in graph.hosts]
        assert net.reachability([(hosts[0], hosts[-1]), (hosts[-1], hosts[0])]) == []
        yield net
    finally:
        net.stop()
        assert leftovers(graph) == []


@pytest.mark.parametrize("network", [{"kind": "linear", "switches": 3, "hosts_per_switch": 1}], indirect=True)
def test_known_packet_count_arrives_exactly_on_idle_network(network, tmp_path):
    """2,000 UDP packets over three userspace switches: all counted, none lost."""
    engine = _engine_or_skip("ditg")
    flow = FlowSpec("f0", "h1", "h3", "udp", size_bytes=512, rate_pps=1000, count=2000, meter="owd")
    [res] = engine.run([flow], network.hosts, tmp_path)
    assert res.metrics["tx_pkts"] == 2000
    assert res.metrics["rx_pkts"] == 2000
    assert res.metrics["loss_pkts"] == 0
    assert 0 < res.metrics["owd_mean_ms"] < 50


@pytest.mark.parametrize("network", [{"kind": "linear", "switches": 2, "hosts_per_switch": 1,
                                      "core_link": {"bw_mbps": 10}}], indirect=True)
def test_shaped_link_bounds_tcp_throughput(network, tmp_path):
    """A 10 Mbit/s HTB-shaped core link gives TCP goodput within 10% of 10 Mbit/s."""
    engine = _engine_or_skip("iperf3")
    flow = FlowSpec("f0", "h1", "h2", "tcp", duration_s=5)
    [res] = engine.run([flow], network.hosts, tmp_path)
    # Goodput sits a few percent under the L2 rate (Ethernet, IP and TCP headers).
    assert res.metrics["throughput_bps"] == pytest.approx(10e6, rel=0.10)
