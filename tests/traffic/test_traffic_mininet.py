"""The engines on real Mininet hosts (the production HostHandle): exact counts over a direct link."""

from __future__ import annotations

import secrets
import shutil

import pytest

from netns_host import can_build
from sdnbench.workloads.traffic.base import FlowSpec
from sdnbench.workloads.traffic.registry import make_engine

mininet_net = pytest.importorskip("mininet.net", reason="Mininet not installed (apt-get install mininet)")

pytestmark = [pytest.mark.netns, pytest.mark.skipif(can_build() is not None, reason=str(can_build()))]

TOOLS = ("ITGSend", "ITGRecv", "ITGDec", "iperf3", "ping", "ss", "mnexec")


@pytest.mark.skipif(any(shutil.which(t) is None for t in TOOLS), reason=f"needs {', '.join(TOOLS)}")
def test_engines_on_mininet_hosts(tmp_path):
    tag = secrets.token_hex(2)
    net = mininet_net.Mininet(topo=None, controller=None, build=False)
    try:
        a = net.addHost(f"sbtr{tag}a", ip="10.250.0.1/24")
        b = net.addHost(f"sbtr{tag}b", ip="10.250.0.2/24")
        net.addLink(a, b)
        net.build()
        for h in (a, b):
            h.cmd(f"ethtool -K {h.defaultIntf()} tx off rx off tso off gso off gro off")
        hosts = {"h1": a, "h2": b}
        runs = {
            "ditg": [FlowSpec("d", "h1", "h2", "udp", size_bytes=200, rate_pps=200, count=300)],
            "iperf3": [FlowSpec("i", "h1", "h2", "udp", size_bytes=200, rate_pps=200, count=300)],
            "ping": [FlowSpec("p", "h2", "h1", "icmp", count=10, rate_pps=20)],
        }
        for engine, flows in runs.items():
            [result] = make_engine(engine).run(flows, hosts, tmp_path / engine)
            m, n = result.metrics, flows[0].count
            assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"]) == (n, n, 0), engine
            assert result.raw, engine
    finally:
        net.stop()
