"""Ground truth between two namespaces joined by one veth pair: counts, shaped rate, dropped packets."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from netns_host import can_build, drop_every, veth_pair
from sdnbench.errors import ToolError
from sdnbench.workloads.traffic.base import FlowSpec
from sdnbench.workloads.traffic.ditg import DitgEngine
from sdnbench.workloads.traffic.iperf3 import Iperf3Engine
from sdnbench.workloads.traffic.ping import PingEngine
from sdnbench.workloads.traffic.runner import listening_ports
from sdnbench.procs import wait_for

pytestmark = [pytest.mark.netns, pytest.mark.skipif(can_build() is not None, reason=str(can_build()))]


def needs(*tools: str):
    missing = [t for t in tools if shutil.which(t) is None]
    return pytest.mark.skipif(bool(missing), reason=f"{', '.join(missing)} not installed")


def hosts_of(pair) -> dict:
    return {h.name: h for h in pair}


def ns_pids(pair) -> list[str]:
    """PIDs still running inside the pair's namespaces (must be none after an engine call)."""
    out = []
    for h in pair:
        out += subprocess.run(["ip", "netns", "pids", h.ns], capture_output=True, text=True).stdout.split()
    return out


@needs("ITGSend", "ITGRecv", "ITGDec", "ss")
def test_ditg_counts_udp_flows_exactly(tmp_path):
    flows = [FlowSpec("owd", "h1", "h2", "udp", size_bytes=100, rate_pps=250, count=500),
             FlowSpec("rtt", "h1", "h2", "udp", size_bytes=64, rate_pps=200, count=300, meter="rtt"),
             FlowSpec("back", "h2", "h1", "tcp", size_bytes=500, rate_pps=100, count=150)]
    with veth_pair() as pair:
        results = {r.flow_id: r for r in DitgEngine().run(flows, hosts_of(pair), tmp_path)}
        assert ns_pids(pair) == []
    for flow in flows:
        m = results[flow.flow_id].metrics
        assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"]) == (flow.count, flow.count, 0), flow.flow_id
        assert m["bytes"] == flow.count * flow.size_bytes
    assert 0 < results["owd"].metrics["owd_min_ms"] <= results["owd"].metrics["owd_mean_ms"]
    rtt = results["rtt"].metrics
    assert rtt["rtt_mean_ms"] > rtt["owd_mean_ms"] > 0 and rtt["rtt_min_ms"] >= rtt["owd_min_ms"]
    assert results["owd"].series and "owd.ditg.recv.txt" in results["owd"].raw
    assert (tmp_path / "owd.ditg.recv.log").exists()


@needs("ITGSend", "ITGRecv", "ITGDec", "ss", "nft")
def test_ditg_sees_every_kth_packet_dropped(tmp_path):
    n, k, port = 300, 10, 7777
    with veth_pair() as (h1, h2):
        drop_every(h2, k, f"udp dport {port}")
        [result] = DitgEngine().run([FlowSpec("lossy", "h1", "h2", "udp", size_bytes=64, rate_pps=300,
                                              count=n, port=port)], {"h1": h1, "h2": h2}, tmp_path)
    m = result.metrics
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"]) == (n, n - n // k, n // k)
    assert m["loss_pct"] == pytest.approx(100.0 / k)
    assert sum(row["loss_pkts"] for row in result.series) == n // k


@needs("iperf3", "ss")
def test_iperf3_udp_count_arrives_complete(tmp_path):
    n = 1000
    with veth_pair() as pair:
        [result] = Iperf3Engine().run([FlowSpec("u", "h1", "h2", "udp", size_bytes=200, rate_pps=500, count=n)],
                                      hosts_of(pair), tmp_path)
        assert ns_pids(pair) == []
    m = result.metrics
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"]) == (n, n, 0)
    assert m["bytes"] == n * 200
    assert sum(row["rx_pkts"] for row in result.series) == n


@needs("iperf3", "ss", "tc")
def test_iperf3_tcp_fills_a_shaped_link(tmp_path):
    rate_mbit = 10
    with veth_pair(rate_mbit=rate_mbit) as pair:
        [result] = Iperf3Engine().run([FlowSpec("t", "h1", "h2", "tcp", duration_s=5)], hosts_of(pair), tmp_path)
    bps = result.metrics["throughput_bps"]
    assert bps == pytest.approx(rate_mbit * 1e6, rel=0.10), f"{bps / 1e6:.2f} Mbit/s"
    assert len(result.series) >= 4


@needs("ping")
def test_ping_gets_every_reply(tmp_path):
    n = 20
    with veth_pair() as pair:
        [result] = PingEngine().run([FlowSpec("p", "h1", "h2", "icmp", count=n, rate_pps=20, size_bytes=200)],
                                    hosts_of(pair), tmp_path)
    m = result.metrics
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"]) == (n, n, 0)
    assert 0 < m["rtt_min_ms"] <= m["rtt_mean_ms"] <= m["rtt_max_ms"]


@needs("ping", "nft")
def test_ping_sees_every_kth_request_dropped(tmp_path):
    n, k = 20, 4
    with veth_pair() as (h1, h2):
        drop_every(h2, k, "icmp type echo-request")
        [result] = PingEngine().run([FlowSpec("p", "h1", "h2", "icmp", count=n, rate_pps=20)],
                                    {"h1": h1, "h2": h2}, tmp_path)
    m = result.metrics
    assert (m["tx_pkts"], m["rx_pkts"], m["loss_pkts"]) == (n, n - n // k, n // k)


@needs("ping")
def test_a_hung_tool_is_killed_and_named(tmp_path):
    flow = FlowSpec("slow", "h1", "h2", "icmp", count=100, rate_pps=5, options={"timeout_s": 1})
    with veth_pair() as pair:
        with pytest.raises(ToolError, match=r"ping .*'slow'.*still running"):
            PingEngine().run([flow], hosts_of(pair), tmp_path)
        assert ns_pids(pair) == []


@needs("ITGSend", "ITGRecv", "ITGDec", "ss")
def test_ditg_failure_names_tool_and_flow(tmp_path):
    # ITGRecv cannot open a data port that another socket already listens on.
    with veth_pair() as (h1, h2):
        blocker = h2.popen(["python3", "-c", "import socket, time; s = socket.socket(); "
                            "s.bind(('', 7000)); s.listen(); time.sleep(60)"])
        try:
            assert wait_for(lambda: 7000 in listening_ports(h2), 10)
            flow = FlowSpec("clash", "h1", "h2", "tcp", size_bytes=100, rate_pps=10, count=10, port=7000)
            with pytest.raises(ToolError, match=r"ditg \(sender\) for flow 'clash'.*Error on bind"):
                DitgEngine().run([flow], {"h1": h1, "h2": h2}, tmp_path)
        finally:
            blocker.kill()
            blocker.wait()
        assert ns_pids((h1, h2)) == []
